"""Extraction backends side by side: torch eager, ONNX Runtime, the naive loop and nnsight.

On the same sentences and the same length-sorted padded batches (the extractor's plan,
1,024 padded tokens a batch on a CPU), one run times

1. **torch eager**: the extractor's loop (``extract.iter_batches``: forward pass, gather and
   mean-pool the pieces into float32 word vectors) and its forward passes alone;
2. **ONNX Runtime**: the same loop on the exported graph (``onnx_runtime.with_onnx``: the loop
   is unchanged, only the model is the graph) and its forward passes alone; the export
   (or the cache hit) is timed apart;
3. **the naive loop** of ``benchmarks/extract.py``: one sentence per forward pass through the
   full model and a Python loop over words (run once: it is the slowest by far);
4. **nnsight 0.8**, the interpretability library a user would pick: each batch traced with
   ``.save()`` on every block's output (``NNsight(body).trace(...)``); skipped, saying so, when
   nnsight is not installed (``pip install -r requirements-bench.txt``).

Each timed configuration runs ``--repeats`` times in interleaved rounds (so that a change in
the machine's load hits all of them alike) and its best time counts. It prints words/s and the
share of the machine's fp32 matmul rate (model FLOPs = 2 x non-embedding parameters x real
tokens, against the best rate of a 2048 x 2048 ``torch.matmul`` measured before each round),
the load average before and after, and the agreement of ONNX Runtime with torch: per layer,
the largest absolute and relative (to the layer's largest value) difference of the hidden
states at every real token, and, on the pooled word vectors the store keeps in float16, how
many stored values would change (beside the same count for torch's batched vectors against
the naive loop's, the rounding noise the store already accepts between batch plans).

Usage::

    python benchmarks/backends.py --model minilm-l6 --n 1000
    python benchmarks/backends.py --model smollm2-135m --n 400 --json smollm2.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from extract import (
    forward_only_seconds,
    load_corpus,
    matmul_gflops,
    naive_extract,
    non_embedding_parameters,
    padded_batches,
)

from lmgeometry.activations.extract import (
    CPU_BATCH_TOKENS,
    _base_module,
    block_rows,
    encode,
    iter_batches,
)
from lmgeometry.activations.onnx_runtime import float16_agreement, onnx_model, with_onnx
from lmgeometry.io.models import LoadedModel, load_model

Batches = list[tuple[torch.Tensor, torch.Tensor]]


def loop_seconds(model: LoadedModel, enc: Any) -> float:
    """One pass of the extractor's loop (forward + pooling, float32 word vectors)."""
    t0 = time.perf_counter()
    for _ in iter_batches(model, enc, batch_tokens=CPU_BATCH_TOKENS, progress=False):
        pass
    return time.perf_counter() - t0


def ort_forward_seconds(ort: Any, batches: Batches) -> float:
    """One pass of the graph over the padded batches, nothing pooled."""
    t0 = time.perf_counter()
    for ids, mask in batches:
        ort(input_ids=ids, attention_mask=mask)
    return time.perf_counter() - t0


def nnsight_runner(model: LoadedModel) -> Callable[[Batches], float] | None:
    """A timer of nnsight traces saving every block's output, or None without nnsight."""
    try:
        from nnsight import NNsight
    except ImportError:
        return None
    warnings.filterwarnings("ignore", message="Module .* has a submodule named")
    base = _base_module(model)
    blocks = next(n for n, m in base.named_modules()
                  if isinstance(m, torch.nn.ModuleList) and len(m) == model.n_layers)
    net = NNsight(base)
    envoy = net
    for part in blocks.split("."):
        envoy = getattr(envoy, part)
    options = {"use_cache": False} if model.kind == "decoder" else {}

    def run(batches: Batches) -> float:
        t0 = time.perf_counter()
        with torch.inference_mode():
            for ids, mask in batches:
                saved = []
                with net.trace(input_ids=ids, attention_mask=mask, **options):
                    for layer in envoy:
                        saved.append(layer.output.save())
        return time.perf_counter() - t0

    return run


