"""Task fine-tuning (CSE538 part 3): the pretrained encoder, a classifier on ``[CLS]``, and every weight trained.

"Task fine-tuning": the masked-LM softmax on top of layer k is dropped; a small classifier reads the
contextual vector of ``[CLS]`` from the last layer, and the whole stack is trained on the task's labels.
``SentimentBERT`` wraps ``transformers.BertForSequenceClassification`` in the course's contract
``model(input_ids, labels=None) -> (logits, loss)``; ``from_masked_lm`` starts it from a pretrained
``CourseBERT`` (the encoder's weights are copied; the pooler and the classifier start fresh).
"""

from __future__ import annotations

import copy
import random
from typing import Sequence

import torch
from torch import nn

from course_utils.validation import CourseInputError, check_int

Tensor = torch.Tensor

LABELS = ("neg", "pos")  # class 0, class 1
TURN_WORDS = ("but", "not")  # a review with either can turn its sentiment: the hard ones for a bag of words


class SentimentBERT(nn.Module):
    """``BertForSequenceClassification`` in the course's contract; the attention mask is read from ``[PAD]``."""

    def __init__(self, config, *, seed: int = 0):
        super().__init__()
        from transformers import BertForSequenceClassification

        config = copy.deepcopy(config)
        config.num_labels = len(LABELS)
        torch.manual_seed(seed)
        self.hf = BertForSequenceClassification._from_config(config, attn_implementation="eager")
        self.pad_id = config.pad_token_id

    @classmethod
    def from_masked_lm(cls, masked_lm, *, seed: int = 0) -> "SentimentBERT":
        """A classifier whose encoder starts as ``masked_lm``'s (a ``CourseBERT``); pooler and classifier are new."""
        model = cls(masked_lm.hf.config, seed=seed)
        missing = model.hf.bert.load_state_dict(masked_lm.hf.bert.state_dict(), strict=False)
        if missing.unexpected_keys or any(not k.startswith("pooler.") for k in missing.missing_keys):
            raise CourseInputError(f"the encoders differ: {missing}")
        return model

    def forward(self, input_ids: Tensor, labels: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        if input_ids.ndim != 2:
            raise CourseInputError(f"input_ids must be (B, T), got {list(input_ids.shape)}")
        out = self.hf(input_ids=input_ids, attention_mask=(input_ids != self.pad_id).long(), labels=labels)
        return out.logits, out.loss  # (B, 2), scalar or None


def review_tensors(tokenizer, reviews: Sequence[dict]) -> tuple[Tensor, Tensor]:
    """Padded ``[CLS] review [SEP]`` ids (N, T) and labels (N,) (0 = neg, 1 = pos)."""
    if not reviews:
        raise CourseInputError("no reviews")
    encoded = tokenizer([" ".join(r["words"]) for r in reviews], padding=True, return_tensors="pt")
    labels = torch.tensor([LABELS.index(r["label"]) for r in reviews])
    return encoded["input_ids"], labels


def review_batches(x: Tensor, labels: Tensor, *, batch_size: int, seed: int = 0):
    """``batch(step) -> (input_ids, labels)``: random reviews, trimmed to the longest in the batch."""
    batch_size = check_int("batch_size", batch_size, minimum=1)
    rng = random.Random(seed)
    lengths = (x != 0).sum(1)

    def batch(step: int) -> tuple[Tensor, Tensor]:
        rows = torch.tensor([rng.randrange(len(x)) for _ in range(batch_size)])
        width = int(lengths[rows].max())
        return x[rows, :width], labels[rows]  # (B, T), (B,)

    return batch


def turns(reviews: Sequence[dict]) -> Tensor:
    """True for the reviews with "but" or "not" (N,)."""
    return torch.tensor([any(w in r["words"] for w in TURN_WORDS) for r in reviews])


@torch.no_grad()
def review_accuracy(model: SentimentBERT, tokenizer, reviews: Sequence[dict]) -> tuple[float, float, float]:
    """Accuracy on all reviews, on plain ones, and on ones with "but"/"not" (notebook 06's three columns)."""
    x, labels = review_tensors(tokenizer, reviews)
    model.eval()
    right = model(x)[0].argmax(-1) == labels
    turning = turns(reviews)
    return right.double().mean().item(), right[~turning].double().mean().item(), right[turning].double().mean().item()
