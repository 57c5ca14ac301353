# %% [markdown]
# # 09 · BERT: WordPiece, masked-LM pretraining, fine-tuning and contextual embeddings
#
# *Accompanies the lecture "Transformer Language Models" (CSE538, part 2 "MLM vs autoregressive LMs", the Hugging
# Face feature-extraction snippet, "Bert: Attention by Layers"; part 3 "Applying Transformer LMs": pretraining → LM
# fine-tuning → task fine-tuning, contextual embeddings, Person A / Person B); the CMU 11-411/611 slides "BERT Is
# Basically a Trained Transformer Encoder Stack", "Pretraining BERT: MLM and NSP", "BERT Has Its Own Tokenization
# Scheme", "How Do You Get Embeddings from BERT?" and "To Concatenate or to Sum?"; and CS109B Lecture 16
# ("Transformers + BERT").*
#
# ### Learning objectives
#
# After this notebook you can
# - say where BERT-base's 110 M parameters are, from its config alone (nothing downloaded);
# - train a WordPiece tokenizer with Hugging Face `tokenizers`, write its greedy longest-match encoder from scratch
#   and check the two agree; use `[CLS]`, `[SEP]`, `[MASK]`, `[PAD]`, `[UNK]` and `token_type_ids`;
# - write BERT's 15 % masking with 80/10/10 from the paper and check it against `DataCollatorForLanguageModeling`;
# - pretrain a tiny BERT and score its masked-word predictions against the course language's **exact** masked
#   distribution, beside notebook 04's window model and notebook 05's BiLSTM;
# - follow the lecture's pipeline, pretraining → LM fine-tuning → task fine-tuning, and measure each step;
# - take contextual embeddings from each layer, show that they separate word senses where static embeddings
#   cannot, and reproduce the "To Concatenate or to Sum?" table on a course task;
# - look at BERT's attention with bertviz, offline.
#
# Sections marked *(optional)* go beyond the slides; skip them on a first reading.

# %%
from course_utils import setup_notebook

device = setup_notebook(seed=0)

# %% [markdown]
# Every model here runs on the CPU, whatever `device` says, so that the printed numbers are the same on every
# machine. The tokenizer and the BERTs are the course's shipped checkpoints (`data/checkpoints/09/`, Hugging Face
# directories made by one command, `python -m course_utils.models.bert_checkpoints`).

# %%
import math

import matplotlib.pyplot as plt
import torch

from course_utils import CourseInputError, budget
from course_utils.language import corpus
from course_utils.language.grammar import CourseLanguage
from course_utils.models import bert_checkpoints as bzoo
from course_utils.models import bert_mlm as bm
from course_utils.models import lm_checkpoints as zoo
from course_utils.models import wordpiece as wp

lang = CourseLanguage(include_held_out=False)  # the training language, exact
tokenizer = bzoo.load_course_tokenizer()
bert = bzoo.load_bert("bert_mlm")

# %% [markdown]
# ## 2. BERT has its own tokenization scheme: WordPiece
#
# The CMU slide: *"BERT has its own tokenizer and tokenization scheme. You must use it."* BERT's is **WordPiece**: a
# fixed vocabulary of words and word pieces, where a piece that continues a word starts with `##`. Frequent words
# are one piece; rarer ones are spelled from pieces, so no word is ever out of vocabulary (at worst it is spelled
# letter by letter).
#
# **The library.** `wp.train_wordpiece` trains one with Hugging Face `tokenizers` on the course's training split and
# wraps it as a `BertTokenizerFast`. We give it 600 entries, fewer than the 605 words of the language, so it must
# split. The trainer starts from single characters (about 60 of them, with their `##` twins) and merges pairs, so
# the 600 entries are not 600 words:

# %%
# NBVAL_CHECK_OUTPUT
train_sentences = corpus.load_split("train")
words_in_corpus = {w for s in train_sentences for w in s}
distinct, running = wp.split_share(tokenizer, train_sentences)
print(f"vocabulary: {len(tokenizer)} entries for {len(words_in_corpus)} words; "
      f"{sum(t.startswith('##') for t in tokenizer.get_vocab())} entries are ## pieces")
print(f"words split into ≥ 2 pieces: {distinct:.0%} of distinct words, {running:.1%} of running words")
for word in ["the", "cat", "amazing", "outside", "cherries", "zebra"]:
    print(f"  {word:10} → {' '.join(tokenizer.tokenize(word))}")

# %% [markdown]
# The split follows frequency: "the" and "amazing" are whole, the rarer "cherries" is spelled in pieces, and
# "zebra", which the course language does not have, is spelled from single letters rather than being unknown.
#
# **From scratch.** WordPiece *encoding* is greedy longest-match-first: take the longest vocabulary entry that starts
# the word, then the longest `##` entry that starts the rest, and so on; if some rest matches nothing, the whole
# word becomes `[UNK]`. (The *trainer* learns its merges like BPE; the encoder does not replay them.)

# %%
import inspect

print(inspect.getsource(wp.WordPieceEncoder.encode_word))

# %% [markdown]
# **Parity.** The scratch encoder against the library, on every entry of the vocabulary and on every sentence of
# the test split (ids, token types and attention mask):

# %%
# NBVAL_CHECK_OUTPUT
scratch = wp.WordPieceEncoder(tokenizer.get_vocab())
entries = [t for t in tokenizer.get_vocab() if t not in wp.SPECIAL_TOKENS]
same_entries = sum(scratch.tokenize(t) == tokenizer.tokenize(t) for t in entries)
test_sentences = corpus.load_split("test")
same_sentences = sum(scratch.encode(" ".join(s)) == dict(tokenizer(" ".join(s))) for s in test_sentences)
print(f"vocabulary entries encoded the same: {same_entries} / {len(entries)}")
print(f"test sentences encoded the same:     {same_sentences} / {len(test_sentences)}")
for text in ["Zebras!!", "naïve", "a" * 120]:
    print(f"{text[:12]!r:15} library {tokenizer.tokenize(text)}   scratch {scratch.tokenize(text)}")

# %% [markdown]
# **Special tokens**, each at work (ids 0–4 in our vocabulary):
#
# | token | the slide | here |
# |---|---|---|
# | `[CLS]` | "Classify" (occurs at the beginning of inputs) | first of every input; its last-layer vector is what section 7's classifier reads |
# | `[SEP]` | "Separator" (occurs between sentences) | ends each sentence of an input |
# | `[MASK]` | "Mask" (indicates masked words, training only) | the hidden words of section 4 |
# | `[PAD]` | "Padding" | fills a batch to one length; the attention mask is 0 there |
# | `[UNK]` | "Unknown" | a word that pieces cannot spell: here only characters never seen in training |
#
# **Preparing input for BERT** (the CMU slide): a pair is `[CLS] A [SEP] B [SEP]`, with `token_type_ids` 0 for A's
# part and 1 for B's (BERT adds a learned *segment* embedding for each), and an `attention_mask` that is 0 on the
# padding of a batch:

# %%
# NBVAL_CHECK_OUTPUT
batch = tokenizer(["the cat sleeps .", "the girl eats the cake ."], ["the dogs eat .", "she ate ∆ ."], padding=True)
for row in range(2):
    tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][row])
    print(" ".join(f"{t:>7}" for t in tokens))
    print(" ".join(f"{t:>7}" for t in batch["token_type_ids"][row]), "  ← token_type_ids")
    print(" ".join(f"{t:>7}" for t in batch["attention_mask"][row]), "  ← attention_mask\n")
