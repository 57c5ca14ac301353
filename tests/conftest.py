"""Fixtures shared by several test files (the course language and vocabulary, the corpus's test split and its
oracle perplexity, notebook 07's translation vocabularies, test pairs and a padded batch), and the order in which the
suite runs. The rules for every notebook cell nbval runs are in the root conftest.py, which reaches notebooks/ too.

Helpers shared by test files live in the ``*_support.py`` modules beside this one; no test file imports another."""

from __future__ import annotations

import math

import pytest

import course_utils  # noqa: F401  (first: it sets HF_HUB_OFFLINE before anything loads huggingface_hub)
from course_utils.language import corpus, parallel
from course_utils.language.grammar import CourseLanguage
from course_utils.models.recurrent import seq2seq
from course_utils.language.vocab import course_vocab
from course_utils.zoo.translation_checkpoints import vocabularies


@pytest.fixture(scope="session")
def lang():
    """The full course language (its oracle)."""
    return CourseLanguage()


@pytest.fixture(scope="session")
def vocab():
    """The vocabulary every course-language model uses."""
    return course_vocab()


@pytest.fixture(scope="session")
def held_out_sentences():
    """The corpus's test split: sentences as lists of words."""
    return corpus.load_split("test")


@pytest.fixture(scope="session")
def oracle_perplexity(held_out_sentences):
    """The true perplexity of the test split, from the language the corpus was drawn from (held-out rules out)."""
    return math.exp(corpus.oracle_entropy(CourseLanguage(include_held_out=False), held_out_sentences)[0])


@pytest.fixture(scope="session")
def translation_vocabs():
    """Notebook 07's (source, target) vocabularies."""
    return vocabularies()


@pytest.fixture(scope="session")
def held_out_pairs():
    """The parallel corpus's test split (source, target) pairs."""
    return parallel.load("test")


@pytest.fixture(scope="session")
def padded_pairs(translation_vocabs, held_out_pairs):
    """Four pairs of different source and target lengths: padding on both sides."""
    by_length = sorted(held_out_pairs[:200], key=lambda p: len(p.source))
    chosen = [by_length[0], by_length[-1], by_length[60], by_length[140]]
    assert len({len(p.source) for p in chosen}) == 4
    return seq2seq.make_batch(chosen, *translation_vocabs)


def pytest_collection_modifyitems(items):
    """nbval's cells carry the ``nbval`` mark; they, the browser tests and the notebook reruns are ``slow``.

    The ``slow`` tests then go first (in their own order), so that pytest-xdist hands out the long modules, the
    notebooks above all, while the short ones wait to fill the gaps at the end: the two workers finish together.
    """
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.nbval)
        if item.path.suffix == ".ipynb" or item.get_closest_marker("browser") or item.get_closest_marker("notebook"):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: each notebook's cells in order