def hidden_agreement(model: LoadedModel, ort: Any, batches: Batches) -> list[dict[str, float]]:
    """Per layer: largest absolute difference of ORT's hidden states from torch's at the real
    tokens of every batch, and that over the layer's largest absolute value."""
    base = _base_module(model)
    options = {"use_cache": False} if model.kind == "decoder" else {}
    diff = np.zeros(model.n_layers + 1)
    top = np.zeros(model.n_layers + 1)
    with torch.inference_mode():
        for ids, mask in batches:
            ref = base(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                       **options).hidden_states
            got = ort(input_ids=ids, attention_mask=mask).hidden_states
            real = mask.bool()
            for i, (a, b) in enumerate(zip(ref, got, strict=True)):
                diff[i] = max(diff[i], float((a[real] - b[real]).abs().max()))
                top[i] = max(top[i], float(a[real].abs().max()))
    return [{"layer": i, "max_abs": float(d), "max_rel": float(d / t)}
            for i, (d, t) in enumerate(zip(diff, top, strict=True))]


def stored_agreement(model: LoadedModel, ort_model: LoadedModel, enc: Any) -> dict[str, int]:
    """Float16 word vectors (what the store keeps) that differ between torch and ORT."""
    total = {"n": 0, "changed": 0, "beyond_one_ulp": 0}
    pairs = zip(iter_batches(model, enc, batch_tokens=CPU_BATCH_TOKENS, progress=False),
                iter_batches(ort_model, enc, batch_tokens=CPU_BATCH_TOKENS, progress=False),
                strict=True)
    for a, b in pairs:
        got = float16_agreement(a.vectors, b.vectors)
        for k in total:
            total[k] += got[k]
    return total


def batched_vectors(model: LoadedModel, enc: Any) -> np.ndarray:
    """torch's batched word vectors in corpus order (float32), as the store would hold them."""
    out = np.zeros((model.n_layers + 1, enc.n_words, model.hidden_size), dtype=np.float32)
    for wb in iter_batches(model, enc, batch_tokens=CPU_BATCH_TOKENS, progress=False):
        for start, stop, lo, hi in block_rows(enc, wb.sentence_index):
            out[:, start:stop] = wb.vectors[:, lo:hi]
    return out


def timed_rounds(runs: dict[str, Callable[[], float]], repeats: int
                 ) -> tuple[dict[str, list[float]], list[float]]:
    """Each run once per round, ``repeats`` rounds (after one warm-up round), and the matmul
    rate measured before every round (its best is the machine's rate: on a loaded machine one
    measurement can fall to a third of it)."""
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    rates = []
    for _ in range(repeats):
        rates.append(matmul_gflops(torch.device("cpu")))
        for name, run in runs.items():
            times[name].append(run())
    return times, rates


def report(figures: dict[str, Any]) -> None:
    """Print the table of backends and the agreement."""
    rows, words, flops, gflops = (figures["rows"], figures["words"], figures["model_flops"],
                                  figures["matmul_gflops"])
    torch_loop = rows["torch eager, extractor loop"]["seconds"]
    print(f"{'configuration':42s} {'best s':>8s} {'words/s':>9s} {'of matmul':>9s} "
          f"{'vs torch loop':>13s}")
    for name, row in rows.items():
        s = row["seconds"]
        print(f"{name:42s} {s:8.2f} {words / s:9.0f} {100 * flops / s / 1e9 / gflops:8.0f}% "
              f"{torch_loop / s:12.2f}x")
    if figures["nnsight"] is None:
        print("nnsight: skipped, not installed (pip install -r requirements-bench.txt)")
    worst = max(figures["hidden_agreement"], key=lambda r: r["max_rel"])
    largest = max(r["max_abs"] for r in figures["hidden_agreement"])
    print(f"ORT vs torch hidden states: largest absolute difference {largest:.3g}; largest "
          f"relative to its layer's largest value {worst['max_rel']:.2g} (layer {worst['layer']})")
    s, ref = figures["stored_agreement"], figures["naive_vs_batched_torch"]
    print(f"float16 word vectors: {s['changed']:,} of {s['n']:,} stored values differ between "
          f"ORT and torch ({s['beyond_one_ulp']} by more than one float16 step); torch's batched "
          f"vs the naive loop's: {ref['changed']:,} ({ref['beyond_one_ulp']} by more than one)")


