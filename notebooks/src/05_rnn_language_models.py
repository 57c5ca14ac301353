# %% [markdown]
# # 05 · The RNN language model
#
# *Accompanies the lecture "Language Models" (CS109B, Lecture 16): the RNN's training process (feed in the correct
# inputs, average the loss over the time steps, backpropagation through time), generation until `<EOS>`, "the same
# input (e.g., 'Harry') can easily yield different outputs", the RNN's strengths and issues, and vanishing and
# exploding gradients. Also the slides "An RNN Language Model" and "Training an RNN Language Model" of "Neural
# Language Models" (CMU 11-411/611), and the slides on masked language modelling with an RNN, its forward pass and
# its limitations ("not parallelizable") in "Deep Learning and Masked Language Modelling" (CSE538).*
#
# ### Learning objectives
#
# After this notebook you can
# - write the RNN language model's forward pass from the slides' equations, and check it against `nn.RNN`;
# - explain why an RNN has the same number of parameters for a sentence of any length;
# - train it with teacher forcing, the loss averaged over time steps and padded batches, and measure what truncated
#   BPTT cuts;
# - compare its perplexity with the oracle's, the n-grams' and the feed-forward LM's, and judge its samples with
#   the oracle;
# - measure that its prediction after the same words depends on words further back, unlike an n-gram or an FFNN;
# - measure vanishing and exploding gradients, ‖∂L_t/∂h_k‖ against the distance t − k, and (optional section) tame
#   explosions by clipping;
# - measure how an RNN's time grows with the length it reads, its steps running one after another;
# - fill in a masked word with an RNN that reads both sides of it.
#
# Sections marked *(optional)* go beyond the slides; skip them on a first reading.

# %%
from course_utils import setup_notebook

device = setup_notebook(seed=0)

# %% [markdown]
# As in notebook 04, every model here is small and runs on the CPU whatever `device` says, so that the checked
# numbers printed below are the same on every machine (not section 5's timings, nor the step at which section 8's
# run overflows).

# %%
import copy
import math
import textwrap

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from course_utils import CourseInputError, budget
from course_utils.language import corpus
from course_utils.models import lm
from course_utils.analysis import rnn_analysis
from course_utils.analysis import lstm_analysis
from course_utils.analysis import lm_seeds
from course_utils.analysis.seed_spread import verdict
from course_utils.zoo import lm_checkpoints as zoo
from course_utils.zoo import load
from course_utils.language.vocab import course_vocab, train_ids
from course_utils.language.grammar import CourseLanguage

vocab = course_vocab()  # one fixed vocabulary for every model of the course
lang = CourseLanguage(
    include_held_out=False
)  # the training language, with exact probabilities
full_lang = CourseLanguage()  # the full language (also the held-out "the dog gets fed")
train, valid, test = (corpus.load_split(name) for name in ("train", "valid", "test"))
rnn = load("rnn_lm")  # the shipped RNN LM (recipe zoo.RECURRENT_RECIPES["rnn_lm"])

# %% [markdown]
# ## 1. The RNN language model
#
# A feed-forward LM (notebook 04) sees a fixed window of N words. A recurrent network reads the words one at a
# time and carries a **hidden state** h from each step to the next: the recurrent loop. The CSE538 slides write
# the forward pass as a loop:
#
# ```
# h_(0) = 0
# for i in range(1, len(x)):
#     h_(i) = tanh(matmul(U, h_(i-1)) + matmul(W, x_(i)))    # update hidden state
#     y_(i) = softmax(matmul(V, h_(i)))                       # update output
# ```
#
# > **Slide check.** The slide (CSE538, "Example: Forward Pass") writes the loop as `for i in range(1, len(x))`.
# > In fact `range(1, len(x))` runs i = 1, …, len(x) − 1, so for a Python list x it never reads x[0], the first
# > input (and had x_(1) … x_(n) been meant, it would miss the last one). The loop below reads every input
# > (`for i in ids`), and the cell prints what `range(1, len(x))` would leave out.
#
# The CMU slides write an RNN LM for words, with an embedding and biases (and σ where the loop has tanh):
#
# $$e^{(t)} = E x^{(t)}, \qquad h^{(t)} = \sigma(W_h h^{(t-1)} + W_e e^{(t)} + b_1), \qquad
# \hat y^{(t)} = \mathrm{softmax}(U h^{(t)} + b_2) \in \mathbb{R}^{|V|}.$$
#
# > **Slide check.** The slide (CMU 11-411/611, "An RNN Language Model") writes the hidden state as
# > $h^{(t)} = \sigma(W_h h^{(t-1)} + W_e e^{(t)} + b_1)$, with the σ that the same deck uses for the logistic
# > sigmoid, $\sigma(z) = 1/(1 + e^{-z})$.
# > In fact both are RNN LMs, but different models: Mikolov et al. (2010) used the logistic σ; the CSE538 loop,
# > `nn.RNN` (by default) and this course use tanh. The cell below runs the loop with tanh, which matches `nn.RNN`,
# > and with the logistic σ, which does not.
#
# The letters differ between the two slide decks, so watch out:
#
# | role | CSE538 | CMU | here (`course_utils`, PyTorch) |
# |---|---|---|---|
# | recurrent loop, H × H | U | W_h | `ScratchRNN.U`, `nn.RNN.weight_hh_l0` |
# | input → hidden | W | W_e | `ScratchRNN.W`, `nn.RNN.weight_ih_l0` |
# | hidden → output | V | U | `RecurrentLM.output.weight` |
# | biases | (none) | b_1, b_2 | `ScratchRNN.b` (= `bias_ih_l0 + bias_hh_l0`), `output.bias` |
#
# Here is the slide's loop, written out with the weights of the shipped RNN LM (embeddings of d = 64, a hidden
# state of H = 128), next to the library's `nn.RNN`, which runs the same loop in C++.

# %%
# NBVAL_CHECK_OUTPUT
slide = copy.deepcopy(rnn).double()  # float64: the two computations agree to ~1e-15
E = slide.embedding.weight  # (V, d)
W, U = slide.recurrent.weight_ih_l0, slide.recurrent.weight_hh_l0  # (H, d), (H, H)
b1 = slide.recurrent.bias_ih_l0 + slide.recurrent.bias_hh_l0  # (H,): torch keeps two
V_out, b2 = slide.output.weight, slide.output.bias  # (V, H), (V,)


@torch.no_grad()
def slide_loop(ids: list[int], g=torch.tanh) -> torch.Tensor:
    """The slide's loop over the ids, nonlinearity g: next-word distributions (T, V)."""
    h = torch.zeros(U.shape[0], dtype=torch.float64)  # h_(0) = 0: (H,)
    outputs = []
    for i in ids:
        h = g(U @ h + W @ E[i] + b1)  # (H,): update hidden state
        outputs.append(torch.softmax(V_out @ h + b2, dim=-1))  # (V,): update output
    return torch.stack(outputs)  # (T, V)


words = "the dog chased the cats .".split()
ids = [vocab.bos_id] + vocab.encode(words)  # the model reads <s> first
loop = slide_loop(ids)  # (T, V)
with torch.no_grad():
    library = torch.softmax(slide(torch.tensor([ids]))[0][0], dim=-1)  # (T, V)
