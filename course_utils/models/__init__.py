"""The models wing: every model the notebooks build, from scratch and with torch, and the tools that
train, measure and ship them. It imports the language wing and the core, never the widgets.

- ``activations``: Activation functions g(z) and their derivatives g'(z), written out from scratch.
- ``attention_cost``: Vaswani et al.'s Table 1, counted and timed: a self-attention layer against an LSTM layer, and training throughput.
- ``attention``: Self-attention from the lecture's formula: scaled dot-product and multi-head attention, masks, the 1/√d_k measured.
- ``autograd``: A minimal scalar autograd engine: every ``Value`` remembers how it was made.
- ``bert_checkpoints``: Notebook 09's tokenizer and BERTs: their recipes, and one command that trains and ships them as Hugging Face directories.
- ``bert_finetuning``: Task fine-tuning: the pretrained encoder with a classifier on ``[CLS]``, for the review sentiment task.
- ``bert_mlm``: A tiny BERT pretrained by masked-language modelling, whole-word masking, masked words scored against the oracle.
- ``bert_sizes``: BERT-base and BERT-large parameter counts, built on the meta device, per group, against a closed form.
- ``contextual_embeddings``: A word's vector at every BERT layer, Devlin et al.'s six layer choices, and linear probes and nearest neighbours that measure which layers tell word senses apart.
- ``encoder_block``: The transformer's encoder block from scratch, against ``nn.TransformerEncoderLayer``, and a BertLayer recomputed by hand.
- ``feedforward``: Feed-forward networks in the slides' notation, and what they can do that a linear model cannot.
- ``gradcheck``: Check backpropagation against finite differences.
- ``lm_checkpoints``: The trained models behind the notebooks' tables: their recipes, and one command that makes them.
- ``lm_probes``: Measure any language model on the planted phenomena, beside the oracle's exact answer.
- ``lm``: Batching, evaluation and sampling written once for every language model.
- ``masked_lm``: Masked-word prediction with a fixed window, the lecture's "masked language modelling with a DNN".
- ``mlm_masking``: BERT's 15 % and 80/10/10 masking written from the paper, measured beside the library's collator.
- ``neural_lm``: The feed-forward (Bengio) language model, in the slides' steps.
- ``ngram``: Counting language models: N-grams with no smoothing, add-k smoothing, or interpolated Kneser-Ney.
- ``positional``: Positional encodings: the slide's sinusoids, their linear shift, learned against fixed positions beyond the training lengths.
- ``pretrained_bert``: The real BERT when it can be had (a saved directory, the cache, a download), the course's BERT when not.
- ``recurrent_lm``: Recurrent language models: the RNN LM, a bidirectional masked-word LSTM, and ELMo.
- ``regression``: Linear regression ŷ = Xβ: the analytic solution, gradient descent (plain, momentum, Adam), the PyTorch pair.
- ``rnn_analysis``: Measuring what the lectures claim about recurrent networks: vanishing and exploding gradients, speed, gates.
- ``rnn``: The Elman RNN and the LSTM (and a GRU step) written from the lecture's equations, one Python step per token.
- ``sentiment``: Sentiment classification with a feed-forward net: hand-built features against learned embeddings.
- ``seq2seq``: Encoder–decoder translation with GRUs, without and with attention (additive, dot, general).
- ``slide_attention``: The CSE538 slide's ``SelfAttention`` class, run as written, its bugs fixed one at a time.
- ``transformer_checkpoints``: The transformers of notebook 08: their recipes, and one command that trains and ships them.
- ``transformer_lm``: A GPT-style transformer LM: Hugging Face's ``GPT2LMHeadModel`` in the course's LM contract, a scratch twin, attention analysis.
- ``transformer_translation``: An encoder–decoder transformer for notebook 07's translation task, with per-head cross-attention.
- ``translation_analysis``: Measuring the seq2seq lecture's claims: quality by length, alignment error, the passive, the bottleneck, cost.
- ``translation_checkpoints``: The translation models of notebook 07: their recipes, and one command that trains and ships them.
- ``translation_metrics``: Scoring translations: BLEU from scratch (Papineni et al. 2002), exact match, token accuracy, alignment error rate.
- ``wordpiece``: WordPiece: BERT's tokenizer trained with Hugging Face ``tokenizers``, and its greedy encoder from scratch.
"""
