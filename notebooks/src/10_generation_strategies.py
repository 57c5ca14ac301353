# %% [markdown]
# # 10 · Generation strategies: greedy, beam search and sampling, judged by the language's own oracle
#
# *Accompanies the lecture "Transformer Language Models" (CSE538, part 3, "How to use an LM for Generation": Greedy
# Search, Beam Search, Random Walk and "Practical Points", eq. 13.16), with Jurafsky & Martin's search tree
# (*Speech and Language Processing*, 3rd ed., Fig. 13.7).*
#
# ### Learning objectives
#
# After this notebook you can
# - run the slides' search tree by hand: greedy finds *yes yes* (p = .20), the best sequence is *ok ok* (p = .28);
# - say what goes wrong when the slides' `generateGreedy`, `generateBeam` and `generateRandWalk` run as written, and
#   write the corrected strategies;
# - read greedy search, beam search (width k, length normalisation, early stopping), ancestral sampling,
#   temperature, top-k, top-p and beam sampling written from scratch, for every course LM and translation model;
#   write top-p, a beam step and a normalised score yourself (the exercises); and check them token for token
#   against Hugging Face `generate()`;
# - rank hypotheses by eq. 13.16, by `generate()`'s `length_penalty` and by GNMT's penalty, and see that they need
#   not agree;
# - measure what each strategy produces against the truth: the oracle's probability of every generated sentence,
#   the language's entropy rate, repetition, diversity and length;
# - find the most probable sentences of the language exactly (the first two tie), and see that they are the
#   likeliest to be drawn but not typical per token;
# - measure the beam search curse's length side, and what length normalisation does about it.
#
# Sections marked *(optional)* go beyond the slides; skip them on a first reading.

# %%
from course_utils import setup_notebook

device = setup_notebook(seed=0)

# %% [markdown]
# Every model runs on the CPU, whatever `device` says, so the checked numbers are the same on every machine (timings,
# and sampled numbers by a sentence or two, vary between CPUs). The
# models are the course's shipped checkpoints: the n-gram, FFNN, RNN and LSTM language models of notebooks 04–06,
# the GPT of notebook 08 (`gpt_lm`, trained on the training split), and the translation models of notebooks 07 and
# 08. Nothing is trained here.

# %%
import math
import statistics
import textwrap

import matplotlib.pyplot as plt
import torch

from course_utils import CourseInputError, budget
from course_utils.language import best_sentences as bs
from course_utils.language import corpus
from course_utils.language import parallel
from course_utils.language.grammar import CourseLanguage
from course_utils.models import generation as g
from course_utils.analysis import generation_timing as speed
from course_utils.analysis import generation_analysis as ga
from course_utils.zoo import lm_checkpoints as zoo
from course_utils.language.vocab import course_vocab
from course_utils.slides import slide_generation as sg
from course_utils.zoo import load
from course_utils.zoo import translation_checkpoints as tc

lang = CourseLanguage(include_held_out=False)  # the training language, exact
vocab = course_vocab()
gpt = load("gpt_lm")
reference = ga.language_reference(
    lang
)  # 20,000 oracle samples: the entropy rate and the length distribution

# %% [markdown]
# Three small helpers for the tables below: a generation's words, the oracle's verdict on them, and a sentence cut to
# fit a column.


# %%
def words_of(generation, prompt=()):
    """The prompt and the generated words, </s> left out."""
    return tuple(prompt) + tuple(vocab.decode(generation.content))


def verdict(words):
    """The oracle's verdict on a sentence: ✓ with its log-probability, or ✗."""
    score = lang.score(words)
    return (
        f"✓ log p = {score.logprob:6.2f}"
        if score.grammatical
        else "✗ not in the language"
    )


def shown(words, width=46):
    """A sentence cut to ``width`` characters for a table."""
    text = " ".join(words)
    return text if len(text) <= width else text[: width - 1] + "…"


# %% [markdown]
# ## 1. The slide's search tree
#
# The slide "Greedy Search" shows Jurafsky & Martin's Fig. 13.7 as a picture: a search tree over yes, ok and </s>
# (its caption writes V = {yes, ok, <s>}: the slide check below), and two numbers, p(<s> ok ok </s>) = .28 and
# p(<s> yes yes </s>) = .20. "Greedy search chooses *yes* followed by *yes*, instead of the globally most probable
# sequence *ok ok*."
#
# The picture's branch probabilities are in the book (the 3rd-edition draft's Fig. 10.11, the same tree):
# p(· | <s>) = ok .4, yes .5, </s> .1; p(· | ok) = ok .7, yes .2, </s> .1; p(· | yes) = yes .4 and .3, .2 for
# ok and </s> (the extraction we read lists those two numbers without labels; we take ok .3, </s> .2, and neither
# choice changes greedy, beam or the best path); </s> for sure after any two words. `slide_generation.JM_TREE`
# holds them. Listing **every** complete path is the check:

# %%
# NBVAL_CHECK_OUTPUT
paths = sg.enumerate_paths()
for words, p in paths:
    print(f"  <s> {' '.join(words):14} p = {p:.2f}")
print(f"the {len(paths)} paths sum to {sum(p for _, p in paths):.2f}, not 1")
greedy = sg.greedy(sg.jm_tree_lm)
print(f"greedy:         <s> {' '.join(greedy.words)}   p = {greedy.prob:.2f}")
for k in (1, 2):
    best = sg.beam_search(sg.jm_tree_lm, k).best
    print(f"beam, width {k}:  <s> {' '.join(best.words)}   p = {best.prob:.2f}")

# %% [markdown]
# The slide's numbers hold: greedy takes *yes* (.5 > .4), then *yes* (.4), p = .5 × .4 × 1 = .20, while
# *ok ok* has .4 × .7 × 1 = .28, the most probable path. A beam of width 2 keeps *ok* alive after the first step
# and finds it.
#
# > **Slide check.** The slide (CSE538, "How to use an LM for Generation", Greedy Search) shows the tree with
# > V = {yes, ok, <s>}; the tree's third word is </s>, not <s>. In fact the figure's probabilities do not sum
# > to 1: the *yes* node reads .4, .3 and .2, which is .9, so the seven paths sum to .95. The figure is a made-up
# > example; its two headline numbers, .28 and .20, are right.

# %% [markdown]
# ## 2. The slides' pseudocode, run as written
#
# `slide_generation` holds the slides' code character for character (`GREEDY_SOURCE`, `BEAM_SOURCES`,
# `RANDOM_WALK_SOURCE`) and runs it on a model with the slides' `getNextProbs(history)`, counting the calls.

# %%
print(sg.GREEDY_SOURCE)


# %%
# NBVAL_CHECK_OUTPUT
def show(label, run):
    """Print ``label`` and what running the slide's code did, in lines of at most 88."""
    said = run.error or f"returned {run.result} after {run.calls} model calls"
    print(textwrap.fill(f"{label} {said}", 88, subsequent_indent="    "))


show("on the tree, history = ('<s>',):     ", sg.run_slide_greedy())
show(
    "the default history='<s>' (a string):",
    sg.run_slide_greedy(history="<s>", max_steps=50),
)
show(
    "a model that never puts </s> first:  ",
    sg.run_slide_greedy(sg.never_ending_lm, max_steps=50),
)

# %% [markdown]
# On the tree it works. But `generateGreedy` stops only when `</s>` is the *argmax*: on a model that always prefers
# some word to `</s>` (`never_ending_lm` gives yes .5, ok .3, </s> .2 after every prefix) it recurses until the step
# bound, and without one until Python's recursion limit. The string default is a second bug: `history += word`
# glues characters together and `history[-1]` is then one character, never the token `'</s>'`, so the end is never
# seen (our `SlideModel` refuses to predict after `</s>` and says so). The corrected `greedy` works on token lists and
# takes a step bound.

# %%
print(sg.BEAM_SOURCES[0])

# %%
# NBVAL_CHECK_OUTPUT
show("as written:", sg.run_slide_beam(k=2, fixed=0))
show(
    "the second slide's version, loop fixed:",
    sg.run_slide_beam(k=2, version=1, fixed=1),
)
for fix in sg.BEAM_FIXES:
    print(textwrap.fill(f"- fix: {fix.bug}", 88, subsequent_indent="  "))