gap = (loop - library).abs().max().item()
print(f"{len(ids)} steps; max |slide's loop − nn.RNN| < 1e-12: {gap < 1e-12}")
same = torch.allclose(slide_loop(ids, torch.sigmoid), library, rtol=0, atol=1e-6)
print("the same loop with the logistic σ instead of tanh matches nn.RNN:", same)
# what a loop over range(1, len(x)) skips; P(sentence) = Π P(next word) by the loop
print(rnn_analysis.slide_loop_notes(loop, ids, vocab, lang.score(words).prob))

# %% [markdown]
# `course_utils.models.recurrent.rnn` has the same loop as a module, `ScratchRNN` (one `elman_step` per token, named after Elman,
# 1990), and `ScratchRNN.from_torch` copies the weights of an `nn.RNN`. The course checks them against each other in
# single and double precision:

# %%
# NBVAL_CHECK_OUTPUT
from course_utils.models.recurrent.rnn import ScratchRNN

torch.manual_seed(0)
for dtype, tolerance in ((torch.float32, 1e-5), (torch.float64, 1e-10)):
    library_rnn = torch.nn.RNN(5, 7, batch_first=True).to(
        dtype
    )  # D = 5 inputs, H = 7 hidden units
    scratch_rnn = ScratchRNN.from_torch(library_rnn)
    x = torch.randn(3, 12, 5, dtype=dtype)  # (B, T, D)
    difference = (scratch_rnn(x)[0] - library_rnn(x)[0]).abs().max().item()
    print(
        f"{str(dtype):13}  max |ScratchRNN − nn.RNN| ≤ {tolerance:.0e}: "
        f"{difference <= tolerance}"
    )

# %% [markdown]
# ### Same weights at every step, any length
#
# The loop uses the same E, W, U and V at every step: a sentence of 3 words and one of 30 go through the same
# numbers, only more or fewer times. So the model's size does not depend on the length of what it reads. A
# feed-forward LM needs one weight block per position of its window, so its size grows with N (and it cannot look
# further back than N words at all).
#
# Careful with the totals: notebook 04's shipped FFNNs have a hidden layer of 256 units, the RNN a hidden state of
# 128, and most weights of either model sit in its output layer (|V| × hidden). So the shipped FFNNs look bigger
# mostly because they are twice as wide. The cell prints them beside the same FFNNs at the RNN's width (untrained:
# only the count matters), and the weights each extra word of window adds: one more d × hidden block of W.


# %%
# NBVAL_CHECK_OUTPUT
def count(model) -> int:
    return sum(p.numel() for p in model.parameters())


sizes = {
    "E (V×d)": E,
    "W (H×d)": W,
    "U (H×H)": U,
    "b_1 (2H: torch keeps two)": torch.empty(2 * len(b1)),
    "V (|V|×H)": V_out,
    "b_2": b2,
}
H = U.shape[0]
print(f"RNN LM (hidden state H = {H}), for a sentence of any length:")
terms = [f"{name} {tensor.numel():,}" for name, tensor in sizes.items()]
print("  " + " + ".join(terms[:4]) + "\n  + " + " + ".join(terms[4:]), end="")
print(f" = {count(rnn):,}")
ffnns = {n: load(f"ffnn_n{n}") for n in (2, 3, 5)}
# shipped, and at the RNN's width H (untrained); one more word of window: d × hidden
print("\n".join(rnn_analysis.ffnn_size_lines(ffnns, H, len(vocab))))
longest = max(valid, key=len)
print(
    f"the longest validation sentence ({len(longest)} words), read with the same "
    f"{count(rnn):,}: P = {math.exp(sum(lm.token_logprobs(rnn, vocab, longest))):.2e}"
)

# %% [markdown]
# At the same width the comparison is fair: a short window costs about as much as the RNN (which pays for its
# recurrent matrix U, H × H, instead), and every extra word of window adds another block, while the RNN reads
# sentences of any length with the same weights.
#
# ## 2. Training
#
# ### Teacher forcing, and the loss averaged over time steps
#
# The CS109B slide: "During training, regardless of our output predictions, we feed in the correct inputs" (this is
# called **teacher forcing**). At step t the model reads the true word x_t, predicts ŷ_t, and pays the cross-entropy
# CE(y_t, ŷ_t) = −log ŷ_t[x_{t+1}]; "our total loss is simply the average loss across all T time steps".
#
# > **Slide check.** The slide (CMU 11-411/611, "Training an RNN Language Model") writes the average as
# > $J(\theta) = \frac{1}{T} \sum_{t=1}^T J^{(t)}(\theta) = \frac{1}{T} \sum_{t=1}^T - \hat{y}_{x_{t+1}}^{(t)}$:
# > the log is gone.
# > In fact $J^{(t)}(\theta) = -\log \hat{y}_{x_{t+1}}^{(t)}$ (the slide's line before), so the loss is the average of
# > −log ŷ_t[x_{t+1}]. The last line of the cell below prints what the formula without the log gives: minus the
# > mean probability of the true words, another quantity than the average cross-entropy of the slide's line before.
#
# For one sentence, with the shipped model and the oracle side by side:

# %%
# NBVAL_CHECK_OUTPUT
words = "the dog chased the cats .".split()
idx, targets = lm.make_batch(
    [vocab.encode(words)], vocab
)  # (1, T), (1, T): targets are idx shifted by one
with torch.no_grad():
    logits, loss = rnn(idx, targets)  # (1, T, V), the mean over the T steps
step_losses = -F.log_softmax(logits[0], dim=-1).gather(1, targets[0, :, None])[
    :, 0
]  # (T,)
print(f"{'t':>2}  {'reads':7} {'target':7} {'−log ŷ_t[target]':>17} {'oracle':>7}")
for t, (x_t, y_t) in enumerate(zip(idx[0].tolist(), targets[0].tolist())):
    oracle = -math.log(lang.next_distribution(words[:t])[vocab.itos[y_t]])
    print(
        f"{t:2}  {vocab.itos[x_t]:7} {vocab.itos[y_t]:7} "
        f"{step_losses[t].item():17.3f} {oracle + 0.0:7.3f}"
    )
print(
    f"mean over the T = {len(step_losses)} steps: {step_losses.mean().item():.4f}   "
    f"the model's loss: {loss.item():.4f}"
)
print(
    "the slide's last form, without the log: mean of −ŷ_t[target] = "
    f"{-torch.exp(-step_losses).mean().item():.4f}"
)

# %% [markdown]
# The loss is small where the language leaves little or no choice (after "the dog chased the cats" only "." can
# come; after ".", the sentence ends) and large where many words are possible (after "the", any of many nouns and
# adjectives: 4.337 for "dog", 3.051 for "cats"). The oracle's column is the least any model can pay on average.
#
# ### Batching
#
# Sentences have different lengths, but a batch is one rectangular tensor. `lm.batch_stream` shuffles the training
# sentences and `lm.make_batch` pads each batch on the right: inputs with `<pad>`, targets with `IGNORE_INDEX`
# (−100), which the cross-entropy skips. The batch loss is the mean over the **real** targets only, so the padding
# changes nothing:

# %%
# NBVAL_CHECK_OUTPUT
three = [
    s.split()
    for s in ("the dog sleeps .", "he ate the cake with the fork .", "we ran .")
]
idx, targets = lm.make_batch([vocab.encode(s) for s in three], vocab)  # (3, T), (3, T)
print(
    "idx:    ",
    *[" ".join(f"{vocab.itos[i]:>6}" for i in row) for row in idx.tolist()],
    sep="\n  ",
)
print(
    "targets:",
    *[
        " ".join(f"{vocab.itos[i] if i >= 0 else i:>6}" for i in row)
        for row in targets.tolist()
    ],
    sep="\n  ",
)
with torch.no_grad():
    batch_loss = rnn(idx, targets)[1].item()
    alone = [
        rnn(*lm.make_batch([vocab.encode(s)], vocab))[1].item() for s in three
    ]  # one sentence at a time
