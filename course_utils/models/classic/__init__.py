"""Language models before recurrence: n-grams, the feed-forward (Bengio) LM, the window masked LM, and the sentiment
classifier built on their embeddings (notebook 04).

- ``neural_lm``: The feed-forward (Bengio) language model, in the slides' steps.
- ``ngram``: Counting language models: N-grams with no smoothing, add-k smoothing, or interpolated Kneser-Ney.
- ``sentiment``: Sentiment classification with a feed-forward net: hand-built features against learned embeddings.
- ``window_mlm``: Masked-word prediction with a fixed window, the lecture's "masked language modelling with a DNN".
"""