def common_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of this script that ``torch_variants.py`` shares."""
    parser.add_argument("--model", default="minilm-l6")
    parser.add_argument("--corpus", default="sts")
    parser.add_argument("--corpus-file", default=None,
                        help="a corpus pickled by benchmarks/extract.py --save-corpus")
    parser.add_argument("--n", type=int, default=1000, help="sentences")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds (best counts)")
    parser.add_argument("--threads", type=int, default=0, help="torch and ORT threads")
    parser.add_argument("--json", default=None, help="write the figures to this file")


def prepared(args: argparse.Namespace) -> tuple[Any, LoadedModel, Any, Batches,
                                                 tuple[float, ...]]:
    """Threads set from ``args``; the corpus, the model, its encoding, the extractor's padded
    batches over it, and the load average before loading anything."""
    if args.threads:
        torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    corpus = load_corpus(args)
    model = load_model(args.model, device="cpu")
    enc = encode(model, corpus)
    return corpus, model, enc, padded_batches(model, enc, CPU_BATCH_TOKENS), load_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common_arguments(parser)
    args = parser.parse_args()
    corpus, model, enc, batches, load_before = prepared(args)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as root:  # a fresh export, timed; the cache is kept out
        ort = onnx_model(model, root=root)
        export_s = time.perf_counter() - t0
        ort_model = with_onnx(model, root=root)
        params = non_embedding_parameters(model)
        print(f"model {model.name}: {model.n_layers} layers x {model.hidden_size}, "
              f"{params / 1e6:.1f} M non-embedding parameters; {os.cpu_count()} CPU cores, "
              f"{torch.get_num_threads()} threads (torch and ORT); load average "
              f"{', '.join(f'{x:.1f}' for x in load_before)}")
        print(f"corpus {corpus.name}: {len(corpus.sentences)} sentences, {enc.n_words} words, "
              f"{enc.n_tokens} tokens, {len(batches)} batches; ONNX export {export_s:.1f} s "
              "(cached after)")
        runs: dict[str, Callable[[], float]] = {
            "torch eager, extractor loop": lambda: loop_seconds(model, enc),
            "ONNX Runtime, extractor loop": lambda: loop_seconds(ort_model, enc),
            "torch eager, forward passes alone": lambda: forward_only_seconds(model, batches, 1),
            "ONNX Runtime, forward passes alone": lambda: ort_forward_seconds(ort, batches),
        }
        nnsight = nnsight_runner(model)
        if nnsight is not None:
            runs["nnsight 0.8, trace saving every block"] = lambda: nnsight(batches)
        times, rates = timed_rounds(runs, args.repeats)
        gflops = max(rates)
        print(f"matmul: {gflops:.0f} GFLOP/s (fp32, 2048 x 2048, best of the rounds: "
              f"{', '.join(f'{r:.0f}' for r in rates)})")
        naive, naive_s = naive_extract(model, enc)
        times["naive loop, one sentence a pass"] = [naive_s]
        figures: dict[str, Any] = {
            "model": args.model, "sentences": len(corpus.sentences), "words": enc.n_words,
            "tokens": enc.n_tokens, "threads": torch.get_num_threads(),
            "matmul_gflops": gflops, "matmul_rounds": rates,
            "model_flops": 2 * params * enc.n_tokens,
            "export_seconds": export_s,
            "rows": {k: {"seconds": min(v), "all": v} for k, v in times.items()},
            "nnsight": "0.8 traced" if nnsight is not None else None,
            "hidden_agreement": hidden_agreement(model, ort, batches),
            "stored_agreement": stored_agreement(model, ort_model, enc),
            "naive_vs_batched_torch": float16_agreement(batched_vectors(model, enc), naive),
        }
    figures["load_average"] = {"before": load_before, "after": os.getloadavg()}
    report(figures)
    print(f"load average after: {', '.join(f'{x:.1f}' for x in figures['load_average']['after'])}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