n_targets = [len(s) + 1 for s in three]
print(
    f"batch loss {batch_loss:.4f} = token-weighted mean of the sentences' losses "
    f"{sum(l * n for l, n in zip(alone, n_targets)) / sum(n_targets):.4f}"
)

# %% [markdown]
# ### Truncated backpropagation through time
#
# The gradient of the loss with respect to U sums over every path back through the loop: backpropagation through
# time (BPTT). The CS109B slides: "This backpropagation through time (BPTT) process is expensive. Instead of updating
# after every timestep, we tend to do so every T steps (e.g., every sentence or paragraph). This isn't equivalent to
# using only a window size T (a la n-grams) because we still have 'infinite memory'." The course trains on whole
# sentences (they are short), but for a long text one reads it in chunks of k tokens, carries the hidden state from
# one chunk to the next, and **detaches** it at each boundary, so that backpropagation stops there. Here is that
# reading, on the shipped model's weights:


# %%
def read_in_chunks(model, x, k: int, *, carry: bool = True):
    """The RNN LM's logits (B, T, V) for embedded inputs x (B, T, d), read k steps at a
    time.

    carry=True: the state goes on to the next chunk, detached (truncated BPTT).
    carry=False: every chunk starts again from h = 0 (a prediction sees only its
    chunk's words so far: one at its start, k at its end; no n-gram's sliding window).
    """
    h, outputs = None, []
    for start in range(0, x.shape[1], k):
        out, h = model.recurrent(x[:, start : start + k], h)  # (B, ≤k, H), (1, B, H)
        outputs.append(out)
        h = h.detach() if carry else None  # gradients stop at the chunk boundary
    return model.output(torch.cat(outputs, dim=1))  # (B, T, V)


# %% [markdown]
# Two things to measure. **Backward**: in the longest validation sentence the verb "is" agrees with its subject
# "woman", far back. How much gradient of the loss at "is" reaches each input word, with full BPTT and with chunks
# of k = 8? **Forward**: what does carrying the state across chunks buy, against restarting from zero at each
# chunk? Each prediction then sees only the words of its own chunk: one at the chunk's start, k at its end (not an
# n-gram's sliding window, which always sees its n − 1 words).

# %%
# NBVAL_CHECK_OUTPUT
print(textwrap.fill(" ".join(longest), width=88))
idx, targets = lm.make_batch([vocab.encode(longest)], vocab)  # (1, T)
t_verb = longest.index("is")  # the step whose target is "is"
for k in (idx.shape[1], 8):
    x = slide.embedding(idx).detach().requires_grad_(True)  # (1, T, d), float64
    logits = read_in_chunks(slide, x, k)  # (1, T, V)
    step_loss = F.cross_entropy(logits[0, t_verb], targets[0, t_verb])
    # (T,): ‖∂L/∂x_j‖ for each input j
    grad = torch.autograd.grad(step_loss, x)[0][0].norm(dim=-1)
    subject = longest.index("woman") + 1  # + 1 for <s>
    name = "full BPTT" if k == idx.shape[1] else f"truncated, k = {k}"
    print(
        f"{name:17}  ‖∂L(is)/∂x‖ at 'woman' ({t_verb - subject} steps back): "
        f"{grad[subject].item():.2e},\n{'':19}at '{longest[t_verb - 1]}', the word it "
        f"reads (0 steps back): {grad[t_verb].item():.2e}"
    )

idx, targets = lm.make_batch(lm.encode_sentences(vocab, valid[:300]), vocab)
print("the shipped RNN on the first 300 validation sentences:")
with torch.no_grad():
    x = rnn.embedding(idx)  # (B, T, d)
    for k in (4, 8):
        for carry in (True, False):
            logits = read_in_chunks(rnn, x, k, carry=carry)  # (B, T, V)
            perplexity = rnn_analysis.perplexity(logits, targets)
            how = "state carried, detached" if carry else "state reset to 0       "
            print(f"chunks of k = {k}, {how}: perplexity {perplexity:.3f}")
    whole = rnn_analysis.perplexity(rnn(idx)[0], targets)
    print(f"whole sentences (as trained):               perplexity {whole:.3f}")

# %% [markdown]
# Backward, truncation cuts the gradient to exactly 0 beyond the boundary; full BPTT lets some through, but from
# that far back it is already tiny (section 4 measures how fast it shrinks). Forward, detaching changes nothing:
# carrying the state gives the same predictions as reading the whole sentence, while resetting it is much worse.
# That is the slide's point: a truncated RNN still has its "infinite memory" when it predicts; it only stops
# *learning* from dependencies that cross a chunk boundary: every one of k steps or more, and shorter ones that
# straddle a boundary. The saving is memory (the graph of k steps, not of the whole text) and more frequent updates;
# every token is still read once forward and once backward. (These perplexities are on 300 validation sentences,
# not the test set of section 3.)
#
# ### A short training run
#
# The shipped model was trained by a recipe: 3,000 steps of AdamW (notebook 03) on batches of 64 sentences, with a
# **cosine learning-rate schedule**: the rate falls from its start value to 0 along half a cosine wave, large steps
# early and small ones at the end (`course_utils.training.train`, `schedule="cosine"`). Here is the same recipe,
# run in full (in fast mode, which the automatic tests run, only a few dozen steps):

# %% [markdown]
# ⏱ *The next cell takes about 25 s on a 2-core CPU (full mode). In lecture, show its stored output, or run it before class.*

# %%
# NBVAL_IGNORE_OUTPUT
steps = budget(full=zoo.RNN_TRAINING["steps"], fast=40)
rnn_here, history = zoo.train_model("rnn_lm", steps=steps)
shipped_steps, batch_size = zoo.RNN_TRAINING["steps"], zoo.RNN_TRAINING["batch_size"]
print(f"trained {steps} steps on batches of {batch_size} sentences")
here, shipped = (
    lm.evaluate(model, vocab, valid[:1000]).perplexity for model in (rnn_here, rnn)
)
print(
    f"validation perplexity {here:.3f}; "
    f"the shipped model ({shipped_steps} steps): {shipped:.3f}"
)
_ = history.plot(title="RNN LM: training loss (mean over time steps and batch)")
plt.show()

# %% [markdown]
# Everything below uses the **shipped checkpoint** for the RNN (`data/checkpoints/05_06/rnn_lm`, made by
# `python -m course_utils.zoo rnn_lm`), and other stored checkpoints (notebook 04's FFNN; notebook 06's models,
# which section 3 introduces) or fixed seeds for the other models, so every run prints the same numbers from here
# on (timings and the step at which section 8's run overflows aside).
#
# ## 3. Results on the course language
#
# ### Perplexity against the truth
#
# The test perplexity of the RNN beside notebook 04's best n-gram and feed-forward models, and the oracle's floor.
# Perplexity is an effective branching factor: a perplexity of k means the model is, on average, as unsure of the
# next word as if it chose uniformly among k words.