print()
show("both fixes, on the tree:", sg.run_slide_beam(k=2))
depth = 8
deep = sg.bounded_lm(depth)
print(f"\na tree {depth} words deep (bounded_lm({depth})), k = 2:")
print(
    f"  the slide's code expands {sg.run_slide_beam(deep, k=2).calls} nodes "
    f"(the whole binary tree: {sg.full_tree_expansions(deep, 2)})"
)
print(f"  a real beam of width 2 expands {sg.beam_search(deep, 2).expansions}")

# %% [markdown]
# > **Slide check.** The slide (CSE538, "Beam Search") says "Restrict to consider the top k (beam width) most
# > probable per step", and its code does not. `while path, path_p in frontier:` is not Python (SyntaxError); the
# > second version also builds `s+w` from an undefined `s`. In fact, once the loop is made to run, nothing ever
# > removes a **hypothesis** (a candidate output: a prefix still growing, or a finished sentence) from `frontier` or
# > keeps only k of them: the code takes the top k *children of every node*, which is the whole k-ary tree (511
# > expansions at depth 8 for k = 2, against 17 for a real beam), and on a model whose sentences can be arbitrarily
# > long it never ends. A beam search keeps the k best hypotheses **over all of them** at each step, as
# > `slide_generation.beam_search` and `generation.beam_search` do; each of the k running ones is also called a beam.

# %%
print(sg.RANDOM_WALK_SOURCE)

# %%
# NBVAL_CHECK_OUTPUT
from collections import Counter

show("as written:", sg.run_slide_random_walk(seed=None))
walks = Counter(tuple(sg.run_slide_random_walk(seed=s).result[1:]) for s in range(4000))
print("with a stand-in multinomial, 4000 walks on the tree:")
for words, p in paths[:3]:
    print(f"  <s> {' '.join(words):14} drawn {walks[words] / 4000:.2f}, tree {p:.2f}")
show("on never_ending_lm:", sg.run_slide_random_walk(sg.never_ending_lm, seed=0))

# %% [markdown]
# `multinomial.draw` is not a library function (NumPy's `np.random.multinomial(1, pvals)` returns counts, not a
# word), so the slide's code stops at a NameError; with a stand-in it is **ancestral sampling**, each word drawn
# from P(w | history). Unlike greedy it ends on `never_ending_lm`: a random walk stops with probability 1 whenever
# `</s>` keeps at least a fixed share at every step (.2 here); one that shrinks fast enough along the walk could let
# it run forever. (The *yes* branch's walks are drawn from the book's .9 renormalised, so *yes yes* comes out near
# .5 × .4 / .9 = .22 rather than .20.)
#
# ## 3. The random walk's line: P(with | He ate the cake ⟨M⟩)
#
# The random-walk slide ends with "Task: Estimate P(wᵢ | w₁, …, wᵢ₋₁): P(masked word given history),
# P(with | He ate the cake ⟨M⟩) = ?". For a left-to-right model the ⟨M⟩ is simply the next position. The course
# language has that sentence, so the oracle answers exactly, and every course LM answers too:

# %%
# NBVAL_CHECK_OUTPUT
history = ["he", "ate", "the", "cake"]
exact = lang.next_distribution(history)
left_to_right = {
    "trigram": zoo.ngram_models((3,))["trigram"],
    "FFNN (n=5)": load("ffnn_n5"),
    "RNN": load("rnn_lm"),
    "LSTM": load("lstm_lm"),
    "GPT (08)": gpt,
}
print(f"{'':11} P(with | he ate the cake)   P(. | he ate the cake)")
print(f"{'oracle':11} {exact.get('with', 0):14.2f} {exact.get('.', 0):22.2f}")
for name, model in left_to_right.items():
    probs = g.next_logprobs(model, g.encode_prompt(vocab, history)).exp()  # (V,)
    print(f"{name:11} {probs[vocab.stoi['with']]:14.2f} {probs[vocab.stoi['.']]:22.2f}")

# %% [markdown]
# > **Slide check.** The slide (CSE538, "Random Walk") writes the task as P(with | He ate the cake ⟨M⟩), a masked
# > token, for a left-to-right model. In fact a left-to-right model never sees a mask: it estimates P(w₅ | w₁ … w₄),
# > here P(with | he ate the cake) = .40 exactly (the sentence may also end: "." has .60). The ⟨M⟩ notation is the
# > masked LM's (notebook 09, where BERT answers P(with | he ate the cake ⟨M⟩ the fork .) ≈ 1, because it also sees
# > "the fork").

# %% [markdown]
# ## 4. Every strategy, written from scratch, for every course model
#
# `course_utils.models.generation` implements each strategy once, from its definition, on one interface: a
# `Decoder` gives the next-token logits after a batch of prefixes, step after step. For the GPT it keeps a **KV
# cache** (the keys and values of earlier positions are computed once, and reordered when beams are reordered); the
# recurrent models re-read the sequence; the trigram reads its last two words, the FFNN its last five (notebook 04's
# N = 5 counts context words; the tables here write it n=5). A translation model becomes an LM of its target side
# once its source is fixed (`SourceConditioned`); the slide's tree is a `TableLM`.
#
# | strategy | function | what it does |
# |---|---|---|
# | greedy | `greedy` | argmax each step |
# | beam search | `beam_search(width=k, normalisation=…, early_stopping=…)` | keep the k best hypotheses |
# | random walk | `sample` | draw each word from P(w \| history) |
# | temperature, top-k, top-p | `warp`, `sample(temperature=…, top_k=…, top_p=…)` | reshape P before drawing |
# | "combine beam and random walk" | `beam_sample` | beam search whose candidates are drawn |
#
# Here is the code itself. Greedy decoding and the random walk are one loop (`sampling._walk`) that differs only in
# how the next word is chosen: `greedy` takes the argmax, `sample` draws from the warped distribution. `warped_scores`
# holds temperature, top-k and top-p: **temperature** T divides the scores, so that P_T(w) ∝ P(w)^{1/T}; T < 1
# sharpens the distribution, T > 1 flattens it, and T → 0 is greedy. **Top-k** keeps the k most probable words.
# **Top-p** ("nucleus") keeps the most probable words until their mass reaches p. Each filter sets the words it drops
# to −∞, and the softmax renormalises what is left (exercise 1 writes top-p, so `warped_scores` shows only its
# signature and docstring; its whole body, temperature and top-k too, waits in `course_utils.models.generation`'s
# `sampling.py`). `beam.beam_search` keeps the k best hypotheses.
# Every strategy adds log-probabilities instead of multiplying probabilities, because the product underflows: 50 words
# at P = 10⁻³ each have probability 10⁻¹⁵⁰, below the smallest float32 (about 10⁻⁴⁵). The last line of the cell shows
# it.

# %%
import inspect

from course_utils.listing import listing
from course_utils.models.generation import beam, sampling

for function in (sampling._walk, sampling.greedy, sampling.sample):
    print(inspect.getsource(function))
print(listing(sampling.warped_scores, exercise=1))
fifty = torch.full((50,), 1e-3)  # 50 words at P = 0.001
print(
    f"product of the probabilities in float32: {float(fifty.prod()):g}; "
    f"sum of their logs: {float(fifty.log().sum()):.1f}"
)

# %% [markdown]
# > **Slide check.** The slide (CSE538, "Practical Points") says "Use log probs for faster computation tracking
# > maximums", and the slide's own beam code multiplies raw probabilities (`path_p*p`, section 2). This cell does
# > not time the two. In fact there is a reason that holds on every machine, underflow: the last line above shows
# > 50 words of probability 0.001 multiplied in float32 giving exactly 0, while the sum of their logs is an ordinary
# > number.
#
# Beam search as `generate(num_beams=k)` runs it. Each step looks at the 2k best continuations, so that k can go
# on even when some of them end. A hypothesis that ends is kept only if it ranks among the first k. Finished
# hypotheses are ranked by the length-normalised score of §6:

# %%
print(inspect.getsource(beam.beam_search))

# %% [markdown]
# §5 and the tests check these functions token for token against `generate()` (greedy, sampling after the same seed,
# and beam search at widths 4 and 8, under several length penalties and all three stopping rules). The beam widget
# (§11) draws the same search through `beam_variants.traced_beam_search`, which records every step and is tested
# against the loop above.
#
# The same prompt, every LM, greedy and a beam of 4, with the oracle's verdict:

