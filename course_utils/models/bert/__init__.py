"""BERT: the WordPiece tokenizer, BERT's masking rule, a tiny BERT pretrained by masked-language modelling, its
fine-tuning, and the real pretrained BERT when it can be had (notebook 09).

- ``bert_finetuning``: Task fine-tuning: the pretrained encoder with a classifier on ``[CLS]``, for the review sentiment task.
- ``bert_masking``: BERT's 15 % and 80/10/10 masking written from the paper, measured beside the library's collator.
- ``bert_mlm``: A tiny BERT pretrained by masked-language modelling, whole-word masking, masked words scored against the oracle.
- ``pretrained_bert``: The real BERT when it can be had (a saved directory, the cache, a download), the course's BERT when not.
- ``wordpiece``: WordPiece: BERT's tokenizer trained with Hugging Face ``tokenizers``, and its greedy encoder from scratch.
"""
