"""The course language wing: the words, the grammar with its exact oracle, the evaluation sets,
the corpus on disk, the translation target and the text pipeline. It imports only the core.

- ``best_sentences``: The language's most probable sentences, found exactly by a best-first search, beside typical ones.
- ``corpus``: The default corpus of the course language: splits, evaluation sets, datasheet.
- ``grammar``: The course language: a probabilistic grammar whose probabilities are known exactly.
- ``lexicon``: The words of the course language, grouped by what they mean (their class).
- ``parallel``: The parallel corpus of notebook 07: course-language passages, their Tarevi translations, exact alignments.
- ``phenomena``: Labelled evaluation sets for the phenomena planted in the course language.
- ``stored_text``: Text data files stored compressed: ``train.jsonl`` lies on disk as ``train.jsonl.bz2``.
- ``stream``: Fresh sentences, batch after batch: the stream a data-bound model learns from instead of the fixed
  training split.
- ``tarevi``: Tarevi, a second, invented "target language": translation with reordering and known word alignments.
- ``text_pipeline``: From any plain-text file to word ids: read, tokenize, split into sentences, build a vocabulary.
- ``vocab``: The course vocabulary: the grammar's words in a fixed order, and the training split encoded with it.
"""