# %%
# NBVAL_CHECK_OUTPUT
prompt = ("my", "friend")
print(f"{'':17} {'the sentence, cut at 40 characters':40} tokens")
in_full = {}  # each model's greedy sentence, uncut
for name, model in left_to_right.items():
    for label, run in (
        ("greedy", g.greedy(model, g.encode_prompt(vocab, prompt), 30)),
        (
            "beam 4",
            g.beam_search(
                model, g.encode_prompt(vocab, prompt), width=4, max_new_tokens=30
            ),
        ),
    ):
        sentence, end = words_of(run, prompt), "</s>" if run.ended else "cut"
        row = f"{name:10} {label:6} {shown(sentence, 40):40} {len(run.ids):2} {end:4}"
        print(row, verdict(sentence))  # the tokens generated, and how it stopped
        if label == "greedy":
            in_full[name] = sentence
for name in ("FFNN (n=5)", "GPT (08)"):
    said = f"{name}, greedy, in full: {' '.join(in_full[name])}"
    print(textwrap.fill(said, 88, subsequent_indent="    "))

# %% [markdown]
# On this one prompt greedy search *loops* on every neural model: the FFNN, RNN and LSTM repeat themselves until the
# 30-token bound (`30 cut`: no `</s>`), and the GPT says "that eats the cake" twice before it ends (the table cuts
# sentences at 40 characters; the last lines print two of them whole): the loops Holtzman et al. describe. Section 7
# counts the GPT's greedy repetitions over 40 prompts (its `rep` column, a repeated bigram or a doubled word, which the
# language's own sentences have too, now and then). A beam of 4 ends most of them sooner, and shorter (not the RNN's).
# The trigram's "my friend gets paid ." is not in the language at all, not even in the full one: "gets" comes only after
# "make sure that …" or "check that …", which a model reading two words back cannot know. The oracle says where it
# fails, and the training split says where "gets" occurs:

# %%
# NBVAL_CHECK_OUTPUT
failure = CourseLanguage().score("my friend gets paid .".split()).failure
print(textwrap.fill(str(failure), 88))
with_gets = [" ".join(s) for s in corpus.load_split("train") if "gets" in s]
frames = sum(("sure that" in s or "check that" in s) for s in with_gets)
print(
    f"training sentences with 'gets': {len(with_gets):,};\n"
    f"inside 'make sure that …' or 'check that …': {frames:,}"
)

# %% [markdown]
# The same models, drawing at T = 1 and with top-p = 0.9 (seeded: change the seed for other sentences):

# %%
# NBVAL_IGNORE_OUTPUT
generator = torch.Generator().manual_seed(0)
for name, model in left_to_right.items():
    for label, settings in (("T = 1", {}), ("top-p .9", {"top_p": 0.9})):
        run = g.sample(
            model,
            g.encode_prompt(vocab, prompt),
            max_new_tokens=30,
            generator=generator,
            **settings,
        )
        sentence = words_of(run, prompt)
        print(f"{name:10} {label:8} {shown(sentence):46} {verdict(sentence)}")

# %% [markdown]
# The translation models of notebooks 07 (GRU encoder–decoders) and 08 (a transformer) go through the same functions.
# The GRU without attention is 07's smallest, 32 units (the bottleneck of 07's section 8, which gets almost no passage
# exactly right): a model that errs is where the strategies can part ways, likely because it is less sure of its words
# (unmeasured: the probability it gives its greedy words would say). Their own greedy loops (`model.greedy`) are the
# check: `tests/models/generation/test_generation.py` asserts that `generation.greedy` gives the same words.

# %%
# NBVAL_CHECK_OUTPUT
source_vocab, target_vocab = tc.vocabularies()
translators = {
    "GRU-32, no attention (07)": load("none_32").eval(),
    "GRU, additive attention (07)": load("additive_128").eval(),
    "transformer (08)": load("transformer_2x128").eval(),
}
pair = parallel.load("test")[0]
print("source:   ", " ".join(pair.source))
print("reference:", " ".join(pair.target))
for name, model in translators.items():
    conditioned = g.SourceConditioned(model, source_vocab.encode(list(pair.source)))
    own, _ = model.greedy(torch.tensor([conditioned.source_ids]))
    print(f"  {name}")
    for label, run in (
        ("greedy", g.greedy(conditioned, conditioned.target_prefix, 40)),
        (
            "beam 4",
            g.beam_search(
                conditioned, conditioned.target_prefix, width=4, max_new_tokens=40
            ),
        ),
    ):
        same = "= model.greedy" if label == "greedy" and run.content == own[0] else ""
        print(f"    {label:7} {' '.join(target_vocab.decode(run.content))}  {same}")

# %% [markdown]
# ## 5. Parity with Hugging Face `generate()` *(optional)*
#
# The GPT of notebook 08 holds a Hugging Face `GPT2LMHeadModel` (`gpt.hf`), so `generate()` runs on it. minGPT's
# `test_huggingface_import` is the pattern: the same model, the same prompt, the same tokens. The semantics matched here
# are `generate()`'s: beam search considers 2k candidates per step, a candidate that ends becomes a hypothesis only if
# it ranks in the top k, finished hypotheses are ranked by sum ÷ |Y|^α (|Y| the generated tokens, `length_penalty` = α),
# and `early_stopping` decides when the beam stops: `True` as soon as k hypotheses have ended; `False` when no running
# candidate can still beat the worst of them, estimated with the length it has now (Hugging Face's heuristic); `"never"`
# only when no candidate could beat them at any length up to the limit. **Warpers** are Hugging Face's name for the
# functions that reshape the next-token scores before sampling: temperature, then top-k, then top-p (which keeps the
# token that crosses p). Four checks follow, one per cell: greedy, beam search, the warpers, and sampling. First greedy,
# on four prompts (the first is `<s>` alone):


# %%
# NBVAL_CHECK_OUTPUT
def hf_generate(ids, **kwargs):
    """generate()'s sequence (prompt and generated ids) for one prompt."""
    idx = torch.tensor([ids])  # (1, T)
    with torch.no_grad():
        return gpt.hf.generate(idx, attention_mask=torch.ones_like(idx), **kwargs)[
            0
        ].tolist()


prompts = [
    g.encode_prompt(vocab, words)
    for words in ((), ("the",), ("the", "movie", "was"), ("my", "friend"))
]
same = sum(
    g.greedy(gpt, ids, 30).sequence
    == hf_generate(ids, max_new_tokens=30, do_sample=False)
    for ids in prompts
)
print(f"greedy: identical tokens on {same}/{len(prompts)} prompts")

# %% [markdown]
# Beam search, under three settings (widths 4 and 8, three length penalties, three stopping rules):

# %%
# NBVAL_CHECK_OUTPUT
for width, alpha, early in ((4, 1.0, False), (8, 2.0, "never"), (4, 0.5, True)):
    settings = {"max_new_tokens": 25, "length_penalty": alpha, "early_stopping": early}
    same = sum(
        g.beam_search(gpt, ids, width=width, **settings).sequence
        == hf_generate(ids, num_beams=width, do_sample=False, **settings)
        for ids in prompts
    )
    print(
        f"beam {width}, length_penalty={alpha}, early_stopping={early!s:5}: "
        f"identical on {same}/{len(prompts)}"
    )

# %% [markdown]
# The warpers: at every step of four sampled sentences, our warped distribution against the one Hugging Face's
# warpers give for the same scores:

# %%
# NBVAL_CHECK_OUTPUT
worst = 0.0
for settings in (
    {"temperature": 0.7},
    {"top_k": 5},
    {"top_p": 0.9},
    {"temperature": 1.3, "top_k": 40, "top_p": 0.95},
):
    run = g.sample(
        gpt,
        prompts[1],
        max_new_tokens=20,
        generator=torch.Generator().manual_seed(1),
        **settings,
    )
    for n in range(len(run.ids)):  # every step of a sampled sentence
        prefix = prompts[1] + run.ids[:n]
        logits = g.next_logits(gpt, prefix)  # (V,)
        ours = g.warp(logits, **settings).exp()  # (V,)
        theirs = torch.softmax(
            g.hf_warpers(**settings)(torch.tensor([prefix]), logits[None].clone()),
            dim=-1,
        )[0]
        worst = max(worst, float((ours - theirs).abs().max()))
print(f"warped distributions, every step: max |ours - HF| ≤ 1e-6: {worst <= 1e-6}")

# %% [markdown]
# Sampling itself, under the same seeds:

# %%
# NBVAL_CHECK_OUTPUT
same = 0
for seed in range(5):
    torch.manual_seed(seed)
    theirs = hf_generate(
        prompts[1], max_new_tokens=30, do_sample=True, top_p=0.9, top_k=0
    )
    torch.manual_seed(seed)
    same += g.sample(gpt, prompts[1], max_new_tokens=30, top_p=0.9).sequence == theirs