# %%
# NBVAL_CHECK_OUTPUT
oracle_ppl = math.exp(corpus.oracle_entropy(lang, test)[0])
ffnn5 = load("ffnn_n5")
# Kneser–Ney, counted on the training split
trigram = zoo.ngram_models(orders=(3,))["trigram"]
models = {"trigram (KN)": trigram, "FFNN N=5": ffnn5, "RNN": rnn}
perplexity = {
    name: lm.evaluate(model, vocab, test).perplexity for name, model in models.items()
}
print(f"{'model':13} {'perplexity':>10} {'÷ oracle':>9}")
for name, ppl in perplexity.items():
    print(f"{name:13} {ppl:10.3f} {ppl / oracle_ppl:9.3f}")
print(f"{'oracle':13} {oracle_ppl:10.3f} {1:9.3f}")
print(
    "the language itself: on average as uncertain as a uniform choice among "
    f"{oracle_ppl:.1f} words\n(a geometric mean over the test words; "
    f"a uniform guess over the whole vocabulary: {len(vocab)})"
)
rnn_seeds, ffnn_seeds = (
    lm_seeds.seed_spread(name, "perplexity") for name in ("rnn_lm", "ffnn_n5")
)
print(
    f"over seeds: RNN {rnn_seeds.format()}, FFNN N=5 {ffnn_seeds.format()}:\n"
    f"{verdict(rnn_seeds, ffnn_seeds, ('RNN', 'FFNN N=5'))}"
)
steps_rnn, steps_ffnn = zoo.RNN_TRAINING["steps"], zoo.FFNN_TRAINING["steps"]
print(
    f"the recipes: RNN {steps_rnn:,} steps, hidden {zoo.RNN['hidden_dim']}; "
    f"FFNN N=5 {steps_ffnn:,} steps, hidden {zoo.FFNN['hidden_dim']}"
)

# %% [markdown]
# Compare the RNN's row with the FFNN's. The RNN is better, and the verdict, three seeds of each recipe read with
# the rule of notebook 04 (section 6: the gap of the means against the larger seed spread), says that the gap is not
# the draw. The verdict is about the two recipes, not about a loop against a window alone: the last line shows that
# they also differ in training steps (3,000 against 1,500) and in width (128 against 256). (The oracle's 5.460 is
# close to the 5.461 of section 2's truncation table by coincidence: that was the RNN on 300 validation sentences; on
# the test set it has 5.700. The oracle's 5.5 words are the exponential of its mean loss over the steps: its single
# steps in section 2's table run from a loss of 0.000, one possible word, to 4.515, a choice among
# many.) But the gap is small, likely because most of what there is to predict in this
# language is local: five words of context already get most of it, and what the window misses, a few long-distance
# dependencies such as agreement across a relative clause, would cost little perplexity on average. This table does
# not measure that; the next measurements look at exactly those places.
#
# ### Generating until `</s>`
#
# "We can generate the most likely next event (e.g., word) by sampling from ŷ. Continue until we generate `<EOS>`
# symbol." `lm.generate` samples a word from ŷ_t, feeds it back in as the next input, and stops at `</s>`. The oracle
# judges each sample: is it a sentence of the course language, and if not, where does it go wrong?
#
# > **Slide check.** The slide (CS109B, "RNN: Generation") says "We can generate the most likely next event (e.g.,
# > word) by sampling from ŷ".
# > In fact sampling draws each word w with probability ŷ_t[w], so it often does not pick the most likely word, and
# > each seed gives another sentence. Taking the most likely word at every step (greedy decoding, `temperature=0`)
# > gives one and the same sentence whatever the seed; the last lines of the cell below print it.

# %%
# NBVAL_CHECK_OUTPUT
for seed in range(6):
    sample = lm.generate(rnn, vocab, seed=seed)
    score = full_lang.score(sample)
    print(f"{'✓' if score.grammatical else '✗'} {' '.join(sample)}")
    if not score.grammatical:
        print(f"    {score.failure}")
greedy = lm.generate(rnn, vocab, temperature=0)
print(f"most likely word at every step: {' '.join(greedy)}")
print(
    "    the same sentence for seeds 0..5: "
    f"{all(lm.generate(rnn, vocab, temperature=0, seed=s) == greedy for s in range(6))}"
)

# %%
# NBVAL_CHECK_OUTPUT
n_samples = 50
for name, model in models.items():
    ok = sum(
        full_lang.score(lm.generate(model, vocab, seed=s)).grammatical
        for s in range(n_samples)
    )
    print(
        f"{name:13} {ok:3} of {n_samples} samples are sentences of the course language"
    )

# %% [markdown]
# Six samples are not a measurement; the rates are. On this count the RNN is about as good as the FFNN with five
# words of context (a few sentences in 50 apart), and both are far better than the trigram. Where a sample is not a
# sentence, `full_lang.score(sample).failure` names the rule it breaks (the six-sample cell prints it under each ✗;
# these six seeds happen to give none).

# %% [markdown]
# ### The same words, different predictions
#
# The CS109B slide: "the same input (e.g., 'Harry') can easily yield different outputs, depending on the context
# (unlike FFNNs and n-grams)". We measure it. Take the context "the girl that saw the boys near the cats" and its
# twin with the subject's number flipped, "the girls that saw …". Both end in the same words, but the next verb must
# agree with the subject far back: "is" can follow the first, never the second. The distance between the two
# next-word distributions (total variation, ½ Σ |p − q|, between 0 and 1) tells whether a model noticed the
# difference at all.

# %%
# NBVAL_CHECK_OUTPUT
twin = rnn_analysis.twin  # the subject (the second word) in the other number


def next_probs(model, context) -> torch.Tensor:
    """The next-word distribution after context (model="oracle": the grammar's)."""
    return rnn_analysis.next_word_probs(model, context, vocab, lang)


def distance(model, a, b) -> float:
    """Total variation between the next-word distributions after contexts a and b."""
    p, q = next_probs(model, a), next_probs(model, b)
    return 0.5 * (p - q).abs().sum().item()


example = "the girl that saw the boys near the cats".split()
print(f"{'':13}  {'P(is | the girl …)':>19}  {'P(is | the girls …)':>19}  {'TV':>5}")
for name, model in [*models.items(), ("oracle", "oracle")]:
    contexts = (example, twin(example))
    is_probs = [next_probs(model, c)[vocab.stoi["is"]].item() for c in contexts]
    print(
        f"{name:13}  {is_probs[0]:19.4f}  {is_probs[1]:19.4f}  "
        f"{distance(model, example, twin(example)):5.3f}"
    )

# %% [markdown]
# Now over many contexts of the agreement set, grouped by how many **attractors** stand between the subject and
# the verb: nouns of the other number, which could pull the verb to theirs (in the twin, whose subject has their
# number, they are attractors no more). With 1 attractor the context has 5 or 6 words, so the FFNN's five-word
# window still sees the subject; the trigram's two words of context never do (0.000 in every row), and from 2
# attractors on, the FFNN's window does not either: their two distributions are identical.

# %%
# NBVAL_CHECK_OUTPUT
agreement = corpus.load_eval("agreement")
print(
    f"{'attractors':>10} {'words':>6} "
    + " ".join(f"{name:>13}" for name in [*models, "oracle"])
)
for attractors in (1, 2, 3, 5):
    items = [item["prefix"] for item in agreement if item["attractors"] == attractors][
        :12
    ]
    row = [
        sum(distance(m, p, twin(p)) for p in items) / len(items)
        for m in [*models.values(), "oracle"]
    ]
    words = f"{min(map(len, items))}–{max(map(len, items))}"  # shortest–longest context
    print(f"{attractors:10} {words:>6} " + " ".join(f"{d:13.3f}" for d in row))

