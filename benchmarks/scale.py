"""Extraction on Ray against the local engine, and the cost model of a 7B-parameter job.

Part 1 (measured): the same corpus is extracted by the local engine and by the Ray engine
(``activations(engine="ray")``, a local cluster started by this script) with 1 and 2 workers,
each into a fresh store root, with the same ``shard_sentences``. For each run it prints the
wall time, words/s, the speed-up over the local engine, and where the Ray job's time goes:
the shards' own extraction time (forward passes and writes, summed over workers), and the
rest (starting the actors, which load the model, shipping the corpus, merging the tables,
checksums), per shard. It reports how many stored values differ from the local entry: none
when the local run uses as many torch threads as a worker (1); with more threads the matrix
products sum in another order, and about one float16 value in a million rounds the other way.

Part 2 (on paper): the cost of extracting a 7B decoder (32 blocks + embeddings = 33 layers of
4,096 dimensions, 6.7e9 parameters) over the corpora seed 001 used (about 39,000 STS
sentences, 400,000 words): FLOPs, GPU-hours at a stated utilisation, bytes written, shard
sizes and the memory of one worker. ``--tokens-per-word`` and the other figures are
parameters; the defaults are stated in the output.

Usage::

    python benchmarks/scale.py --model minilm-l6 --n 600 --shard-sentences 150
    python benchmarks/scale.py --cost-only

Timings on a shared machine are noisy: run it on an idle one for figures worth quoting.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from typing import Any

import numpy as np
import torch

from lmgeometry.io import corpus as corpora


def _run(model: str, corpus: corpora.Corpus, root: str, shard_sentences: int,
         engine: str, workers: int | None) -> tuple[Any, float]:
    from lmgeometry.activations.store import activations

    t0 = time.perf_counter()
    store = activations(model, corpus, root=root, shard_sentences=shard_sentences,
                        engine=engine, workers=workers, progress=False)
    return store, time.perf_counter() - t0


def _difference(a: Any, b: Any) -> tuple[float, float]:
    """Share of the stored values that differ, and the largest absolute difference."""
    differ, total, largest = 0, 0, 0.0
    for i in range(a.n_layers):
        x, y = np.asarray(a.layer(i, dtype=None)), np.asarray(b.layer(i, dtype=None))
        differ += int((x != y).sum())
        total += x.size
        largest = max(largest, float(np.abs(x.astype(np.float64) - y).max()))
    return differ / total, largest


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Part 1: local engine, then Ray with each worker count."""
    import ray

    corpus = corpora.build(args.corpus, args.n, args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        local, local_s = _run(args.model, corpus, f"{tmp}/local", args.shard_sentences,
                              "local", None)
        words = local.n_words
        rows.append({"engine": "local", "workers": 1, "seconds": local_s,
                     "words_per_s": words / local_s, "speedup": 1.0})
        for workers in args.workers:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(num_cpus=max(workers, os.cpu_count() or 1), include_dashboard=False,
                     log_to_driver=False, logging_level="ERROR")
            try:
                store, seconds = _run(args.model, corpus, f"{tmp}/ray{workers}",
                                      args.shard_sentences, "ray", workers)
            finally:
                ray.shutdown()
            shard_seconds = sum(json.loads((store.path / "shards" / s["name"] / "shard.json")
                                           .read_text())["seconds"] for s in store.shards)
            n_shards = len(store.shards)
            rows.append({"engine": "ray", "workers": workers, "seconds": seconds,
                         "words_per_s": words / seconds, "speedup": local_s / seconds,
                         "shards": n_shards, "shard_work_s": shard_seconds,
                         "overhead_s": seconds - shard_seconds / workers,
                         "overhead_per_shard_s": (seconds - shard_seconds / workers) / n_shards,
                         "differ_from_local": _difference(local, store)})
    print(f"{args.model}, {args.corpus} n={args.n}: {words:,} words, shards of "
          f"{args.shard_sentences} sentences, {os.cpu_count()} CPUs; the local run uses "
          f"{torch.get_num_threads()} torch threads, each Ray worker 1")
    for r in rows:
        extra = ("" if r["engine"] == "local" else
                 f"  shards {r['shards']}, shard work {r['shard_work_s']:.1f} s, overhead "
                 f"{r['overhead_s']:.1f} s ({r['overhead_per_shard_s']:.2f} s/shard), "
                 f"values differing from the local run: {r['differ_from_local'][0]:.1e} "
                 f"(largest {r['differ_from_local'][1]:.1e})")
        print(f"  {r['engine']:5} x{r['workers']}: {r['seconds']:6.1f} s  "
              f"{r['words_per_s']:7.0f} words/s  speed-up {r['speedup']:.2f}{extra}")
    return rows


def cost_model(args: argparse.Namespace) -> dict[str, float]:
    """Part 2: the 7B job on paper."""
    tokens = args.words * args.tokens_per_word + args.sentences  # plus one BOS each
    flops = 2 * args.params * tokens
    gpu_hours = flops / (args.peak_tflops * 1e12 * args.utilisation) / 3600
    bytes_out = args.words * args.layers * args.width * 2  # float16
    words_per_sentence = args.words / args.sentences
    shard_bytes = args.shard_sentences * words_per_sentence * args.layers * args.width * 2
    weights = args.params * 4  # the extractor computes in float32
    batch = args.batch_tokens * args.layers * args.width * 4  # every layer's hidden states
    out = {"tokens": tokens, "flops": flops, "gpu_hours": gpu_hours, "bytes_out": bytes_out,
           "shards": args.sentences / args.shard_sentences, "shard_bytes": shard_bytes,
           "worker_memory": weights + batch}
    print(f"7B cost model: {args.sentences:,} sentences, {args.words:,} words x "
          f"{args.tokens_per_word} tokens/word = {tokens:,.0f} tokens; {args.layers} layers x "
          f"{args.width}; {args.params:.2g} parameters")
    print(f"  forward FLOPs 2 x params x tokens = {flops:.3g}")
    print(f"  GPU time at {args.utilisation:.0%} of {args.peak_tflops:g} TFLOP/s: "
          f"{gpu_hours * 3600:.0f} s ({gpu_hours:.3f} GPU-hours)")
    print(f"  written (float16): {bytes_out / 1e9:.0f} GB; "
          f"{out['shards']:.0f} shards of {args.shard_sentences} sentences, "
          f"{shard_bytes / 1e9:.1f} GB each")
    print(f"  one worker: float32 weights {weights / 1e9:.0f} GB + one batch's hidden states "
          f"({args.batch_tokens} tokens x {args.layers} layers) {batch / 1e9:.1f} GB = "
          f"{out['worker_memory'] / 1e9:.0f} GB")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="minilm-l6")
    p.add_argument("--corpus", default="sts")
    p.add_argument("--n", type=int, default=600)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--shard-sentences", type=int, default=150)
    p.add_argument("--cost-only", action="store_true", help="print the cost model only")
    p.add_argument("--sentences", type=int, default=39_000)
    p.add_argument("--words", type=int, default=400_000)
    p.add_argument("--tokens-per-word", type=float, default=1.3)
    p.add_argument("--params", type=float, default=6.7e9)
    p.add_argument("--layers", type=int, default=33)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--peak-tflops", type=float, default=67.0,
                   help="the GPU's dense fp32 peak (H100 SXM: 67 TFLOP/s)")
    p.add_argument("--utilisation", type=float, default=0.25)
    p.add_argument("--batch-tokens", type=int, default=16384)
    p.add_argument("--cost-shard-sentences", type=int, default=1024)
    args = p.parse_args()
    if not args.cost_only:
        measure(args)
    cost_model(argparse.Namespace(**{**vars(args),
                                     "shard_sentences": args.cost_shard_sentences}))


if __name__ == "__main__":
    main()