print(f"sampling with top_p=0.9 under the same seed: identical on {same}/5 seeds")

# %% [markdown]
# Sampling matches under the same seed because each step makes the draw `generate()` makes: one
# `torch.multinomial` on the float32 probabilities (1, V), from the global generator. `top_k=0` is passed to
# `generate()` because its default is 50. The tests also match beam search at widths 4 and 8 under six
# settings, and beam sampling (`beam_sample` against `generate(num_beams=4, do_sample=True)`). The tables of
# sections 7 and 10 draw a prompt's samples side by side, `sample_many(gpt, prefix, n)`: one model call a step for
# all n, and one draw on probabilities (n, V), the draw `generate(do_sample=True, num_return_sequences=n)` makes
# (also checked in the tests). Same walk, another random stream, faster: BENCHMARKS.md times section 7's table at
# 82 s one sample at a time and 21 s side by side.
#
# **Parity is with a release, not forever.** transformers 5.24 changed two things this section touches, and the
# course follows each release it admits (5.17 to 5.x; CI checks the oldest and the locked one):
# - *Beam sampling.* Up to 5.23, the 2k candidates drawn by `torch.multinomial` are considered in the order drawn;
#   from 5.24 on, `generate()` first sorts them by score. Under the same seed the two releases can keep different
#   beams, so `beam_sample` checks the installed version (`g.SORTS_DRAWN_BEAMS`) and does what it does. Greedy,
#   beam search and plain sampling did not change.
# - *The KV cache's name.* A model call takes the cache as `cache=` from 5.24 on, and `past_key_values=` before; the
#   old name still works in 5.24 but prints a deprecation warning. `Decoder` asks the model's own signature which
#   name it takes (`g.cache_argument`). Here:

# %%
import transformers

print(
    f"transformers {transformers.__version__}: "
    f"beam sampling sorts its draws: {g.SORTS_DRAWN_BEAMS}; "
    f"the cache is passed as {g.cache_argument(gpt.hf)}="
)

# %% [markdown]
# **Speed.** Our loops against `generate()`'s, best of 3, at most 40 new tokens (`time_generation`; both stop at
# `</s>`), and the KV cache:
# the time per generated token with and without `use_cache`, as the sequence grows (`time_per_token`).

# %%
# NBVAL_IGNORE_OUTPUT
timing = speed.time_generation(gpt, prompts[1], max_new_tokens=40, width=4)
for kind, (ours, theirs, ratio) in timing.items():
    print(
        f"{kind:7} ours {1000 * ours:6.1f} ms, generate() {1000 * theirs:6.1f} ms: "
        f"ratio {ratio:.2f}"
    )
per_token = speed.time_per_token(
    gpt, prompts[1], lengths=budget(full=(8, 16, 32, 64, 120), fast=(8, 32))
)
fig, ax = plt.subplots(figsize=(6, 3.2))
lengths = list(per_token)
ax.plot(
    lengths, [1000 * per_token[n][0] for n in lengths], "o-", label="use_cache=True"
)
ax.plot(
    lengths, [1000 * per_token[n][1] for n in lengths], "s--", label="use_cache=False"
)
ax.set(
    xlabel="tokens generated",
    ylabel="ms per token",
    title="generate() on the course GPT, with and without KV cache",
)
ax.legend()
plt.show()

# %% [markdown]
# Without the cache every step re-reads the whole sequence, so a token costs more the longer the sequence; with it each
# step reads one new token against cached keys and values, so the gap should grow with the length. On this 2-layer,
# 64-wide model the fixed cost of a step likely dominates (a profile of one step would tell), and a single timing run is
# noisy, the more so on a loaded machine: the two curves can cross, and one plot may show no clear trend at all.
# BENCHMARKS.md's table, best of 10 on the course's machine, has the cache about 1.5× faster per token at 120 tokens.
# The first lines of the cell time our loops against `generate()`'s: ours are about as fast (ratios near 1;
# BENCHMARKS.md's best of 10, with `</s>` forbidden so that every run writes 40 tokens, has greedy and beams of 4 and 8
# at 0.69–0.83), which is all such a timing can say. On GPT-2-sized models and long contexts the cache is what makes
# generation affordable.

# %% [markdown]
# ## 6. Length normalisation: eq. 13.16, Hugging Face and GNMT
#
# Log-probabilities add, and each word's is negative, so the raw score Σ log P favours short hypotheses. The slides'
# "Practical Points" normalise by length:
#
# $$\text{score}(y) = \log P(y \mid x) = \frac{1}{t} \sum_{i=1}^{t} \log P(y_i \mid y_1, \dots, y_{i-1}, x)
# \qquad (13.16)$$
#
# > **Slide check.** The slide (CSE538, "Practical Points", eq. 13.16 of J&M) writes score(y) = log P(y | x) = (1/t) Σ
# > log P(yᵢ | …). In fact the first equality is false: Σᵢ log P(yᵢ | y₁ … yᵢ₋₁, x) *is* log P(y | x), so the
# > right-hand side is log P(y | x) / t, the log-probability per token. It is a score that ranks hypotheses of
# > different lengths, not a log-probability; read the equation as score(y) = (1/t) log P(y | x).
#
# Two variants are in use:
# - Hugging Face `generate()`: Σ log P ÷ |Y|^α, `length_penalty` = α (default 1.0), |Y| the generated tokens
#   (prompt excluded, `</s>` included). At α = 1 it is eq. 13.16's right-hand side; α = 0 is the raw sum.
# - GNMT (Wu et al. 2016): Σ log P ÷ ((5 + |Y|) / 6)^α, with α tuned on development data.
#
# The three are not the same ranking. An unnormalised width-16 beam (Σ log P) that never stops early
# (`early_stopping="never"`) finishes 16 hypotheses, and each score reranks that one pool; here is the first test
# prompt where eq. 13.16, HF's and GNMT's scores do not all crown the same hypothesis (α = 0.6):

# %%
# NBVAL_CHECK_OUTPUT
test_prompts = ga.prompts_from_test(40)
example_prompt, pool, order = ga.ranking_example(
    gpt, vocab, test_prompts, width=16, alpha=0.6
)
print("prompt:", " ".join(example_prompt))
for name, ranked in order.items():
    best = pool[ranked[0]]
    best_words = words_of(g.Generation([], best[0], 0, 0, True), example_prompt)
    print(
        f"  {name:10} best: {' '.join(best_words):36} "
        f"(|Y| = {len(best[0])}, Σ log P = {best[1]:.2f})"
    )

# %% [markdown]
# The raw sum picks a short sentence; eq. 13.16 divides by t and picks a long one; |Y|^0.6 and GNMT's gentler
# penalty sit in between. Which is "right" is a choice: the model's probabilities say how long its sentences run when
# sampled (section 10), not which length a search for the single best one should favour. Section 9 measures what two
# of the four, the raw sum and eq. 13.16, do to the length of what beam search writes; Hugging Face's α and GNMT's
# penalty are not measured there.

# %% [markdown]
# ## 7. Every strategy, judged by the oracle
#
# Holtzman et al. (2020) judged generated text against human text. We have better: the oracle gives the exact
# probability of every sentence, and the language's entropy rate is known. The **entropy rate** is the language's mean
# negative log-probability per token, −E[log P(sentence)] ÷ E[tokens], here estimated from 20,000 oracle samples; its
# exponential is the perplexity a perfect model would have on the language as a whole (on one finite test set the
# oracle's own perplexity differs a little: notebook 08's 5.460 on the test split, whose sentences happen to be a
# little more probable than the language's average):

# %%
# NBVAL_CHECK_OUTPUT
print(
    f"entropy rate {reference['entropy_rate']:.2f} nats/token "
    f"(perplexity {reference['perplexity']:.1f}); "
    f"sentences have {reference['mean_length']:.1f} words on average"
)