# %% [markdown]
# The n-gram and the FFNN give *exactly* the same prediction once the subject leaves their window, as the slide says.
# Inside the window the FFNN reacts to the subject's number more than the RNN does (0.276 against 0.208 on these
# 12 contexts, one model of each), but TV says how far a prediction moves, not which way. On agreement itself
# (notebook 06, 100 items with 1 attractor) the RNN is right more often (one model of each there too).
# The RNN's prediction still depends on the subject, but less and less as the subject recedes: its TV falls from
# 0.208 with 1 attractor to 0.010 with 5 (12 contexts a row, one model), while the oracle's does not fade at all.
# More attractors come with more words here, so the table does not say which of the two the fading follows. The RNN
# has a memory, and it is leaky. Section 4 shows one likely reason; notebook 06, what an **LSTM** changes (long
# short-term memory: an RNN with a gated memory cell, which notebook 06 builds from its equations).
#
# ## 4. Vanishing and exploding gradients, measured
#
# The loss at step t reaches an earlier hidden state h_k only through the steps between them (the CS109B slides
# chain ∂L⁴/∂V¹ = ∂L⁴/∂V³ · ∂V³/∂V² · ∂V²/∂V¹, where their V^j is the hidden state at step j, h_j here, not this
# notebook's output matrix V). Each factor is the **Jacobian** of one step, J_j = ∂h_j/∂h_{j−1}: the
# matrix of the derivatives of h_j's entries with respect to h_{j−1}'s. For the tanh RNN it is
# J_j = diag(1 − h_j²) U, and the chain rule multiplies the factors with the latest one leftmost:
#
# $$\frac{\partial L_t}{\partial h_k} = \big(J_t\, J_{t-1} \cdots J_{k+1}\big)^{\top}
# \frac{\partial L_t}{\partial h_t}, \qquad J_j = \mathrm{diag}(1 - h_j^2)\, U.$$
#
# A product of t − k matrices shrinks or grows roughly geometrically with t − k. `rnn_analysis.hidden_gradient_norms`
# measures ‖∂L_t/∂h_k‖ with autograd; `jacobian_product_norms` computes the product above. First a check that they
# agree, on "the cats near the dog are happy ." at the step that predicts "are" (float64).
#
# The chain starts at ∂L_t/∂h_t, the gradient of softmax followed by cross-entropy. With the logits z = V h_t + b
# and y the one-hot vector of the true word w, L_t = −log ŷ_w = −z_w + log Σ_j exp(z_j), so
# ∂L_t/∂z_i = −y_i + exp(z_i) / Σ_j exp(z_j) = ŷ_i − y_i: the predicted distribution minus the one-hot target
# (the a − y of the sigmoid with binary cross-entropy in notebook 02, now for every word of the vocabulary).
# Through z = V h_t + b, ∂L_t/∂h_t = Vᵀ(ŷ_t − y_t); the cell computes it that way (`grad_t`).

# %%
# NBVAL_CHECK_OUTPUT
words = "the cats near the dog are happy .".split()
idx = torch.tensor(
    lm.make_batch([vocab.encode(words)], vocab)[0][0].tolist() + [vocab.eos_id]
)  # <s> w1..wn </s>
t = words.index("are")  # L_t = −log P(are | <s> the cats near the dog)
autograd_norms = rnn_analysis.hidden_gradient_norms(slide, idx, t)  # (t+1,): k = 0..t
with torch.no_grad():
    states = slide.hidden_states(idx[None, : t + 1])[0]  # (t+1, H): h_0..h_t
    y_hat = torch.softmax(V_out @ states[t] + b2, dim=-1)  # (V,)
    grad_t = V_out.T @ (
        y_hat - F.one_hot(idx[t + 1], len(vocab)).double()
    )  # (H,): ∂L_t/∂h_t
product_norms = rnn_analysis.jacobian_product_norms(
    U.detach(), states, grad_t
)  # (t+1,)
for k in range(t + 1):
    print(
        f"k = {k} (read {vocab.itos[idx[k]]:5}), t − k = {t - k}:  ‖∂L_t/∂h_k‖ = "
        f"{autograd_norms[k]:.3e}"
    )
relative = ((autograd_norms - product_norms).abs() / product_norms).max().item()
print(
    f"autograd and the Jacobian product agree to a relative 1e-10: {relative < 1e-10}"
)

# %% [markdown]
# Read the column from k = 5 down to k = 0: in this one sentence the norm does not fall evenly. It
# falls from 1.143 to 0.435 in one step, hardly moves to k = 3, halves to k = 2, stays level to k = 1 and rises
# again at k = 0 (the start symbol). The state after "cats" (k = 2), the subject that decides "are", gets less
# gradient than the state after "near" (k = 3). Each factor diag(1 − h_j²) U depends on the state h_j, so on the
# words read up to step j: one factor can stretch the vector and the next shrink it. "Roughly geometrically"
# describes the average over many sentences and steps, which the next cell measures.
#
# Now the average decay over the first 24 validation sentences of at least 15 words (the cell's `long_sentences`),
# at every step of each: `gradient_decay_curve` gives ‖∂L_t/∂h_k‖ / ‖∂L_t/∂h_t‖
# against t − k, for the trained RNN and for the same network before training. At each distance it is a
# **geometric mean** (the exponential of the mean of the logs: for n numbers, the n-th root of their product) over
# every prediction that reaches that far back: fewer predictions at larger distances, and only the later
# words of the longer sentences.

# %%
# NBVAL_CHECK_OUTPUT
from course_utils.models.recurrent.recurrent_lm import RecurrentLM

untrained = (
    RecurrentLM(len(vocab), cell="rnn", **zoo.RNN, seed=0).double().eval()
)  # the recipe's size, not trained
long_sentences = [s for s in valid if len(s) >= 15][:24]
curves = {
    name: rnn_analysis.gradient_decay_curve(
        model, vocab, long_sentences, distance_max=15
    )
    for name, model in (("trained RNN", slide), ("untrained RNN", untrained))
}
for name, (distances, ratio) in curves.items():
    per_step = ratio[10].item() ** (1 / 10)
    print(
        f"{name:14} t − k = 1: {ratio[1]:.2f}  5: {ratio[5]:.1e}  10: "
        f"{ratio[10]:.1e}  15: {ratio[15]:.1e}"
        f"  (× {per_step:.2f} per step)"
    )

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, (distances, ratio) in curves.items():
    ax.semilogy(distances, ratio, "o-", label=name)
ax.set(
    xlabel="distance t − k (steps back)",
    ylabel="‖∂L_t/∂h_k‖ / ‖∂L_t/∂h_t‖",
    title="Vanishing gradients in the tanh RNN LM",
)
ax.legend()
plt.show()

# %% [markdown]
# On a log scale the untrained curve is a straight line: the gradient loses the same fraction at every step back.
# The trained curve bends slightly upward. Over the first ten steps the factor per step is about the same before
# and after training (× 0.58 and × 0.60, one network each); further back the trained RNN keeps more (8.4e-04
# against 2.8e-04 at 15 steps), in this one pair of networks: the untrained one is a single random draw, and no
# spread over draws is measured. On average (the geometric mean), the trained RNN's state ten steps back gets only
# 6.3e-03 of the gradient norm that the current state gets (untrained 4.1e-03); within one sentence it varies, as
# the sentence above showed. That is likely one reason the RNN's memory of the subject faded in
# section 3, and why truncating BPTT should cost little; this notebook does not test either.
#
# ### Exploding gradients
#
# The size of each factor depends on U. `exploding_demo(radius)` runs a small tanh RNN whose U is an orthogonal matrix
# (one that only rotates or reflects a vector, so it keeps the vector's norm) times `radius`, with tiny inputs so that
# tanh stays in its linear part (1 − h² ≈ 1): then each step back multiplies the norm by about the radius. Below 1 it
# vanishes, above 1 it **explodes**. With large inputs tanh saturates, 1 − h² becomes small, and even radius 1.1
# vanishes.

