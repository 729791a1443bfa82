"""Fine-tuning and pretraining throughput under other execution settings, recipes unchanged.

Runs the package's own training loops for a few steps in a temporary folder --
``training.finetune.train`` (chapter 7's fine-tuning) and ``training.pretrain._train``
(chapter 10's pretraining, with fewer tokens) -- once as they are and once per variant, and
prints real tokens/s, CPU seconds, the padding share of the batches and whether the losses are
those of the unchanged loop (bit for bit, or the largest difference). Each variant runs once
per round, ``--repeats`` rounds interleaved (so a change in the machine's load hits all of
them alike), and its best round counts. Variants (each applied from outside the loop, for this
process only):

- ``threads1``: ``torch.set_num_threads(1)`` (the default is one thread per core);
- ``fused``: ``torch.optim.AdamW(..., fused=True)`` (one kernel per step for every parameter);
- ``foreach``: ``AdamW(..., foreach=True)`` (torch's multi-tensor loop; on a CPU the default is
  one parameter at a time);
- ``compile``: the model's ``forward`` compiled with ``torch.compile`` (inductor, dynamic
  shapes); its compile time is in the loop's seconds, and also given alone;
- fine-tuning only, the batch plan (``finetune.batch_order``'s ``pool``, batches sorted by
  length within pools of that many batches; the recipe's is 50): ``pool1`` (no length
  grouping: random batches, padded to their longest text) and ``pool1000`` (the whole sample
  sorted). A batch plan changes the recipe (the batches, so the weights); the others keep it.

Usage::

    python benchmarks/training_variants.py finetune --model minilm-l6 --task sst2 --steps 30
    python benchmarks/training_variants.py finetune --model smollm2-135m --task qnli --steps 12
    python benchmarks/training_variants.py pretrain --objective causal --tokens 30000
    python benchmarks/training_variants.py pretrain --variants default fused compile threads1

Nothing here changes the recipes: their code keys the cached checkpoints (chapter 7's
fine-tuned models, chapter 10's runs), so adopting a variant retrains them.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lmgeometry.training import finetune as ft
from lmgeometry.training import pretrain as pt
from lmgeometry.training.pretrain_settings import PretrainSettings
from lmgeometry.training.settings import Settings

FINETUNE_VARIANTS = ["default", "threads1", "foreach", "fused", "compile", "pool1", "pool1000"]
PRETRAIN_VARIANTS = ["default", "threads1", "foreach", "fused", "compile"]


@contextlib.contextmanager
def variant(name: str) -> Iterator[dict[str, Any]]:
    """Apply ``name`` for the duration of the block; yields facts it measured (compile s)."""
    facts: dict[str, Any] = {}
    threads = torch.get_num_threads()
    adamw, order, classifier, build = (torch.optim.AdamW, ft.batch_order, ft._classifier,
                                       pt._build)
    try:
        if name.startswith("threads"):
            torch.set_num_threads(int(name.removeprefix("threads")))
        elif name in ("fused", "foreach"):
            torch.optim.AdamW = functools.partial(adamw, **{name: True})
        elif name.startswith("pool"):
            ft.batch_order = functools.partial(order, pool=int(name.removeprefix("pool")))
        elif name == "compile":
            def compiled(model: torch.nn.Module) -> torch.nn.Module:
                model.forward = torch.compile(model.forward, dynamic=True)
                return model

            ft._classifier = lambda *a, **k: (lambda m, i: (compiled(m), i))(*classifier(*a, **k))
            pt._build = lambda *a, **k: compiled(build(*a, **k))
        elif name != "default":
            raise SystemExit(f"unknown variant {name!r}")
        yield facts
    finally:
        torch.set_num_threads(threads)
        torch.optim.AdamW, ft.batch_order, ft._classifier, pt._build = (adamw, order,
                                                                         classifier, build)


def padding_share(lengths: np.ndarray, batches: list[np.ndarray]) -> float:
    """Padding tokens over all tokens fed when each batch is padded to its longest text."""
    fed = sum(len(b) * int(lengths[b].max()) for b in batches)
    return 1 - float(lengths.sum()) / fed


def finetune_run(name: str, args: argparse.Namespace) -> dict[str, Any]:
    n = args.steps * args.batch_size
    sep = ft.pair_separator(args.model) if args.task == "qnli" else ""
    sample = ft.task_data(args.task, n, seed=0, separator=sep)
    settings = Settings(train_size=n, epochs=1, batch_size=args.batch_size)
    with variant(name), tempfile.TemporaryDirectory() as tmp:
        location, options, _ = ft.pretrained_source(args.model)
        tokenizer = ft._tokenizer(location, options)
        lengths = np.array([len(x) for x in tokenizer(sample.train_texts, truncation=True,
                                                      max_length=settings.max_length)
                            ["input_ids"]])
        pad = padding_share(lengths, ft.batch_order(lengths, settings.batch_size, 0, 0))
        log = ft.train(args.model, sample, settings, tmp, progress=False)
    return {"variant": name, "seconds": log["seconds"], "cpu_seconds": log["cpu_seconds"],
            "tokens": log["tokens"], "tokens_s": log["tokens_per_second"],
            "threads": log["threads"], "padding": pad, "loss": log["loss"]}


def pretrain_run(name: str, args: argparse.Namespace) -> dict[str, Any]:
    settings = PretrainSettings(objective=args.objective, tokens=args.tokens, checkpoints=2)
    train, held = pt.split_texts(*pt.pretraining_texts()[:1], seed=settings.seed)
    with variant(name), tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        log, _ = pt._train(settings, train, held, Path(tmp), device="cpu", progress=False,
                           callback=None)
        wall = time.perf_counter() - t0
    return {"variant": name, "seconds": log["seconds"], "cpu_seconds": log["cpu_seconds"],
            "wall_with_saves_s": round(wall, 2), "tokens": log["tokens"],
            "tokens_s": log["tokens_per_second"], "threads": log["threads"], "padding": None,
            "loss": log["loss"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="loop", required=True)
    f = sub.add_parser("finetune")
    f.add_argument("--model", default="minilm-l6")
    f.add_argument("--task", default="sst2", choices=["sst2", "qnli"])
    f.add_argument("--steps", type=int, default=20)
    f.add_argument("--batch-size", type=int, default=Settings.batch_size)
    f.add_argument("--variants", nargs="+", default=FINETUNE_VARIANTS)
    p = sub.add_parser("pretrain")
    p.add_argument("--objective", default="causal", choices=["causal", "mlm"])
    p.add_argument("--tokens", type=int, default=30_000)
    p.add_argument("--variants", nargs="+", default=PRETRAIN_VARIANTS)
    for q in (f, p):
        q.add_argument("--repeats", type=int, default=2, help="interleaved rounds (best counts)")
        q.add_argument("--json", type=Path)
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    what = (f"fine-tuning {args.model} on {args.task}, {args.steps} steps of "
            f"{args.batch_size}" if args.loop == "finetune" else
            f"pretraining ({args.objective}, {args.tokens:,} tokens)")
    print(f"{what}; {os.cpu_count()} cores, torch {torch.__version__}, default threads "
          f"{torch.get_num_threads()}; load {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    run = finetune_run if args.loop == "finetune" else pretrain_run
    rounds = [[run(name, args) for name in args.variants] for _ in range(args.repeats)]
    rows = []
    for k in range(len(args.variants)):
        runs = [r[k] for r in rounds]
        best = min(runs, key=lambda r: r["seconds"])
        rows.append(best | {"all_seconds": [r["seconds"] for r in runs],
                            "all_cpu_seconds": [r["cpu_seconds"] for r in runs],
                            "cpu_seconds": min(r["cpu_seconds"] for r in runs)})
    reference = next((r for r in rows if r["variant"] == "default"), rows[0])
    print(f"best of {args.repeats} interleaved rounds (CPU s: the lowest)")
    print(f"{'variant':<10} {'threads':>7} {'seconds':>8} {'CPU s':>7} {'tokens/s':>9} "
          f"{'vs default':>10} {'padding':>8} {'losses vs default':>20}")
    for r in rows:
        same = len(r["loss"]) == len(reference["loss"])
        diff = (max(abs(a - b) for a, b in zip(r["loss"], reference["loss"], strict=True))
                if same else float("nan"))
        r["loss_max_diff"] = diff
        losses = ("identical" if diff == 0 else f"max diff {diff:.2g}")
        padding = "" if r["padding"] is None else f"{r['padding']:.1%}"
        print(f"{r['variant']:<10} {r['threads']:>7} {r['seconds']:>8.1f} "
              f"{r['cpu_seconds']:>7.1f} {r['tokens_s']:>9.0f} "
              f"{r['tokens_s'] / reference['tokens_s']:>9.2f}x {padding:>8} {losses:>20}")
    print(f"load after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps({"loop": args.loop, "args": vars(args) | {
            "json": str(args.json)}, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