# %% [markdown]
# For each strategy of the lecture, and the settings people use: 40 prompts (the first one or two words of test
# sentences); greedy and beam search give one sentence per prompt, each sampling strategy draws five per prompt
# (200). `judge` reports, for the sentences a strategy wrote, each judged whole with its prompt's words (see
# `generation_analysis`'s docstring):
# - **gram**: the share the oracle calls grammatical (probability > 0);
# - **nll/t** and **ppl**: the oracle's negative log-probability per token of the grammatical ones, and its
#   exponential, beside the language's entropy rate and perplexity (the line above). Lower than the language means
#   *more probable than typical text*: "average sounding";
# - **d-1, d-2, d-3**: distinct n-grams ÷ all n-grams (diversity); **rep**: the share of sentences with a repeated
#   bigram or a word said twice in a row (Holtzman's "repetition", adapted to short sentences);
# - **len**, **med** and **TV**: mean and median length, and the total variation distance between the length
#   distribution and the language's (0 = the same);
# - **unfin**: the share of sentences cut off at the length limit (40 tokens) before writing `</s>`;
# - **s**: the seconds the strategy took on this machine (they vary from machine to machine).
#
# The last row samples the oracle itself at T = 1: the language's own numbers. The **n** column matters for the
# diversity columns: distinct n-grams ÷ all n-grams falls as the sample grows, because a language has only so many
# words. Compare d-1 to d-3 only between rows with the same n (40 or 200); the oracle's 2,000 sentences are a check
# on the entropy rate, not on diversity. The cell after the table measures the effect.

# %%
# NBVAL_IGNORE_OUTPUT
rows = ga.strategy_table(
    gpt, vocab, lang, test_prompts, samples_per_prompt=5, reference=reference
)
rows.append(ga.oracle_samples(lang, 2000, reference=reference))
by_name = {row["name"]: row for row in rows}
print(ga.format_table(rows))

# %%
# NBVAL_CHECK_OUTPUT
oracle_by_size = {
    n: ga.oracle_samples(lang, n, reference=reference) for n in (40, 200, 2000)
}
print("the oracle's own sentences, by sample size:")
for n, row in oracle_by_size.items():
    print(
        f"  n = {n:5}: d-1 {row['distinct_1']:.2f}  d-2 {row['distinct_2']:.2f}  "
        f"d-3 {row['distinct_3']:.2f}"
    )
small, medium, large = oracle_by_size.values()
print(
    "the same language, more sentences, lower distinct-n at every n-gram size:",
    all(
        small[f"distinct_{k}"] > medium[f"distinct_{k}"] > large[f"distinct_{k}"]
        for k in (1, 2, 3)
    ),
)

# %% [markdown]
# What the table says, as verdicts that hold on every machine (the exact sampled numbers can move by a sentence or
# two between CPUs). The temperature line compares T = 0.5 with T = 1.2 only: between T = 1 (pure sampling) and
# T = 1.2 the table's nll/t does not fall in this run (1.863, 1.855), a gap within noise, and nll/t counts only the
# grammatical sentences, fewest at T = 1.2 (87.5 %), so its worst sentences drop out of it.

# %%
# NBVAL_CHECK_OUTPUT
language = reference["entropy_rate"]
for claim, holds in ga.strategy_verdicts(by_name, language):
    print(f"{claim}:", holds)

# %%
# NBVAL_IGNORE_OUTPUT
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
markers = {"greedy": "s", "beam": "D", "sample": "o", "oracle": "*"}
for row in rows:
    point, marker = (row["nll_per_token"], row["grammatical"]), markers[row["kind"]]
    left.scatter(*point, marker=marker, s=70 if marker == "*" else 40)
    left.annotate(
        row["name"], point, fontsize=8, xytext=(3, 3), textcoords="offset points"
    )
left.axvline(language, color="k", ls=":", label=f"entropy rate {language:.2f}")
left.set(xlabel="oracle's NLL per token (nats) of the grammatical sentences")
left.set(ylabel="share grammatical")
left.set_title("probable (left) or like the language (the dotted line)?")
left.legend(loc="lower left")
lengths = sorted(reference["lengths"])
shares = [reference["lengths"][n] for n in lengths]
right.plot(lengths, shares, "k-", lw=3, alpha=0.4, label="the language")
for name in ("greedy", "beam 16", "beam 16 (norm)", "pure sampling"):
    histogram = by_name[name]["length_histogram"]
    right.plot(lengths, [histogram.get(n, 0) for n in lengths], "o-", ms=3, label=name)
right.set(xlabel="sentence length (words)", ylabel="share", xlim=(0, 20))
right.set_title("lengths against the language's")
right.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# **Holtzman et al. 2020, Table 1, beside ours.** Their "repetition" is the share of GPT-2 Large generations that end
# in a repeating loop; ours is the share of course sentences with a repeated bigram or a doubled word, and the
# oracle's samples stand where they had human text.

# %%
# NBVAL_IGNORE_OUTPUT
print(f"{'method':18} {'Holtzman et al.':>16} {'ours':>7}")
for method, theirs, ours in ga.holtzman_comparison(rows):
    print(f"{method:18} {theirs:15.2f}% {ours:6.1f}%")

# %%
# NBVAL_CHECK_OUTPUT
repetition = {method: ours for method, _, ours in ga.holtzman_comparison(rows)}
print(
    "greedy repeats most, as in Holtzman et al.:",
    repetition["greedy"] == max(repetition.values()),
)
print(
    "nucleus (0.95) repeats about as often as the reference text (within 3 points):",
    abs(repetition["nucleus (p=0.95)"] - repetition["human"]) < 3,
)
print(
    "beam 16 repeats less than greedy:",
    repetition["beam (b=16)"] < repetition["greedy"],
)

# %% [markdown]
# Two of Holtzman's findings carry over: greedy decoding loops (section 4's FFNN: "my friend that eats the cake that
# eats the cake …"), and nucleus sampling repeats about as often as the reference text. The third does not: their
# width-16 beam repeats 29 % of the time, ours not once in its 40 sentences (the table's `rep` for beam 16). Their
# generations were open-ended web text of up to 200 tokens; ours are single sentences that end: after a prompt a wide
# beam ends *early* (section 9), likely before a loop can start (repetition against each sentence's length would tell;
# from `<s>` alone, section 8, the widest beam finds one of the language's two modes, its two most probable sentences,
# longer than what beams of 4 and 16 find there). The other half of their argument, that maximisation writes text far
# more probable than real text, holds here too, measured against the truth (their likelihoods are GPT-2 Large's own,
# ours the oracle's): greedy and beam search sit well left of the entropy rate in the plot, at nll/t 1.162 to 1.414 (the
# normalised beams furthest left) against 1.726 (on their grammatical sentences: greedy's other 10 % and beam 16
# (norm)'s 2.5 % have no probability to count).

# %% [markdown]
# ## 8. "Most probable is not typical", measured
#
# The slide: beam search "focuses on the most probable, which is the most typical. Results in very 'average sounding'
# utterances." The oracle can find the language's most probable sentences **exactly**:
# `best_sentences.most_probable_search` is a best-first (uniform-cost) search over prefixes, each scored by its prefix
# probability under the oracle (the chance that a sentence begins with it). It pops the most probable prefix from a
# priority queue and pushes its extensions, so the first complete sentences it pops are the most probable ones, in
# order. Why: extending a prefix can only lower its probability (each word multiplies it by a number ≤ 1), so when a
# complete sentence is popped, every prefix still waiting, and every sentence that could grow from it, is at most as
# probable (the module docstring proves it).

# %%
# NBVAL_CHECK_OUTPUT
found = bs.most_probable_search(lang, k=5)


def rank_key(sentence):
    """Most probable first; equals (to 9 digits) by their text, on every machine."""
    return -round(sentence.logprob, 9), sentence.text()


# the search's own order among equals depends on float rounding
ranked = sorted(found.sentences, key=rank_key)
print(f"the 5 most probable sentences ({found.expansions} prefixes expanded):")
for sentence in ranked:
    print(
        f"  p = {sentence.prob:.4f}  {sentence.text():48} {sentence.length} words, "
        f"{-sentence.logprob_per_token:.2f} nats/token"
    )
print(
    "the first two tie (their log-probabilities agree to 9 digits):",
    math.isclose(ranked[0].logprob, ranked[1].logprob, rel_tol=1e-9),
)
# one of the two modes; the other differs by one letter and has the same probability
mode = ranked[0]
typical = bs.typicality(lang, mode, n=20_000, seed=0)
print(typical.summary())
times = math.exp(mode.logprob - typical.median_logprob)
print(f"the median sentence is {times:,.0f} times less probable than the mode")