# %%
# NBVAL_CHECK_OUTPUT
settings = {
    "radius 0.9": dict(radius=0.9),
    "radius 1.0": dict(radius=1.0),
    "radius 1.1": dict(radius=1.1),
    "radius 1.1, large inputs": dict(radius=1.1, input_scale=3.0),
}
explosions = {
    name: rnn_analysis.exploding_demo(**kwargs, steps=40)
    for name, kwargs in settings.items()
}
for name, (distances, norms) in explosions.items():
    print(
        f"{name:25} ‖∂L/∂h_k‖ at t − k = 10: {norms[10]:.3e}   at 39: {norms[39]:.3e}"
    )

fig, ax = plt.subplots(figsize=(6, 3.5))
for name, (distances, norms) in explosions.items():
    ax.semilogy(distances, norms, label=name)
ax.set(
    xlabel="distance t − k",
    ylabel="‖∂L/∂h_k‖",
    title="Vanishing and exploding: U = radius × orthogonal",
)
ax.legend()
plt.show()

# %% [markdown]
# ### Gradient clipping (optional)
#
# The usual fix for explosions (Pascanu, Mikolov and Bengio, 2013): if the gradient's norm exceeds a threshold,
# rescale the whole gradient to that norm. The direction stays; only the step gets shorter.
# `rnn_analysis.clip_by_norm` does it by hand; it matches `torch.nn.utils.clip_grad_norm_`. To see it matter, we
# take one plain gradient-descent step on one batch with the shipped model, then with its recurrent matrix made
# three times larger, without and with clipping:

# %%
# NBVAL_CHECK_OUTPUT
batch = lm.batch_stream(train_ids(), vocab, batch_size=64, seed=1)(0)
for scale, clip in ((1, None), (3, None), (3, 1.0)):  # U as shipped, then 3 × U
    model = copy.deepcopy(rnn).train()
    with torch.no_grad():
        model.recurrent.weight_hh_l0.mul_(scale)
    loss_before = model(*batch)[1]
    loss_before.backward()
    grads = [p.grad for p in model.parameters()]
    clipped, norm = rnn_analysis.clip_by_norm(grads, 1.0)
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # in place
        same = max((a - b).abs().max().item() for a, b in zip(clipped, grads)) < 1e-7
        print(f"clip_by_norm matches clip_grad_norm_: {same}")
    with torch.no_grad():
        for p in model.parameters():
            p -= 1.0 * p.grad  # one SGD step, learning rate 1.0
        loss_after = model(*batch)[1].item()
    how = "clipped to 1.0" if clip else "not clipped"
    print(
        f"{scale} × U, {how:14} gradient norm {norm:.2f}: "
        f"loss {loss_before.item():.2f} → {loss_after:.2f}"
    )
print(
    f"the clipped step is the unclipped one times 1.0 / {norm:.2f} = {1.0 / norm:.2f}"
)

# %% [markdown]
# With the shipped U the gradient's norm is 0.36, below the threshold of 1.0: clipping would leave that step alone,
# and it lowers the loss. Three times U gives a gradient of norm 2.35. Without clipping that step overshoots and the
# loss goes up; the clipped step, same direction, goes down. For one step, clipping is nothing but a smaller learning
# rate: the step times 1.0 / 2.35 (the last line), the same as a learning rate of 0.43 instead of 1.0. What makes it
# different from a smaller rate is that it acts only on the steps whose gradient is larger than the threshold and
# leaves every other step at full length, like the shipped model's step above. (With AdamW, as in the recipes, the
# step size depends less on the gradient's norm, but a single huge gradient can still disturb its running averages:
# likely it inflates the average of squared gradients and so shortens the steps after it, which no cell here
# measures. The wider RNN of notebook 06 is trained with clipping at 1.0.)
#
# ## 5. "Not parallelizable": time against length
#
# The CSE538 slides list the RNN's limitation: it is not parallelizable, it needs sequential processing, so it is
# slow for long sequences. h_t needs h_{t−1}, so the T steps must run one after another, however many processors
# there are. We time one forward pass per sequence against the length, for the library RNN and the scratch loop
# (batches of 16, the fastest of 20 runs; the timings depend on the machine and on what else it runs, so they are not
# checked).

# %%
# NBVAL_IGNORE_OUTPUT
lengths = budget(full=[8, 16, 32, 64, 128], fast=[8, 32, 128])
timings = {  # each the fastest of 20 runs, the least disturbed by other work
    name: rnn_analysis.time_per_sequence(model, lengths, repeats=20)
    for name, model in (
        ("nn.RNN (C++ loop)", rnn),
        ("ScratchRNN (Python loop)", rnn.as_scratch()),
    )
}
for name, seconds in timings.items():
    print(
        f"{name:25}", "  ".join(f"T={n}: {1e3 * s:.3f} ms" for n, s in seconds.items())
    )
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, seconds in timings.items():
    ax.loglog(list(seconds), [1e3 * s for s in seconds.values()], "o-", label=name)
ax.set(
    xlabel="sequence length T",
    ylabel="ms per sequence",
    title="RNN LM: time against length",
)
ax.legend()
plt.show()

# %% [markdown]
# On a quiet machine the library RNN's time grows in proportion to T: BENCHMARKS.md has its times on the course's
# machine, from 0.017 ms at T = 8 to 0.214 ms at T = 128, each doubling of T roughly doubling them (the scratch loop
# is not timed against length there). The stored run was made on a busy machine: its times are several times those
# (nn.RNN 0.079 ms at T = 8, 1.089 ms at T = 128), though they too roughly double with each doubling of T; on a busy
# machine the points can also scatter. The T steps run one after another, each a small product of the batch's states
# (16 × 128) with U. The Python loop pays an overhead at every step on top, but a small one (BENCHMARKS.md, forward
# only: 665,440 against 722,720 tokens per second, batch 64, length 16), less than a busy machine's scatter: in the
# stored run (full mode, five lengths) the scratch loop was the slower at four lengths and the faster at T = 8.
# Growth in proportion to T is also what T times the work would cost a layer that handled all positions at once on
# a CPU, so this cell shows the cost of the sequence, not yet what a parallel layer saves. Notebook 08 takes the
# comparison up: on the CPU it times an LSTM LM against a GPT of similar size (a GPT is the transformer LM that
# notebook 08 builds; its layers use self-attention, in which each position reads the positions before it).
# Self-attention computes all positions in one step (its arithmetic grows as T², but it is not sequential); that
# pays on hardware that runs the positions in parallel, such as a GPU, where no notebook of the course times it
# against an RNN.
#
# ## 6. Masked language modelling with an RNN
#
# The CSE538 lecture asks for P(masked word | the words around it). A left-to-right RNN sees only the left side
# when it predicts a word. An RNN can use both: run one RNN from the left up to the gap, another from the right back
# to the gap, and predict the word from their two states. `MaskedBiLSTM` does exactly this, a **BiLSTM**
# (bidirectional LSTM); the word in the gap is never read.
#
# Its two RNNs are LSTMs (section 3), which notebook 06 builds from their equations. For now, an LSTM is an RNN with
# a gated memory cell that keeps information over many words better than the tanh RNN of this notebook (notebook 06
# measures that on agreement across attractors; on the next-word accuracy below the two are level). Notebook 06
# also compares the bidirectional model with a left-to-right one in depth. Here it is on a few sentences, with the
# oracle's exact answer, which sums over every word that fits both sides:

