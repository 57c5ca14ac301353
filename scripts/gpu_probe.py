"""Does the course's model code run on a GPU? Each shipped model is moved to DEV, fed on DEV, and compared with the CPU.

Run from the project root: DEV=cuda python scripts/gpu_probe.py   (DEV=cpu checks the probe itself:
tests/project/test_gpu_probe.py runs it so, to keep it in step with the code). It exits 1 when a check fails.
"""

import copy
import math
import os
import sys
import time
import traceback

import torch

DEV = torch.device(os.environ.get("DEV", "cuda"))
results = []


def check(name):
    def wrap(fn):
        start = time.time()
        try:
            detail = fn()
            results.append((name, "ok", detail or "", time.time() - start))
        except Exception as error:  # noqa: BLE001 - the probe reports every failure
            tb = traceback.format_exc().strip().splitlines()
            results.append(
                (
                    name,
                    "FAIL",
                    f"{type(error).__name__}: {error} | {tb[-3] if len(tb) > 3 else ''}"[:300],
                    time.time() - start,
                )
            )
        return fn

    return wrap


def both(model, *args, **kw):
    """Outputs on the CPU and on DEV, and their max abs difference."""
    model = model.eval()
    with torch.no_grad():
        cpu = model(*args, **kw)
        moved = copy.deepcopy(model).to(DEV)
        dev = moved(*[a.to(DEV) if torch.is_tensor(a) else a for a in args], **kw)
    first = lambda out: out[0] if isinstance(out, (tuple, list)) else getattr(out, "logits", out)
    return float((first(cpu).float() - first(dev).float().cpu()).abs().max()), moved


@check("gpt_lm forward + greedy/beam/sample + 30 train steps")
def _():
    from course_utils.models import generation
    from course_utils import zoo

    gpt = zoo.load("gpt_lm")
    ids = torch.randint(4, gpt.vocab_size if hasattr(gpt, "vocab_size") else 100, (8, 12))
    diff, moved = both(gpt, ids)
    prefix = ids[0, :3].tolist()
    g_cpu = generation.greedy(gpt, prefix, 20)
    g_dev = generation.greedy(moved, prefix, 20)
    b_cpu = generation.beam_search(gpt, prefix, width=4, max_new_tokens=20)
    b_dev = generation.beam_search(moved, prefix, width=4, max_new_tokens=20)
    sampled = generation.sample(moved, prefix, max_new_tokens=20, top_p=0.9, generator=None)
    from course_utils import training

    batches = (torch.randint(4, 100, (16, 13)) for _ in range(30))
    model = copy.deepcopy(gpt).train()
    history = training.train(model, ((b[:, :-1], b[:, 1:]) for b in batches), steps=30, device=DEV, progress=False)
    if not (sampled.ids and math.isfinite(history.final_loss)):
        raise RuntimeError(f"sampled {sampled.ids}, final training loss {history.final_loss}")
    return (f"max|cpu-dev| {diff:.1e}; greedy same as cpu: {g_cpu.ids == g_dev.ids}; beam same: {b_cpu.ids == b_dev.ids}; "
            f"sampled {len(sampled.ids)} tokens; trained on {next(model.parameters()).device}, final loss "
            f"{history.final_loss:.2f}")  # fmt: skip


# (checkpoint, the token ids fed: lowest id, highest id, shape)
FORWARD_CHECKS = [(name, (4, 100, (4, 10))) for name in ("rnn_lm", "lstm_lm", "gru_lm", "lstm2_lm", "ffnn_n5")]
FORWARD_CHECKS += [(name, (5, 500, (4, 12))) for name in ("bert_mlm", "bert_deep", "bert_sentiment")]

for name, (low, high, shape) in FORWARD_CHECKS:

    @check(f"{name} forward")
    def _(name=name, low=low, high=high, shape=shape):
        from course_utils import zoo

        diff, _ = both(zoo.load(name), torch.randint(low, high, shape))
        return f"max|cpu-dev| {diff:.1e}"


for name in ["additive_128", "dot_128", "none_128"]:

    @check(f"seq2seq {name} greedy translation")
    def _(name=name):
        from course_utils import zoo
        from course_utils.zoo import translation_checkpoints as tc
        from course_utils.models.recurrent import seq2seq as s2s
        from course_utils.language import parallel

        model = zoo.load(name).eval()
        src_vocab, tgt_vocab = tc.vocabularies()
        pairs = parallel.load("test")[:64]
        sources = [p.source for p in pairs]
        cpu = s2s.translate_words(model, src_vocab, tgt_vocab, sources)
        dev = s2s.translate_words(copy.deepcopy(model).to(DEV), src_vocab, tgt_vocab, sources)
        return f"same translations {sum(a == b for a, b in zip(cpu, dev))}/{len(cpu)}"


@check("transformer_2x128 translator forward")
def _():
    from course_utils import zoo
    from course_utils.zoo import translation_checkpoints as tc
    from course_utils.models.recurrent import seq2seq as s2s
    from course_utils.language import parallel

    model = zoo.load("transformer_2x128").eval()
    src_vocab, tgt_vocab = tc.vocabularies()
    pairs = parallel.load("test")[:32]
    batch = s2s.make_batch(pairs, src_vocab, tgt_vocab)
    moved = copy.deepcopy(model).to(DEV)
    dev_batch = type(batch)(*[t.to(DEV) if torch.is_tensor(t) else t for t in batch])
    with torch.no_grad():
        a = model(batch)[0]
        b = moved(dev_batch)[0]
    out = ""
    if hasattr(moved, "greedy"):
        moved.greedy(dev_batch.source)
        out = "; greedy ok"
    return f"max|cpu-dev| {float((a - b.cpu()).abs().max()):.1e}{out}"


@check("setup_notebook device")
def _():
    from course_utils import setup_notebook

    return str(setup_notebook(seed=0))


width = max(len(r[0]) for r in results)
for name, status, detail, seconds in results:
    print(f"{name:<{width}}  {status:<4}  {seconds:6.1f}s  {detail}")
print(f"probe on {DEV}: {sum(r[1] == 'ok' for r in results)}/{len(results)} ok")
sys.exit(0 if all(r[1] == "ok" for r in results) else 1)