# %%
# NBVAL_IGNORE_OUTPUT
samples, sample_logprobs = bs.sample_logprobs(lang, 20_000, 0)
# nats per token, </s> counted
per_token = [-lp / (len(words) + 1) for words, lp in zip(samples, sample_logprobs)]
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.2))
bulk = "20,000 sentences of the language"
left.hist(sample_logprobs, bins=80, color="tab:blue", alpha=0.7, label=bulk)
left.axvline(mode.logprob, color="tab:red", lw=2, label="the most probable sentence")
left.set(xlabel="log P(sentence)", ylabel="count")
left.set_title("per sentence: the mode is in the bulk's upper tail")
left.legend(fontsize=8)
right.hist(per_token, bins=80, color="tab:blue", alpha=0.7)
right.axvline(-mode.logprob_per_token, color="tab:red", lw=2)
right.axvline(typical.entropy_rate, color="k", ls=":", label="entropy rate")
right.set(xlabel="nats per token", title="per token: far below the entropy rate")
right.legend(fontsize=8)
plt.show()
for band in (0.1, 0.5):
    near = sum(abs(x - typical.entropy_rate) <= band for x in per_token)
    share = near / len(per_token)
    print(f"sentences within ±{band} nats/token of the entropy rate: {share:.0%}")
mode_rate = -mode.logprob_per_token
cheap = statistics.fmean(x <= mode_rate + 1e-9 for x in per_token)  # 1e-9: the ties
modes = [statistics.fmean(words == s.words for words in samples) for s in ranked[:2]]
print(f"sentences at or below the mode's {mode_rate:.2f} nats/token: {cheap:.1%}")
print(f"  of which the two modes: {modes[0]:.2%} and {modes[1]:.2%}")
print(
    f"nats/token per sentence: mean {statistics.fmean(per_token):.2f}, "
    f"median {statistics.median(per_token):.2f}, sd {statistics.stdev(per_token):.2f}"
)

# %% [markdown]
# Two sentences tie for the most probable, "the hunter …" and "the hunters …", at p = 0.0073 and 0.49 nats per token
# each: the language has no single mode. Call either one *the mode*. The language spends 1.73 nats per token (its
# entropy rate), the median sentence is 1,962 times less probable than the mode, and of 20,000 sampled sentences none
# but the two modes spends as few nats per token (the lines under the plots). So the slide's "most typical" is half
# right: the modes are the sentences a sampler is most likely to draw (0.70 % and 0.78 % of the samples), but very
# probable text is **not** typical per token. Per sentence, the mode sits at the top edge of the bulk, 1.1 sd above the
# mean log-probability (a wide sd: the left plot's long tail); per token it is far below what nearly every sentence of
# the language spends (the right plot). Information theory's *typical set* is about long sequences: for them almost all
# the probability sits on sequences of about the entropy rate per token (Cover & Thomas, ch. 3 for independent symbols,
# §16.8 for ergodic sources, whose long-run averages equal expectations). Per token, these sentences' cost spreads
# widely (sd 0.67 nats/token), likely because they are short (the spread among sentences of one length would tell): only
# 7 % of them are within ±0.1 nats/token of the entropy rate, 43 % within ±0.5.
#
# > **Slide check.** The slide (CSE538, "Beam Search") says the most probable "is the most typical". In fact it is, with
# > its twin, the sentence likeliest to be drawn, but far from typical in information theory's sense: 0.49 nats/token
# > against the entropy rate's 1.73. "Average sounding" is right in the sense of *bland*: the mode, not the average.
#
# Stahlberg & Byrne (2019) ran exact search on an NMT model (a transformer): the translation *the model* scored highest
# was the **empty** one for 51.8 % of sentences, a model error. Ours is the language's own mode, found exactly: atypical
# per token, but a real sentence. The course language has no empty sentence, and its modes are long (9 words, against
# 7.5 on average). From `<s>`, beams of 4 and 16 write 5-word sentences (below), the language's 4th and 3rd most
# probable: the narrower beams likely miss the longer mode, a failure of the search rather than a taste for short
# sentences. After a prompt, see section 9. What does beam search find from `<s>` alone?

# %%
# NBVAL_CHECK_OUTPUT
for label, sentence in (("language modes:", mode), ("(tied)", ranked[1])):
    print(f"{label:16}{sentence.text():48} p = {sentence.prob:.4f}")
for width in (1, 4, 16, 64):
    run = g.beam_search(
        gpt, [vocab.bos_id], width=width, max_new_tokens=30, normalisation="none"
    )
    sentence = words_of(run)
    print(f"GPT, beam {width:2}:   {' '.join(sentence):48} {verdict(sentence)}")

# %% [markdown]
# Greedy search from `<s>` alone repeats itself ("the movie was not good and the movie was not bad .") and writes a
# sentence that is not in the language. Wider beams find more and more probable sentences: beams of 4, 16 and 64 find
# the language's 4th, 3rd and 1st most probable (one of its two modes), so the GPT has learnt where they are. Beam
# search is a search for the model's mode (whether width 64 reaches the GPT's own is not measured: no exact search of
# the GPT runs here); the slide's complaint is about what the mode is.
#
# ## 9. The beam search curse
#
# Koehn & Knowles (2017) saw translation quality *fall* as the beam widened. Murray & Chiang (2018), "Correcting
# Length Bias in Neural Machine Translation": "whereas a wider beam should in principle help translation, it often
# hurts NMT", and NMT "has a tendency to produce translations that are too short"; the two problems are closely
# related, and "correcting the brevity problem almost eliminates the beam problem". A wider beam is a better search
# for the highest Σ log P, and in NMT, as here after a prompt, the highest Σ log P often belongs to short outputs (not
# always: from `<s>`, section 8's widest beam finds a 9-word mode). Eq. 13.16 is one correction. Measured on the GPT,
# 40 prompts:

# %%
# NBVAL_CHECK_OUTPUT
widths = (1, 2, 4, 8, 16)
curve = ga.beam_length_curve(
    gpt, vocab, test_prompts, widths=widths, normalisation=("none", "mean")
)
print(f"{'width':>22} " + " ".join(f"{w:>5}" for w in widths))
for norm, label in (("none", "Σ log P"), ("mean", "eq. 13.16")):
    print(f"{label:>22} " + " ".join(f"{curve[norm][w]:5.1f}" for w in widths))
print(f"{'the language':>22} {reference['mean_length']:5.1f}")

# %% [markdown]
# And for the translation models, where the reference length is known for each sentence: first the GRU without
# attention on 20 test passages, then all three on 20 long passages (15–21 source words, longer than the training
# passages), where 07's models make more errors:

# %%
# NBVAL_CHECK_OUTPUT
long_pairs = parallel.load("test_long_15_21")[:20]
translation_widths = (1, 4, 16)
gru_32 = translators["GRU-32, no attention (07)"]
test_pairs = parallel.load("test")[:20]
within = ga.translation_length_curve(
    gru_32, source_vocab, test_pairs, widths=translation_widths, normalisation="none"
)
print(
    "test passages, GRU-32 without attention, Σ log P: "
    f"reference {within['reference']:.1f},"
    "\n  widths 1/4/16: "
    + " / ".join(f"{within['none'][w]:.1f}" for w in translation_widths)
)
mean_reference = statistics.fmean(len(p.target) for p in long_pairs)
print(
    f"{f'mean output length (reference {mean_reference:.1f})':44}"
    + " ".join(f"{'width ' + str(w):>9}" for w in translation_widths)
)
translation_curves = {}
for name, model in translators.items():
    translation_curves[name] = ga.translation_length_curve(
        model, source_vocab, long_pairs, widths=translation_widths
    )
    for norm, label in (("none", "Σ log P"), ("mean", "eq. 13.16")):
        values = translation_curves[name][norm]
        print(
            f"{name + ', ' + label:44}"
            + " ".join(f"{values[w]:9.1f}" for w in translation_widths)
        )

# %%
# NBVAL_IGNORE_OUTPUT
print(f"passages whose translation changes with the width (of {len(long_pairs)}):")
for name in translators:
    # normalisation -> passages whose output changes with the width
    changed = translation_curves[name]["changed"]
    print(f"  {name:30} Σ log P {changed['none']}, eq. 13.16 {changed['mean']}")

# %%
# NBVAL_IGNORE_OUTPUT
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
for norm, label in (("none", "Σ log P"), ("mean", "eq. 13.16")):
    left.plot(widths, [curve[norm][w] for w in widths], "o-", label=label)
left.axhline(reference["mean_length"], color="k", ls=":", label="the language")
left.set(xscale="log", xticks=widths, xticklabels=widths, xlabel="beam width")
left.set(ylabel="mean length (words)", title="GPT (08), 40 prompts")
left.legend()
for name in translators:
    means = [translation_curves[name]["none"][w] for w in translation_widths]
    right.plot(translation_widths, means, "o-", label=name)
