"""Extraction on torch: which execution settings are faster, and do they keep the stored values?

The extractor (``activations.extract.iter_batches``) runs the model body under
``torch.inference_mode`` with the attention implementation transformers picks (SDPA,
``torch.nn.functional.scaled_dot_product_attention``, in transformers 5). On the same sentences
and the extractor's own batches (length-sorted, 1,024 padded tokens a batch on a CPU) this
script times the extractor's loop (forward passes and pooling into word vectors; no
tokenizing or writing) with the model body run

1. as loaded: SDPA attention, ``inference_mode`` (the default; the reference);
2. with transformers' ``eager`` attention (explicit softmax(QK^T)V);
3. under ``torch.no_grad`` instead of ``inference_mode`` (the forward passes alone: the loop
   always enters ``inference_mode``);
4. compiled with ``torch.compile`` (inductor, dynamic shapes), its compile time apart;
5. ONNX Runtime (``--onnx``; the opt-in backend, ``activations/onnx_runtime.py``).

For each it prints real tokens/s and words/s, the share of this machine's fp32 matmul rate
(model FLOPs = 2 x non-embedding parameters x real tokens, against the best rate of a 2048 x
2048 ``torch.matmul`` measured before each round, with the same threads), and how many of the
float16 values the store would keep change against the reference (and how many by more than
one float16 step). Rounds are interleaved and the best time counts.

Usage::

    python benchmarks/torch_variants.py --model minilm-l6 --n 1000 --onnx
    python benchmarks/torch_variants.py --model smollm2-135m --n 400 --onnx --json out.json

Nothing here changes the extractor: its code keys every store entry (a change re-extracts the
whole cache), so a faster setting is adopted, if ever, as its own change with the book
re-executed.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from backends import batched_vectors, common_arguments, loop_seconds, prepared
from extract import _forward_hidden, matmul_gflops, non_embedding_parameters

from lmgeometry.activations.extract import _base_module
from lmgeometry.activations.onnx_runtime import float16_agreement
from lmgeometry.io.models import LoadedModel

Batches = list[tuple[torch.Tensor, torch.Tensor]]


class Compiled(torch.nn.Module):
    """A model body compiled with ``torch.compile``, called as the body is (the extractor
    reads ``base_model`` when there is one, which a compiled module would hand back
    uncompiled)."""

    def __init__(self, body: torch.nn.Module, **options: Any) -> None:
        super().__init__()
        self.body = body
        self.compiled = torch.compile(body, **options)

    def forward(self, **kwargs: Any) -> Any:
        return self.compiled(**kwargs)


def eager_attention(model: LoadedModel) -> LoadedModel:
    """A copy of ``model`` with transformers' eager attention."""
    net = copy.deepcopy(model.model)
    net.set_attn_implementation("eager")
    return dataclasses.replace(model, model=net)


def compiled(model: LoadedModel, batches: Batches) -> tuple[LoadedModel, float]:
    """``model`` with its body compiled (dynamic shapes), and the seconds the first pass over
    ``batches`` took (compiling for their shapes)."""
    variant = dataclasses.replace(model, model=Compiled(_base_module(model), dynamic=True))
    t0 = time.perf_counter()
    forward_seconds(variant, batches, torch.inference_mode)
    return variant, time.perf_counter() - t0


