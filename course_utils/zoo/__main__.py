"""The zoo's command line: train the named checkpoints by their recipes and ship them.

    python -m course_utils.zoo --list                # every name, notebook by notebook
    python -m course_utils.zoo ffnn_n5 gpt_lm        # those models -> data/checkpoints/<notebook>/<name>/
    python -m course_utils.zoo --notebook 09         # a notebook's set, in build order
    python -m course_utils.zoo elmo --out /tmp/zoo   # into another folder

Training runs on ``OMP_NUM_THREADS`` threads (default 2, the course's reference machine).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch

from course_utils import zoo


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    command = argparse.ArgumentParser(prog="python -m course_utils.zoo", description=__doc__.splitlines()[0])
    command.add_argument("names", nargs="*", metavar="NAME", help="checkpoints to train and ship (see --list)")
    command.add_argument("--list", action="store_true", help="print the names, notebook by notebook, and stop")
    command.add_argument("--notebook", choices=list(zoo.NOTEBOOKS), help="train and ship every checkpoint of it")
    command.add_argument(
        "--out", type=Path, default=None, metavar="DIR", help="folder (default: data/checkpoints/<notebook>/)"
    )
    return command


def main(argv=None) -> None:
    """Run the command: list the names, or train and save the chosen checkpoints and print their scores."""
    command = parser()
    args = command.parse_args(argv)
    if args.list:
        for notebook, names in zoo.NOTEBOOKS.items():
            print(f"{notebook}: {' '.join(names)}")
        return
    chosen = [*args.names, *zoo.NOTEBOOKS.get(args.notebook, ())]
    unknown = [name for name in chosen if name not in zoo.names()]
    if unknown:
        command.error(f"unknown name(s) {', '.join(unknown)}; the names are {', '.join(zoo.names())}")
    if not chosen:
        command.error("name the checkpoints to build, or a --notebook (--list shows the names)")
    # The course's reference machine is a 2-core CPU. On a busy machine set OMP_NUM_THREADS=1: two threads
    # sharing one free core spin-wait on each other (measured: 3.8 s per ELMo step against 0.14 s with one).
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 2))
    for name in dict.fromkeys(chosen):
        record = zoo.build(name, args.out)
        scores = {key: value for key, value in record.items() if "valid" in key}
        print(f"{name}: {record['train_seconds']} s, {torch.get_num_threads()} thread(s), {scores}", flush=True)


if __name__ == "__main__":
    main()