references = translation_curves[name]["reference"]
right.axhline(references, color="k", ls=":", label="references")
right.set(xscale="log", xticks=translation_widths, xticklabels=translation_widths)
right.set(xlabel="beam width", ylabel="mean output length")
right.set_title("translation, long passages, Σ log P")
right.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# Measured here: the curse's length side, not Koehn & Knowles' fall in quality. On the GPT: up to width 8 a wider beam
# writes shorter sentences (8.1 to 5.2 words), not at 16; eq. 13.16 keeps 7.0–7.3 words at widths 2 to 16, near the
# language's 7.5 (most of the loss undone from width 4 on, under half at width 2). The weakest translator, the GRU-32,
# shows it on both sets; on the long passages, the only set run with eq. 13.16, it brings back most of the length lost
# at width 16, part of it at width 4. Greedy is already short there for all three (11.7, 13.0 and 13.2 words against
# 17.1), and eq. 13.16 does not fix a model's own brevity (Murray & Chiang's per-word reward is not run). Width leaves
# the attention models' lengths and nearly all their translations as they are (the counts under the lengths), likely
# because each is sure of its words (unmeasured, as in section 4). Beam width is a knob that trades **search error**
# (missing the output the model scores highest) for the model's bias towards short outputs.

# %% [markdown]
# ## 10. Sampling at T = 1: the oracle's samples against the model's
#
# Ancestral sampling at T = 1 from a *perfect* model would reproduce the language's entropy rate, lengths and
# grammaticality. The oracle is that perfect model, so sampling it is the yardstick; sampling the GPT shows its own
# errors. Unconditional, 500 sentences each:

# %%
# NBVAL_IGNORE_OUTPUT
draws = {"samples_per_prompt": 500, "seed": 1, "reference": reference}
(model_row,) = ga.strategy_table(
    gpt, vocab, lang, [()], strategies={"GPT, T=1": {"kind": "sample"}}, **draws
)
oracle_row = ga.oracle_samples(lang, 500, seed=2, reference=reference)
print(ga.format_table([oracle_row, model_row]))
bad = [s for s in model_row["sentences"] if not lang.score(s).grammatical]
good = [s for s in model_row["sentences"] if lang.score(s).grammatical]
early = sum(lang.score(s).failure.position < 4 for s in bad)
print(
    f"\nthe GPT's ungrammatical samples: {len(bad)}, "
    f"{statistics.fmean(map(len, bad)):.1f} words on average "
    f"(its grammatical ones: {statistics.fmean(map(len, good)):.1f});\n"
    f"failing by word 4: {early}"
)
print("some of them:")
for sentence in bad[:4]:
    said = f"{' '.join(sentence)} — {lang.score(sentence).failure}"
    print(textwrap.fill(said, 88, initial_indent="   ", subsequent_indent="     "))
# section 7: the same sampling, after one or two words of a test sentence
prompted = by_name["pure sampling"]
gap, gap_se = ga.share_difference(prompted, model_row)
print(
    f"\ngrammatical: section 7's pure sampling {prompted['grammatical']:.1%} "
    f"of {prompted['n']}, here {model_row['grammatical']:.1%} of {model_row['n']};\n"
    f"difference {100 * gap:+.1f} points, standard error {100 * gap_se:.1f}"
)

# %%
# NBVAL_CHECK_OUTPUT
print(
    "the oracle's samples: all grammatical, entropy rate within 0.1:",
    oracle_row["grammatical"] == 1.0
    and abs(oracle_row["nll_per_token"] - language) < 0.1,
)
print(
    "the GPT's samples: between 80 % and 95 % grammatical:",
    0.8 < model_row["grammatical"] < 0.95,
)
print(
    "its grammatical samples have the language's entropy rate, within 0.1:",
    abs(model_row["nll_per_token"] - language) < 0.1,
)
print("its lengths are the language's (TV < 0.1):", model_row["length_tv"] < 0.1)
print(
    "section 7's pure sampling and this: grammaticality within two standard errors:",
    abs(gap) < 2 * gap_se,
)

# %%
# NBVAL_IGNORE_OUTPUT
print("section 7's cut rows against its pure sampling, grammatical:")
cuts = ("T=0.5", "T=0.8", "top-k 5", "top-k 40", "top-p 0.5", "top-p 0.9", "top-p 0.95")
for name in cuts:
    cut_gap, cut_se = ga.share_difference(by_name[name], prompted)
    print(
        f"  {name:10} {100 * cut_gap:+5.1f} points, "
        f"{cut_gap / cut_se:.1f} standard errors"
    )

# %% [markdown]
# The oracle's samples reproduce the language: every sentence grammatical and nll/t within 0.1 nats/token of the entropy
# rate (the first check). The GPT's samples at T = 1 are the GPT's distribution, errors included: its grammatical
# sentences spend what the language spends (nll/t within 0.1 of the entropy rate), and all its samples together have the
# language's lengths (a TV under 0.1: the checks), but about one in ten is not a sentence of the language at all, where
# the GPT put probability that the language does not. The line under the table says what they are like: longer than its
# grammatical sentences on average (likely because the longer a sentence runs, the more words can break a rule; or a
# broken sentence runs on: the failure positions against the lengths would tell), and only a few fail within the first
# four words. Section 7's pure-sampling row starts every sentence with one or two words of a real test sentence, which
# the GPT does not have to get right itself; here it writes each sentence from `<s>`. That could make the prompted row
# more grammatical, but the measurement cannot tell: the two rows differ by less than one standard error (the last line
# under the table), within noise. Temperature < 1, top-k and top-p likely cut the tail where such errors live: in this
# run, five of those seven rows in section 7 are more grammatical than pure sampling by more than two standard errors
# (the seven gaps share one pure-sampling row, so a sentence or two there moves them all); T = 0.5 and top-k 5 are ahead
# by 4.5 points, 1.8 standard errors, within noise (the lines above): at n = 200, section 7's column separates only rows
# several points apart. The strong cuts remove some of the language's real variety with it: T = 0.5, top-k 5 and top-p
# 0.5 have a much lower nll/t and fewer distinct n-grams, while the mild ones (T = 0.8, top-k 40, top-p 0.9 and 0.95)
# stay nearer pure sampling, top-p 0.95 even a little above it in nll/t (by 0.04 nats/token, within sampling noise: with
# section 8's per-sentence sd of 0.67, the language's standing in for the GPT's, a row of about 200 sentences has a
# standard error near 0.05, and the gap between two such rows about √2 times that).

# %% [markdown]
# ## 11. Widgets
#
# **Sampling knobs.** Temperature, top-k and top-p reshape the GPT's next-word distribution (left); the oracle's
# exact distribution is beside it. Words the cut removes are greyed. *Sample* draws continuations, each with the
# oracle's verdict. Try T → 0 (greedy), then T = 2, then top-p = 0.5.

# %%
from course_utils.widgets.sampling_demo import SamplingDemo

sampling_demo = SamplingDemo(model=gpt, vocab=vocab, oracle=lang)
sampling_demo.box

# %% [markdown]
# **Beam search, step by step.** The slide's yes/ok tree first: width 1 is greedy (*yes yes*, .20), width 2 finds
# *ok ok* (.28). Then a course prompt: pruned branches are greyed, finished hypotheses carry their score; switch the
# length normalisation and watch the winner change.

# %%
from course_utils.widgets.beam_demo import BeamSearchDemo

beam_demo = BeamSearchDemo(model=gpt, vocab=vocab)
beam_demo.box

# %% [markdown]
# ## 12. Bad input gets a clear message

# %%
# NBVAL_CHECK_OUTPUT
attempts = {
    "an unknown word": lambda: g.encode_prompt(vocab, ["the", "zebra"]),
    "an empty prefix (not even <s>)": lambda: g.greedy(gpt, [], 10),
    "top-p outside (0, 1]": lambda: g.sample(gpt, prompts[1], top_p=0.0),
    "a negative temperature": lambda: g.warp(torch.zeros(5), temperature=-1.0),
    "a beam of width 0": lambda: g.beam_search(gpt, prompts[1], width=0),
    "an unknown normalisation": lambda: g.beam_search(
        gpt, prompts[1], normalisation="average"
    ),
    "more tokens than the GPT's context": lambda: g.greedy(gpt, prompts[1], 500),
    "an empty source sentence": lambda: g.SourceConditioned(
        translators["transformer (08)"], []
    ),
    "a node the slide's tree does not have": lambda: sg.jm_tree_lm(("ok", "ok", "ok")),
}
for what, attempt in attempts.items():
    try:
        attempt()
        print(f"{what}: no error!")
    except CourseInputError as error:
        print(f"{what}: {error}\n")