def forward_seconds(model: LoadedModel, batches: Batches, mode: Callable[[], Any]) -> float:
    """One pass of the body's forward over ``batches`` (all hidden states, nothing pooled)
    under ``mode`` (``torch.inference_mode`` or ``torch.no_grad``)."""
    base = _base_module(model)
    with mode():
        t0 = time.perf_counter()
        for ids, mask in batches:
            _forward_hidden(model, base, ids, mask)
        return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common_arguments(parser)
    parser.add_argument("--onnx", action="store_true", help="also time ONNX Runtime")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = parser.parse_args()
    corpus, model, enc, batches, load_before = prepared(args)
    params = non_embedding_parameters(model)
    print(f"model {model.name}: {model.n_layers} layers x {model.hidden_size}, "
          f"{params / 1e6:.1f} M non-embedding parameters, attention "
          f"{model.model.config._attn_implementation}; {os.cpu_count()} cores, "
          f"{torch.get_num_threads()} threads; {len(corpus.sentences)} sentences, "
          f"{enc.n_words} words, {enc.n_tokens} tokens, {len(batches)} batches; load "
          f"{', '.join(f'{x:.1f}' for x in load_before)}")
    variants: dict[str, LoadedModel] = {"SDPA, inference_mode (default)": model,
                                        "eager attention": eager_attention(model)}
    extra: dict[str, Any] = {}
    if not args.no_compile:
        variants["torch.compile (inductor, dynamic)"], extra["compile_s"] = compiled(
            model, batches)
        print(f"torch.compile: first pass (compiling) {extra['compile_s']:.1f} s")
    with tempfile.TemporaryDirectory() as root:
        if args.onnx:
            from lmgeometry.activations.onnx_runtime import with_onnx

            t0 = time.perf_counter()
            variants["ONNX Runtime"] = with_onnx(model, root=root)
            extra["onnx_export_s"] = time.perf_counter() - t0
        runs: dict[str, Callable[[], float]] = {
            f"loop: {name}": (lambda v=v: loop_seconds(v, enc)) for name, v in variants.items()}
        runs["forward alone: inference_mode"] = lambda: forward_seconds(
            model, batches, torch.inference_mode)
        runs["forward alone: no_grad"] = lambda: forward_seconds(model, batches, torch.no_grad)
        for run in runs.values():  # warm-up round
            run()
        times: dict[str, list[float]] = {name: [] for name in runs}
        rates = []
        for _ in range(args.repeats):
            rates.append(matmul_gflops(torch.device("cpu")))
            for name, run in runs.items():
                times[name].append(run())
        reference = batched_vectors(model, enc)
        agreement = {name: float16_agreement(reference, batched_vectors(v, enc))
                     for name, v in variants.items() if v is not model}
    gflops, flops = max(rates), 2 * params * enc.n_tokens
    base_s = min(times["loop: SDPA, inference_mode (default)"])
    print(f"matmul: {gflops:.0f} GFLOP/s (fp32 2048 x 2048, best of "
          f"{', '.join(f'{r:.0f}' for r in rates)})")
    print(f"{'configuration':44s} {'best s':>7s} {'tokens/s':>9s} {'words/s':>8s} "
          f"{'of matmul':>9s} {'speed-up':>8s} {'fp16 values changed':>22s}")
    rows = {}
    for name, got in times.items():
        s = min(got)
        variant = name.removeprefix("loop: ")
        a = agreement.get(variant)
        changed = ("" if variant not in variants else "the reference" if a is None else
                   "identical" if a["changed"] == 0 else
                   f"{a['changed'] / a['n']:.3%} ({a['beyond_one_ulp']} >1 step)")
        rows[name] = {"seconds": s, "all": got, "tokens_s": enc.n_tokens / s,
                      "words_s": enc.n_words / s, "share": flops / s / 1e9 / gflops,
                      "agreement": a}
        print(f"{name:44s} {s:7.2f} {enc.n_tokens / s:9.0f} {enc.n_words / s:8.0f} "
              f"{flops / s / 1e9 / gflops:9.0%} {base_s / s:7.2f}x {changed:>22s}")
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"model": args.model, "sentences": len(corpus.sentences),
                       "words": enc.n_words, "tokens": enc.n_tokens,
                       "threads": torch.get_num_threads(), "matmul_gflops": gflops,
                       "matmul_rounds": rates, "model_flops": flops, **extra, "rows": rows,
                       "load_average": {"before": load_before, "after": os.getloadavg()}},
                      fh, indent=1, default=lambda x: x.item() if isinstance(x, np.generic)
                      else str(x))


if __name__ == "__main__":
    main()