# %%
# NBVAL_CHECK_OUTPUT
from course_utils.models.recurrent.recurrent_lm import predict_masked_words
from course_utils.language.text_pipeline import MASK

bilstm = load("masked_bilstm")
for question in (
    "he ate the cake <mask> the fork .",
    "the cats near the dog <mask> happy .",
    "the girl that saw the boys <mask> .",
    "kayla cut the cake with the <mask> .",
):
    words = question.split()
    gap = words.index(MASK)
    exact = lang.masked_distribution(words[:gap], words[gap + 1 :])
    guesses = lm.top_k(predict_masked_words(bilstm, vocab, words), vocab, 3)
    print(question)
    print(
        "    BiLSTM",
        ", ".join(f"{w} {p:.2f}" for w, p in guesses),
        f"  (the oracle allows its top guess: {exact.get(guesses[0][0], 0) > 0})",
    )
    print("    oracle", ", ".join(f"{w} {p:.2f}" for w, p in list(exact.items())[:3]))

# %% [markdown]
# The last example is hard: the word that decides the instrument, "cut", is 5 positions before the gap
# (four words between; the same as in notebook 04's instrument items). The top guesses, fork and spoon, are eating
# instruments, likely suggested by "cake", nearer, and the oracle rules them out after "cut" (hiding "cake", as the
# next cells hide a side, would test it). The verdict in brackets says whether the model's top guess fits the
# sentence.
#
# Where does the number of the verb in "the cats near the dog <mask> happy ." come from? Not from "happy": an
# adjective follows "is" as well as "are". Only the subject "cats", on the left, decides it. We can check that the
# BiLSTM uses it: hide one side at a time, by replacing that side's state with its average over validation sentences
# (what the model gets from that side when it knows nothing about this sentence; `lstm_analysis.masked_word_by_side`),
# and do the same for the twin sentence with a singular subject.

# %%
# NBVAL_CHECK_OUTPUT
means = lstm_analysis.mean_side_states(
    bilstm, vocab, valid[:2000]
)  # ((H,), (H,)): the average state of each side
verb_forms = {"singular": ("is", "was"), "plural": ("are", "were")}
for question in (
    "the cats near the dog <mask> happy .",
    "the cat near the dogs <mask> happy .",
):
    print(question)
    for side, probs in lstm_analysis.masked_word_by_side(
        bilstm, vocab, question, means
    ).items():
        mass = {
            number: sum(probs[vocab.stoi[w]].item() for w in forms)
            for number, forms in verb_forms.items()
        }
        print(
            f"    {side:11} P(is or was) {mass['singular']:.2f}   P(are or were) "
            f"{mass['plural']:.2f}   "
            f"top guess: {lm.top_k(probs, vocab, 1)[0][0]}"
        )

# %% [markdown]
# From the right side alone the two twins get exactly the same prediction: their right sides are the same words, so
# "happy" cannot say singular or plural. From the left side alone the verb's number follows the subject. With both
# sides the number still comes from the left, and the right side adds what kind of word fits the gap (a verb
# before an adjective, where the left side alone also allows other words).
#
# One number for the idea: on the first 2,000 validation sentences, how often is the most probable word the true
# one, for every word of every sentence? The BiLSTM sees both sides; the unidirectional RNN LM predicts the same
# word from the left only (`lstm_analysis.word_prediction_scores` scores both). The BiLSTM is built from LSTMs,
# not from this notebook's tanh RNN, so the RNN against the BiLSTM changes two things at once. The middle line is
# a left-to-right LSTM LM (notebook 06's `lstm_lm`) with the RNN's hidden state of 128 units, as each of the
# BiLSTM's two LSTMs has (its gates give it more weights than the RNN): against it, the main change is the right
# side (the BiLSTM also has a second LSTM and is trained on masked words; one model of each).

# %%
# NBVAL_CHECK_OUTPUT
sentences = valid[:2000]
print(
    f"the first {len(sentences):,} validation sentences ({sum(map(len, sentences)):,} "
    "words): how often the most probable\nword is the true one:"
)
for name, model in (
    ("RNN LM, left context only", rnn),
    ("LSTM LM, left context only", load("lstm_lm")),
    ("BiLSTM, both sides", bilstm),
):
    accuracy, _ = lstm_analysis.word_prediction_scores(model, vocab, sentences)
    print(f"  {name:26} {accuracy:.3f}")

# %% [markdown]
# Compare the lines: the two left-to-right models are level, so the LSTM cell alone does not explain the BiLSTM's
# gain. The right side likely does, though the BiLSTM also differs in its second LSTM, its masked-word objective
# and its recipe (`zoo.BIDIRECTIONAL_TRAINING`: fewer steps, clipped), which these lines do not separate (each line
# is one trained model; no seed spread is measured for this score). The words after a gap often pin down what fits
# in it. Notebook 06 compares the bidirectional model with the unidirectional one in
# depth; the transformer notebooks do masked language modelling with self-attention (BERT, notebook 09).
#
# ## 7. Inside the RNN, token by token
#
# Type a sentence (or pick an example) and move the position t. Top: the hidden state h_t at every token (the first
# 32 of the 128 units); a column's 128 units, 32 of them shown, are all the RNN carries forward. Bottom: its
# next-word distribution at t beside the oracle's; red bars are words the oracle rules out. The two gated cells of
# notebook 06 are there too; switch the model to compare them.

# %%
from course_utils.widgets.sequence_demo import SequenceDemo

sequence_demo = SequenceDemo(oracle=full_lang)
sequence_demo.box

# %% [markdown]
# ## 8. Bad input gets a clear message
#
# A sequence longer than the model's `max_len`, an empty sentence, and an unknown word each raise
# `CourseInputError` with a message that says what to do; the widget shows the same messages inline. (`max_len` is a
# guard that the course's recipe sets, 128 tokens, not a limit of the loop: a model built with a larger `max_len`
# reads longer sequences with the same weights.)

# %%
# NBVAL_CHECK_OUTPUT
attempts = {
    "too long": lambda: rnn(torch.full((1, 200), vocab.stoi["the"])),
    "empty sentence": lambda: sequence_demo.draw("", 0, "RNN", "hidden state"),
    "empty tensor": lambda: rnn(torch.zeros(1, 0, dtype=torch.long)),
    "unknown word": lambda: lm.next_token_probs(rnn, vocab, "the zebra sleeps"),
}
for what, attempt in attempts.items():
    try:
        attempt()
    except CourseInputError as error:
        print(f"{what}: {error}\n")

# %% [markdown]
# Training can fail too: with a learning rate far too large the weights blow up and the loss becomes **NaN** (not a
# number: what inf − inf or 0 × inf gives in floating point). The course's training loop stops at once, before that
# step's update, says whether the weights survived, and what to try:

# %%
from course_utils.training import NonFiniteLossError, train as train_loop

tiny = RecurrentLM(len(vocab), cell="rnn", embed_dim=8, hidden_dim=8, seed=0)
stopped = None
try:
    train_loop(
        tiny,
        lm.batch_stream(train_ids(), vocab, batch_size=8, seed=0),
        steps=10,
        lr=1e30,
        progress=False,
    )