# %% [markdown]
# And T = 0 is not an error: it is the limit of T → 0, all the probability on the most probable word, so sampling
# at T = 0 *is* greedy search (nanoGPT's `logits / temperature` divides by zero there, nanoGPT#738):

# %%
# NBVAL_CHECK_OUTPUT
cold = g.sample(
    gpt,
    prompts[1],
    max_new_tokens=30,
    temperature=0.0,
    generator=torch.Generator().manual_seed(0),
)
print(
    "sampling at T = 0 gives greedy's sentence:",
    cold.ids == g.greedy(gpt, prompts[1], 30).ids,
)
print(
    "and at T = 1e-6 too:",
    g.sample(gpt, prompts[1], max_new_tokens=30, temperature=1e-6).ids == cold.ids,
)

# %% [markdown]
# ## 13. Exercises
#
# **Exercise 1.** Top-p (nucleus) filtering of one next-word distribution: keep the most probable words until their
# mass reaches p (the word that crosses p is kept), set the others to 0, renormalise.

# %% tags=["exercise"]
from course_utils.exercises.generation import (
    check_beam_step,
    check_length_normalised_score,
    check_top_p,
)


def top_p_filter(probs, p):
    """probs (V,) summing to 1, p in (0, 1] → the filtered, renormalised (V,)."""
    return None  # your code here


_ = check_top_p(top_p_filter)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def top_p_filter(probs, p):
#     ranked, order = torch.sort(probs, descending=True)           # (V,) most probable first
#     mass_before = torch.cumsum(ranked, dim=0) - ranked           # the mass of the better words
#     keep_sorted = mass_before < p                                # the word crossing p is kept
#     keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)   # back to vocabulary order
#     kept = probs * keep
#     return kept / kept.sum()
# ```
# </details>

# %% [markdown]
# **Exercise 2.** One step of beam search: given each running beam's log-probability (k,) and each beam's
# next-word log-probabilities (k, V), return the `width` best continuations of all k·V: beam index, word and total.


# %% tags=["exercise"]
def beam_step(beam_logprobs, next_logprobs, width):
    """(k,), (k, V), int → beam_index (width,), token (width,), total (width,)."""
    return None  # your code here


_ = check_beam_step(beam_step)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def beam_step(beam_logprobs, next_logprobs, width):
#     totals = beam_logprobs[:, None] + next_logprobs              # (k, V): log-probabilities add
#     best = torch.topk(totals.flatten(), width)                   # the width best of all k·V
#     V = next_logprobs.shape[1]
#     return best.indices // V, best.indices % V, best.values      # beam, word, total
# ```
# </details>

# %% [markdown]
# **Exercise 3.** The length-normalised score of a finished hypothesis from its t log-probabilities: eq. 13.16
# (`"mean"`), Hugging Face's `length_penalty` (`"hf"`) and GNMT's (`"gnmt"`).


# %% tags=["exercise"]
def normalised_score(logprobs, kind, alpha):
    """logprobs (t,), kind in {"mean", "hf", "gnmt"}, alpha a float → the score."""
    return None  # your code here


_ = check_length_normalised_score(normalised_score)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def normalised_score(logprobs, kind, alpha):
#     t, total = len(logprobs), float(logprobs.sum())
#     if kind == "mean":
#         return total / t                           # eq. 13.16
#     if kind == "hf":
#         return total / t ** alpha                  # generate()'s length_penalty
#     return total / ((5 + t) / 6) ** alpha          # GNMT
# ```
# </details>

# %% [markdown]
# ## Where the course stops
#
# Part 3 of the CSE538 deck opens with "Pretraining; FTing the LM; **Instruction Tuning**", whose first two topics
# notebook 09 covers; the third, and the slide "**RAG, Few-Shot, Zero-Shot**" just before the generation slides, this
# course does not reach. Each needs a model far larger than ours and text written by people for people, so here is only
# what they are:
# - **Instruction tuning** fine-tunes a pretrained LM on (instruction, answer) pairs written for many tasks, so that
#   it follows a request it was never trained on; the next stage, learning from human preferences, is what made
#   chat models.
# - **Few-shot** and **zero-shot** use of an LM (GPT-3, Brown et al. 2020) changes no weight: the prompt holds a task
#   description and, for few-shot, a handful of solved examples, and the LM continues the text. The strategies of
#   this notebook are what writes the continuation.
# - **RAG** (retrieval-augmented generation, Lewis et al. 2020) first retrieves passages relevant to the question
#   from a document collection and conditions the answer on them (Lewis et al. join each passage to the input of a
#   generator fine-tuned with the retriever; chat systems put them in the prompt), so that the answer can rest on text
#   the model was not trained on.
#
# The course language has none of the scale these need: a 2-layer GPT trained on 60,000 sentences of a 605-word
# language learns the language, not how to follow instructions. What the course gives instead is the thing those
# systems lack: a known truth to score every model and every decoding strategy against.

# %% [markdown]
# ## Left out, and where to read it
#
# Everything else on the deck's generation slides is run above, or named in "Where the course stops".
#
# - **"Combine beam and random walk for more novelty"** (the slides' last practical point): `beam_sample` is written and
#   the tests match it to `generate(num_beams=k, do_sample=True)` (section 5 says how), but section 7's table does not
#   judge it, so its novelty is not measured here. Kool, van Hoof and Welling (2019), "Stochastic Beams and Where to
#   Find Them", study sampling inside a beam.

# %% [markdown]
# ## Summary
#
# - The slide's tree holds: greedy finds *yes yes* (.20), the best is *ok ok* (.28), and a beam of width 2 finds it.
#   The slides' code does not run as written; fixed, its "beam" searches the whole tree.
# - Greedy, beam search, ancestral sampling, temperature, top-k, top-p and beam sampling are each a few lines on one
#   decoder interface, for every course LM and translation model; on the GPT they give `generate()`'s tokens exactly
#   (greedy, beam search, sampling under a seed) and its warped distributions.
# - Judged by the oracle, search (greedy, beam) writes sentences far more probable per token than the language's own
#   and, the wider an unnormalised beam up to width 8, shorter ones (eq. 13.16 holds them near the language's length);
#   sampling at T ≈ 1 (or top-p ≥ .9) writes text near the language's entropy rate (within 0.1 from `<s>`, section 10;
#   0.06 to 0.17 nats/token above it after section 7's prompts) and with about its lengths, at the price of the model's
#   own errors.
# - The most probable sentences of the language (two tie) are the likeliest to be drawn, but not typical per token: they
#   spend 0.49 nats per token, the language 1.73 (its entropy rate), and of 20,000 sampled sentences none but they spend
#   as few; a sentence's own cost per token spreads widely around the entropy rate, likely because the sentences are
#   short. Length normalisation (eq. 13.16, HF's α, GNMT) is a choice that changes which hypothesis wins.
#
# ## References
#
# - D. Jurafsky, J. H. Martin. *Speech and Language Processing*, 3rd ed. draft, ch. 13 (Fig. 13.7, eq. 13.16).
# - A. Holtzman, J. Buys, L. Du, M. Forbes, Y. Choi (2020). The Curious Case of Neural Text Degeneration. *ICLR*
#   (Table 1; nucleus sampling).
# - K. Murray, D. Chiang (2018). Correcting Length Bias in Neural Machine Translation. *WMT*.
# - P. Koehn, R. Knowles (2017). Six Challenges for Neural Machine Translation. *Workshop on NMT* (beam width).
# - F. Stahlberg, B. Byrne (2019). On NMT Search Errors and Model Errors: Cat Got Your Tongue? *EMNLP* (51.8 %
#   empty translations under exact search).
# - Y. Wu et al. (2016). Google's Neural Machine Translation System (length penalty, α).
# - A. Fan, M. Lewis, Y. Dauphin (2018). Hierarchical Neural Story Generation (top-k sampling).
# - T. M. Cover, J. A. Thomas. *Elements of Information Theory*, 2nd ed., ch. 3 (the typical set) and §16.8 (its
#   statement for ergodic sources).
# - T. B. Brown et al. (2020). Language Models are Few-Shot Learners. *NeurIPS*.
# - P. Lewis et al. (2020). Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks. *NeurIPS*.
# - Hugging Face, "How to generate text: using different decoding methods for language generation with
#   Transformers" (blog), and the `generate()` documentation.
# - W. Kool, H. van Hoof, M. Welling (2019). Stochastic Beams and Where to Find Them. *ICML*.
