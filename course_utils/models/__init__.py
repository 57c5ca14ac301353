"""The models wing: the nn.Modules and from-scratch algorithms the notebooks build and print, one family a folder.
It imports the language wing and the core, never anything above it (evaluation, zoo, analysis, widgets).

- ``basics/``: Regression, autograd, activations, feed-forward nets: notebooks 01-03.
- ``bert/``: WordPiece, the masking rule, the tiny BERT and its fine-tuning, the real BERT: notebook 09.
- ``classic/``: N-gram, feed-forward and window language models, and a sentiment classifier: notebook 04.
- ``generation/``: Greedy, sampling and beam search from their definitions, for every course LM: notebook 10.
- ``lm``: Batching, evaluation and sampling written once for every language model.
- ``recurrent/``: The RNN, LSTM and GRU, recurrent LMs, ELMo, and the GRU encoder-decoder: notebooks 05-07.
- ``transformer/``: Self-attention, positions, the encoder block, the GPT and the transformer translator: notebook 08.
"""
