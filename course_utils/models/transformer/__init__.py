"""The transformer: self-attention, positions, the encoder block, a GPT-style LM and an encoder-decoder translator
(notebook 08).

- ``attention``: Self-attention from the lecture's formula: scaled dot-product and multi-head attention, masks, the 1/√d_k measured.
- ``encoder_block``: The transformer's encoder block from scratch, against ``nn.TransformerEncoderLayer``, and a BertLayer recomputed by hand.
- ``positional``: Positional encodings: the slide's sinusoids, their linear shift, learned against fixed positions beyond the training lengths.
- ``transformer_lm``: A GPT-style transformer LM: Hugging Face's ``GPT2LMHeadModel`` in the course's LM contract, a scratch twin, attention analysis.
- ``transformer_translation``: An encoder–decoder transformer for notebook 07's translation task, with per-head cross-attention.
"""
