"""Fine-tuning throughput: tokens/s and the share of this machine's matmul throughput.

For each model this script runs the package's training loop
(:func:`lmgeometry.training.finetune.train`, the loop of ``lmgeometry finetune``: AdamW,
length-grouped batches, gradient clipping) for a few steps on an SST-2 (or QNLI) sample in a
temporary folder and reads its log: real (unpadded) tokens per second of the loop, wall and
CPU time. A training step costs about 6 x N x tokens floating-point operations, N the
non-embedding parameters (2 for the forward pass, 4 for the backward; embedding lookups cost
no multiply-adds; the sequence-classification head is a few thousand parameters), so

    achieved GFLOP/s = 6 N tokens / seconds,    share = achieved / matmul GFLOP/s,

the matmul throughput being that of a large fp32 ``torch.matmul`` measured here with the
same threads. Attention's n^2 terms are left out (at 20-60 tokens they are a few percent),
so the share is a slight underestimate. The first step is included in the loop's time (with
few steps it weighs; use ``--steps`` 10 or more for steadier numbers).

Usage::

    python benchmarks/finetune.py                        # the book's four default models
    python benchmarks/finetune.py --models minilm-l6 --steps 20 --task qnli
    python benchmarks/finetune.py --threads 1            # per-core rates

On a shared machine the wall-clock rates fall with the load, and far more than in proportion
with two threads: each waits, spinning, for the other whenever either is descheduled (on this
project's loaded two-core machine MiniLM-L6 trained more than ten times slower with two
threads than with one). With ``--threads 1`` the rates and the CPU time are a steadier
measure of per-core work.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from lmgeometry.io.models import pair_separator
from lmgeometry.training import finetune as ft
from lmgeometry.training.settings import PRECISIONS, Settings

DEFAULT_MODELS = ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m"]


def matmul_gflops(size: int = 2048, repeats: int = 5) -> tuple[float, float]:
    """Best-of fp32 matmul GFLOP/s on the CPU: by wall clock and by process CPU time."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        a @ b
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    flops = 2 * size**3
    return flops / best_wall / 1e9, flops / best_cpu / 1e9


def non_embedding_parameters(folder: Path) -> int:
    """Parameters of a saved classifier outside its embedding tables."""
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(folder)
    embedded = sum(m.weight.numel() for m in model.modules()
                   if isinstance(m, torch.nn.Embedding))
    return sum(p.numel() for p in model.parameters()) - embedded


def run(model: str, task: str, steps: int, batch_size: int, max_length: int,
        precision: str = Settings.precision) -> dict:
    n = steps * batch_size
    sample = ft.task_data(task, n, seed=0,
                          separator=pair_separator(model) if task == "qnli" else "")
    settings = Settings(train_size=n, epochs=1, batch_size=batch_size, max_length=max_length,
                        precision=precision)
    with tempfile.TemporaryDirectory() as tmp:
        log = ft.train(model, sample, settings, tmp, progress=False)
        params = non_embedding_parameters(Path(tmp))
    return {"model": model, "precision": precision, "kind": log["kind"],
            "params_M": params / 1e6,
            "steps": log["steps"], "tokens": log["tokens"], "seconds": log["seconds"],
            "cpu_seconds": log["cpu_seconds"], "examples_s": log["examples_per_second"],
            "tokens_s": log["tokens_per_second"],
            "gflops": 6 * params * log["tokens"] / log["seconds"] / 1e9,
            "gflops_cpu": 6 * params * log["tokens"] / log["cpu_seconds"] / 1e9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    parser.add_argument("--task", default="sst2", choices=["sst2", "qnli"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=Settings.batch_size)
    parser.add_argument("--max-length", type=int, default=Settings.max_length)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: torch's, one per core)")
    parser.add_argument("--precision", nargs="+", default=list(PRECISIONS), choices=PRECISIONS,
                        help="each one timed in turn (default: both)")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    if args.threads:
        torch.set_num_threads(args.threads)
    wall, cpu = matmul_gflops()
    print(f"threads: {torch.get_num_threads()}; fp32 matmul: {wall:.0f} GFLOP/s (wall), "
          f"{cpu:.0f} GFLOP/s (CPU time)")
    print(f"{'model':<14} {'precision':<9} {'kind':<8} {'N (M)':>7} {'steps':>5} "
          f"{'tokens/s':>9} {'examples/s':>10} {'GFLOP/s':>8} {'share':>6} "
          f"{'share (CPU time)':>17}")
    for model in args.models:
        for precision in args.precision:
            r = run(model, args.task, args.steps, args.batch_size, args.max_length, precision)
            print(f"{r['model']:<14} {precision:<9} {r['kind']:<8} {r['params_M']:>7.1f} "
                  f"{r['steps']:>5} {r['tokens_s']:>9.0f} {r['examples_s']:>10.1f} "
                  f"{r['gflops']:>8.1f} {r['gflops'] / wall:>6.0%} "
                  f"{r['gflops_cpu'] / cpu:>17.0%}")

if __name__ == "__main__":
    main()