except NonFiniteLossError as error:
    stopped = error
    print(error)

# %% [markdown]
# A float32 number overflows to infinity past the largest one the format holds, about 3.4 × 10³⁸ (the cell's last
# line prints it), and inf − inf or 0 × inf gives NaN, which the message above reports. *Which* step
# that first happens at likely depends on the last bits of numbers near that limit, so it can differ on another CPU
# or release of torch; what the loop guarantees does not:

# %%
# NBVAL_CHECK_OUTPUT
print(
    "training stopped with NonFiniteLossError:", isinstance(stopped, NonFiniteLossError)
)
print(
    "every loss logged before that was finite:",
    all(math.isfinite(loss) for loss in stopped.history.losses),
)
print("it stopped within the 10 steps asked for:", stopped.step <= 10)
print(f"the largest float32 number: {torch.finfo(torch.float32).max:.1e}")

# %% [markdown]
# ## 9. Exercises
#
# Each exercise has a self-check. The cells run as they are (they return `None`); fill them in and run the check.
#
# **Exercise 1.** One step of the Elman RNN, for a batch of rows: h_t = tanh(U h_{t−1} + W x_t + b). The rows of
# `x_t` (B, D) and `h_prev` (B, H) are examples; W is (H, D), U is (H, H), b is (H,).

# %% tags=["exercise"]
from course_utils.exercises.recurrent import (
    check_clip_by_norm,
    check_elman_step,
    check_parameter_count,
    check_sequence_loss,
)


def my_elman_step(x_t, h_prev, W, U, b):
    """h_t (B, H) from x_t (B, D) and h_prev (B, H)."""
    return None  # your code here


_ = check_elman_step(my_elman_step)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def my_elman_step(x_t, h_prev, W, U, b):
#     return torch.tanh(h_prev @ U.T + x_t @ W.T + b)   # rows are examples, so the matrices act from the right
# ```
# </details>

# %% [markdown]
# **Exercise 2.** The teacher-forced loss of a padded batch: the mean of −log ŷ_t[target] over every real target,
# skipping the positions whose target is `lm.IGNORE_INDEX` (−100). `logits` is (B, T, V), `targets` (B, T).


# %% tags=["exercise"]
def my_sequence_loss(logits, targets):
    """Mean cross-entropy over the targets that are not IGNORE_INDEX."""
    return None  # your code here


_ = check_sequence_loss(my_sequence_loss)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def my_sequence_loss(logits, targets):
#     keep = targets != lm.IGNORE_INDEX                                       # (B, T)
#     logp = torch.log_softmax(logits, dim=-1)                                # (B, T, V)
#     chosen = logp.gather(-1, targets.clamp(min=0).unsqueeze(-1))[..., 0]    # (B, T)
#     return -(chosen * keep).sum() / keep.sum()
#     # or: F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=lm.IGNORE_INDEX)
# ```
# </details>

# %% [markdown]
# **Exercise 3.** Clip a list of gradients by their **joint** norm: if ‖all of them as one vector‖ > `max_norm`,
# multiply every tensor by max_norm / norm; otherwise return them unchanged. Return new tensors (leave the inputs
# alone).


# %% tags=["exercise"]
def my_clip(grads, max_norm):
    """The clipped gradients, a list of tensors."""
    return None  # your code here


_ = check_clip_by_norm(my_clip)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def my_clip(grads, max_norm):
#     norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
#     scale = min(1.0, max_norm / (norm.item() + 1e-6))
#     return [g * scale for g in grads]
# ```
# </details>

# %% [markdown]
# **Exercise 4.** The number of parameters of the CMU slide's RNN LM (E, W_e, W_h, b_1, U, b_2) for a vocabulary of
# `V` words, embeddings of `d`, a hidden state of `H`, reading sentences of `T` words.


# %% tags=["exercise"]
def my_parameter_count(V, d, H, T):
    """How many numbers the RNN LM learns."""
    return None  # your code here


_ = check_parameter_count(my_parameter_count)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def my_parameter_count(V, d, H, T):
#     return V * d + H * d + H * H + H + V * H + V    # E, W_e, W_h, b_1, U, b_2: T does not appear
# ```
# (`nn.RNN` keeps two bias vectors, `bias_ih` and `bias_hh`, so a `RecurrentLM` with `impl="library"` has H more.)
# </details>

# %% [markdown]
# ## Summary
#
# - The RNN LM reads one word at a time: h_t = tanh(U h_{t−1} + W x_t), ŷ_t = softmax(V h_t). The slide's loop (over
#   every input: its `range(1, len(x))` skips the first), the course's `ScratchRNN` and PyTorch's `nn.RNN` compute
#   the same numbers.
# - The same weights serve every step, so the model's size does not depend on the length it reads.
# - Training feeds the true words in (teacher forcing) and averages the cross-entropy over the time steps and the
#   real (unpadded) targets of a batch. Truncated BPTT detaches the state every k steps: the model still remembers
#   forward, but learns only from dependencies inside a chunk (none of k steps or more).
# - On the course language the RNN's perplexity is the closest to the oracle's, only a little better than the
#   FFNN's but by more than the seed spread (a verdict on the two recipes: the RNN's trains twice the steps at
#   half the width); most of its samples are grammatical.
# - Unlike an n-gram or an FFNN, its prediction after the same words depends on words far back, but that
#   dependence fades as the subject recedes (more words and more attractors together), and so does the gradient:
#   on average ‖∂L_t/∂h_k‖ falls roughly geometrically with t − k (vanishing; not at every step of one sentence),
#   or grows when U stretches vectors (radius above 1) and tanh is not saturated (exploding). Clipping shortens a
#   step whose gradient is too large; for that one step it is a smaller learning rate.
# - Its steps run one after another: on a quiet machine its time grows in proportion to length. A bidirectional
#   LSTM, which reads the words on both sides of a gap, predicts a masked word better than a left-to-right RNN or
#   LSTM reading the left side alone (one trained model of each; its objective and recipe differ too); hiding one
#   side at a time shows which side a prediction comes from.
#
# The lecture's table of RNN strengths (any length, a memory, the same weights everywhere) and issues (slow to train,
# vanishing and exploding gradients, trouble using long-range context) now has a full measurement behind each row
# but two, which are measured only in part. The slide's "slow to train (BPTT)": the forward pass's time against length
# (training time is not timed here; notebook 08 times an LSTM against a transformer). Its "same weights used for all
# inputs, so word order isn't wonky (like FFNN)": section 1 counts the weights, and no cell tests the word order.
# Notebook 06 shows what the LSTM changes.
#
# ## References
#
# - J. L. Elman (1990). Finding structure in time. *Cognitive Science* 14(2).
# - Y. Bengio, P. Simard, P. Frasconi (1994). Learning long-term dependencies with gradient descent is difficult.
#   *IEEE Transactions on Neural Networks* 5(2).
# - T. Mikolov, M. Karafiát, L. Burget, J. Černocký, S. Khudanpur (2010). Recurrent neural network based language
#   model. *Interspeech*.
# - R. Pascanu, T. Mikolov, Y. Bengio (2013). On the difficulty of training recurrent neural networks. *ICML*.
# - R. J. Williams, D. Zipser (1989). A learning algorithm for continually running fully recurrent neural networks.
#   *Neural Computation* 1(2) (teacher forcing).
# - D. Jurafsky, J. H. Martin. *Speech and Language Processing*, 3rd ed. draft: chapter 8 (RNNs and LSTMs) and
#   chapter 9 in earlier drafts.
