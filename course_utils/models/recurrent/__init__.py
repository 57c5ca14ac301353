"""Recurrent networks: the RNN, LSTM and GRU from their equations, the recurrent LMs and ELMo (05-06), and the GRU
encoder-decoder with attention (07).

- ``recurrent_lm``: Recurrent language models: the RNN LM, a bidirectional masked-word LSTM, and ELMo.
- ``rnn``: The Elman RNN and the LSTM (and a GRU step) written from the lecture's equations, one Python step per token.
- ``seq2seq``: Encoder–decoder translation with GRUs, without and with attention (additive, dot, general).
"""
