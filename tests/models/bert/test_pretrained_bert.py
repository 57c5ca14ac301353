"""The real BERT when online (``pretrained_bert``): the offline fallback is fast, a saved directory loads intact."""

from __future__ import annotations

import importlib
import shutil
import os
import time

import pytest
import torch

from course_utils.language.corpus import load_split
from course_utils.models.bert import pretrained_bert as pb
from course_utils.models.bert.bert_mlm import CourseBERT, bert_config
from course_utils.models.bert.wordpiece import train_wordpiece
from course_utils.validation import CourseInputError

pytestmark = pytest.mark.parity  # a library release can change what this checks (course.sh floor, lock)

FALLBACK = ("course model", "course tokenizer")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.delenv(pb.ALLOW_DOWNLOADS, raising=False)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # set by course_utils on import


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A tiny BertForMaskedLM and a course tokenizer, written by ``save_pretrained``."""
    sentences = load_split("train")[:3000]
    tokenizer = train_wordpiece(sentences)
    model = CourseBERT(bert_config(tokenizer, layers=1, hidden=32, heads=2), seed=3).hf.eval()
    directory = tmp_path_factory.mktemp("tiny_bert")
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    ids = torch.tensor(tokenizer([" ".join(words) for words in sentences[:4]], padding=True)["input_ids"])  # (B, T)
    return directory, model, tokenizer, ids


def timed(*args, **kwargs):
    importlib.import_module("transformers.models.auto")  # imported first: the library's import time is not the hub's

    start = time.perf_counter()
    result = pb.load_pretrained(*args, **kwargs)
    return result, time.perf_counter() - start


def test_offline_the_fallback_comes_within_a_second(capsys):
    (model, tokenizer, message), seconds = timed(fallback=lambda: FALLBACK)
    assert seconds < 1.0
    assert (model, tokenizer) == FALLBACK
    assert message == ("bert-base-uncased is not available offline (set COURSE_ALLOW_DOWNLOADS=1 with a network); "
                       "using the course's BERT instead")  # fmt: skip
    assert capsys.readouterr().out == message + "\n"


def test_without_a_fallback_there_is_no_model():
    (model, tokenizer, message), seconds = timed("bert-large-cased", kind="model", quiet=True)
    assert (model, tokenizer) == (None, None) and seconds < 1.0
    assert message.startswith("bert-large-cased is not available offline") and message.endswith("no fallback was given")


def test_downloads_allowed_too_late_say_so(monkeypatch):
    monkeypatch.setenv(pb.ALLOW_DOWNLOADS, "1")  # after import: huggingface_hub already reads HF_HUB_OFFLINE=1
    (model, _, message), seconds = timed(fallback=lambda: FALLBACK, quiet=True)
    assert model == FALLBACK[0] and seconds < 1.0
    assert "before importing course_utils" in message


def test_an_unreachable_hub_falls_back(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv(pb.ALLOW_DOWNLOADS, "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(pb, "hub_reachable", lambda timeout=pb.REACH_TIMEOUT_S: False)
    (model, _, message), seconds = timed(fallback=lambda: FALLBACK, quiet=True)
    assert model == FALLBACK[0] and seconds < 1.0
    assert "does not answer" in message


def test_the_reachability_probe_is_bounded(monkeypatch):
    from huggingface_hub import constants

    for endpoint in ("https://10.255.255.1", "https://hub.invalid", "not a url"):  # no HTTP answer from any
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        start = time.perf_counter()
        assert pb.hub_reachable(timeout=0.3) is False
        assert time.perf_counter() - start < 1.0


def test_a_saved_directory_loads_the_same_model(saved):
    directory, original, tokenizer, ids = saved
    (model, loaded_tokenizer, message), _ = timed(directory)
    assert message == f"loaded {directory} from disk (masked_lm)"
    assert type(model).__name__ == "BertForMaskedLM" and not model.training
    with torch.no_grad():
        assert torch.equal(model(ids).logits, original(ids).logits)
        attentions = model(ids, output_attentions=True).attentions  # eager attention returns them
    assert len(attentions) == 1 and attentions[0].shape[1] == 2
    text = "the girl was playing outside ."
    assert loaded_tokenizer(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert loaded_tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"]) == text


def test_a_saved_directory_as_the_encoder_only(saved):
    directory, original, _, ids = saved
    model, _, message = pb.load_pretrained(str(directory), kind="model")
    assert type(model).__name__ == "BertModel"
    assert "initialised at random: pooler.dense.bias, pooler.dense.weight" in message
    with torch.no_grad():
        assert torch.equal(model(ids).last_hidden_state, original.bert(ids).last_hidden_state)


def test_bad_arguments(tmp_path, saved):
    with pytest.raises(CourseInputError, match="kind"):
        pb.load_pretrained(saved[0], kind="classifier")
    with pytest.raises(CourseInputError, match="config.json"):
        pb.load_pretrained(tmp_path)
    with pytest.raises(CourseInputError, match="no model directory"):
        pb.load_pretrained(tmp_path / "missing")
    with pytest.raises(CourseInputError, match="no model directory"):
        pb.load_pretrained("./missing_bert")
    with pytest.raises(CourseInputError, match="fallback"):
        pb.load_pretrained(fallback="course BERT")
    with pytest.raises(CourseInputError, match="pair"):
        pb.load_pretrained(fallback=lambda: "just a model", quiet=True)
    with pytest.raises(CourseInputError, match="name_or_path"):
        pb.load_pretrained("")


def test_a_model_in_the_hub_cache_loads_from_it_offline(saved, tmp_path, monkeypatch):
    """A hub cache on disk (the layout ``huggingface_hub`` writes) holding a model: it loads with no network."""
    from huggingface_hub import constants

    directory, model, _, ids = saved
    snapshot = tmp_path / "models--course--tiny-bert" / "snapshots" / ("0" * 40)
    shutil.copytree(directory, snapshot)
    (tmp_path / "models--course--tiny-bert" / "refs").mkdir()
    (tmp_path / "models--course--tiny-bert" / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    loaded, _, message = pb.load_pretrained("course/tiny-bert", fallback=lambda: FALLBACK, quiet=True)
    assert message == "loaded course/tiny-bert from the local Hugging Face cache (masked_lm)"
    with torch.no_grad():
        assert torch.equal(loaded(ids).logits, model(ids).logits)
