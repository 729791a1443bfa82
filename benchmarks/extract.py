"""Batched extraction against the naive one-sentence-at-a-time loop, and its memory scaling.

On the same sentences and model this script runs

1. the batched extractor as the book uses it: ``store.activations`` into a fresh temporary
   store (tokenize + align, length-sorted batches, scatter pooling, rows written to disk);
2. a naive loop in the seeds' style: one sentence per forward pass through the full model
   (language-model head included for decoders), then a Python loop over the words taking
   the mean of each word's pieces over all layers at once. It uses the same alignment
   (computed before its timer starts), so both give the same vectors; the script checks that
   they do.

It prints words/s for both (the batched run's best of ``--repeats``, each into a fresh store)
and their ratio (target: >= 4x), the padding the batch plan adds, the time of the forward passes
alone over the same batches (the batched run's ceiling), the process's peak RSS, and the
fraction of this machine's fp32 matmul throughput the batched run reaches: model FLOPs are
taken as 2 x non-embedding parameters x real (unpadded) tokens, against the GFLOP/s of a
large ``torch.matmul`` measured here, and against the rate of the model's own linear layers
on a batch of 1,024 rows (what its matrix products can reach at the extractor's batch
size). It also prints the ceiling on the speed-up: the naive loop's time over the time the
model's FLOPs would take at that matmul throughput. With
``--scaling`` it also runs the batched extractor in two fresh subprocesses, on n and 10 n
sentences, and reports the resident memory before the extraction and its peak during it
(sampled every 20 ms): the target is a peak set by the batch, not by the corpus.

Usage::

    python benchmarks/extract.py --model minilm-l6 --n 300 --scaling
    python benchmarks/extract.py --model smollm2-135m --n 100 --scaling

On a machine that has a GPU but neither spaCy, the data mirror nor the weights (the lent GPU
machines of this project take no file over 64 MiB), build the corpus where they are, copy the
model's config and tokenizer files, and time a model of the same shapes with random weights
(the work of a forward pass depends on the shapes and token counts, not on the weights)::

    python benchmarks/extract.py --corpus sts --n 2000 --save-corpus bench/sts-2000.pkl
    python benchmarks/extract.py --corpus-file bench/sts-2000.pkl --random-weights \
        --model bench/minilm-l6   # a folder with config.json and the tokenizer files

Timings on a shared machine are noisy: run it on an idle one for figures worth quoting.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import psutil
import torch

from lmgeometry.activations.extract import (
    Encoding,
    _base_module,
    _forward_hidden,
    encode,
    plan_sharded,
)
from lmgeometry.activations.store import activations
from lmgeometry.io.corpus import Corpus, build
from lmgeometry.io.models import LoadedModel, load_model


def matmul_gflops(device: torch.device, size: int = 2048, repeats: int = 5) -> float:
    """Best-of GFLOP/s of an fp32 ``size`` x ``size`` matmul on ``device``.

    On a CPU it uses torch's threads; on a GPU ``size`` is raised to 8192 (a 2048 product is
    too short to time) and TF32 stays off, as in the extraction (torch's default).
    """
    if device.type != "cpu":
        size = max(size, 8192)
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(repeats):
        sync(device)
        t0 = time.perf_counter()
        a @ b
        sync(device)
        best = min(best, time.perf_counter() - t0)
    return 2 * size**3 / best / 1e9


def layer_gemm_gflops(model: LoadedModel, tokens: int = 1024, repeats: int = 5) -> float:
    """GFLOP/s of the model's own linear layers (bias included) on ``tokens`` rows at once.

    Every ``nn.Linear`` of the model body runs once on a (tokens, in) input, best of
    ``repeats`` passes: the rate the forward pass's matrix products can reach at a batch of
    the extractor's size, which for narrow models is well below a large square matmul's.
    """
    base = _base_module(model)
    linears = [m for m in base.modules() if isinstance(m, torch.nn.Linear)]
    inputs = {m.in_features: torch.randn(tokens, m.in_features, device=model.device)
              for m in linears}
    flops = sum(2 * tokens * m.in_features * m.out_features for m in linears)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats + 1):  # the first pass warms up
            sync(model.device)
            t0 = time.perf_counter()
            for m in linears:
                m(inputs[m.in_features])
            sync(model.device)
            best = min(best, time.perf_counter() - t0)
    return flops / best / 1e9


def sync(device: torch.device) -> None:
    """Wait for queued GPU work so that wall-clock timers measure it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def random_weights_model(folder: str, out: str, seed: int = 0) -> LoadedModel:
    """The model of ``folder``'s config.json and tokenizer, with seeded random weights.

    Saved to ``out`` and loaded with :func:`load_model` like any local model folder, so the
    benchmark runs the same code path. Only for timing: the vectors mean nothing.
    """
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

    from lmgeometry.io.models import model_kind

    config = AutoConfig.from_pretrained(folder)
    auto = AutoModelForCausalLM if model_kind(config) == "decoder" else AutoModel
    torch.manual_seed(seed)
    auto.from_config(config, dtype=torch.float32).save_pretrained(out)
    AutoTokenizer.from_pretrained(folder).save_pretrained(out)
    return load_model(out)


def save_corpus(corpus: Corpus, path: str) -> None:
    """Pickle a corpus as plain Python objects (readable with any pandas version)."""
    state = {"name": corpus.name, "sentences": corpus.sentences, "params": corpus.params,
             "words": corpus.words.to_dict(orient="list")}
    with open(path, "wb") as fh:
        pickle.dump(state, fh)


def load_corpus(args: argparse.Namespace) -> Corpus:
    """The corpus named by ``--corpus-file`` (written by ``--save-corpus``) or built."""
    if not args.corpus_file:
        return build(args.corpus, args.n, args.seed)
    with open(args.corpus_file, "rb") as fh:
        state = pickle.load(fh)  # a file this script wrote; never pass one from elsewhere
    return Corpus(state["name"], state["sentences"], pd.DataFrame(state["words"]),
                  state["params"])


def non_embedding_parameters(model: LoadedModel) -> int:
    """Parameters of the model body that every token goes through (embeddings excluded)."""
    base = _base_module(model)
    total = sum(p.numel() for p in base.parameters())
    embedded = sum(p.numel() for m in base.modules() if isinstance(m, torch.nn.Embedding)
                   for p in m.parameters(recurse=False))
    return total - embedded


def padded_batches(model: LoadedModel, enc: Encoding, batch_tokens: int
                   ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The (input ids, attention mask) batches the batched run feeds the model (its plan)."""
    pad = model.tokenizer.pad_token_id or 0
    out = []
    for index in plan_sharded(enc, batch_tokens):
        batch = [enc.sentences[i] for i in index]
        ids = torch.full((len(batch), max(s.n_tokens for s in batch)), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, s in enumerate(batch):
            ids[row, :s.n_tokens] = torch.as_tensor(s.input_ids)
            mask[row, :s.n_tokens] = 1
        out.append((ids.to(model.device), mask.to(model.device)))
    return out


def forward_only_seconds(model: LoadedModel, batches: list[tuple[torch.Tensor, torch.Tensor]],
                         repeats: int) -> float:
    """Best-of time of the model body's forward passes alone over ``batches`` (all hidden
    states returned, nothing pooled, moved or written): the ceiling of the batched run."""
    base = _base_module(model)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            sync(model.device)
            t0 = time.perf_counter()
            for ids, mask in batches:
                _forward_hidden(model, base, ids, mask)  # the extractor's own call
            sync(model.device)
            best = min(best, time.perf_counter() - t0)
    return best


def naive_extract(model: LoadedModel, enc: Encoding) -> tuple[np.ndarray, float]:
    """One sentence per forward pass and a Python loop over words (the seeds' way), over the
    encoding (tokens and alignment) computed before its timer starts."""
    out = np.zeros((model.n_layers + 1, enc.n_words, model.hidden_size), dtype=np.float32)
    t0 = time.perf_counter()
    row = 0
    with torch.no_grad():
        for s in enc.sentences:
            ids = torch.as_tensor(s.input_ids)[None].to(model.device)
            hidden = model.model(input_ids=ids, output_hidden_states=True).hidden_states
            states = torch.stack(hidden)[:, 0].cpu().numpy()  # (layers, tokens, width)
            al = s.alignment
            for w in range(al.n_words):
                pieces = al.piece_pos[al.piece_word == w]
                out[:, row + w] = states[:, pieces].mean(axis=1)
            row += al.n_words
    return out, time.perf_counter() - t0


class PeakRSS:
    """Samples this process's resident set size in a thread; ``peak`` in bytes."""

    def __init__(self, interval: float = 0.02) -> None:
        self.proc = psutil.Process()
        self.interval = interval
        self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def child(args: argparse.Namespace) -> None:
    """Memory-scaling worker: extract n sentences into a temporary store, print JSON."""
    if args.threads:
        torch.set_num_threads(args.threads)
    corpus = build(args.corpus, args.n, args.seed)
    model = load_model(args.model)
    before = psutil.Process().memory_info().rss
    with tempfile.TemporaryDirectory() as root, PeakRSS() as peak:
        t0 = time.perf_counter()
        store = activations(model, corpus, root=root, batch_tokens=args.batch_tokens or None,
                            progress=False)
        seconds = time.perf_counter() - t0
        n_words, size = store.n_words, store.size_bytes()
    print(json.dumps({"n": args.n, "sentences": len(corpus.sentences), "words": n_words,
                      "store_bytes": size, "rss_before": before, "rss_peak": peak.peak,
                      "seconds": seconds,
                      "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))


def scaling(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run :func:`child` for n and 10 n sentences in fresh interpreters."""
    rows = []
    for n in (args.n, 10 * args.n):
        cmd = [sys.executable, __file__, "--child", "--model", args.model, "--corpus",
               args.corpus, "--n", str(n), "--seed", str(args.seed), "--batch-tokens",
               str(args.batch_tokens), "--threads", str(args.threads or 0)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"scaling child failed:\n{done.stderr[-3000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm-l6")
    parser.add_argument("--corpus", default="sts")
    parser.add_argument("--n", type=int, default=200, help="sentences")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-tokens", type=int, default=0,
                        help="padded tokens per batch (0: the device default)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="batched runs, the fastest counts (the naive loop runs once)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--scaling", action="store_true", help="also run n and 10 n in children")
    parser.add_argument("--json", default=None, help="write the figures to this file")
    parser.add_argument("--save-corpus", default=None,
                        help="build the corpus, pickle it to this file and stop")
    parser.add_argument("--corpus-file", default=None,
                        help="read the corpus from a --save-corpus pickle instead of building it")
    parser.add_argument("--random-weights", action="store_true",
                        help="time a model of --model's shapes (a folder with config.json and "
                             "tokenizer files suffices) with random weights")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.child:
        child(args)
        return
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.save_corpus:
        corpus = build(args.corpus, args.n, args.seed)
        save_corpus(corpus, args.save_corpus)
        print(f"wrote {args.save_corpus}: {len(corpus.sentences)} sentences")
        return

    corpus = load_corpus(args)
    if args.random_weights:  # the folder must outlive the run: the store fingerprints it
        weights = tempfile.TemporaryDirectory()
        model = random_weights_model(args.model, weights.name, args.seed)
    else:
        model = load_model(args.model)
    gflops = matmul_gflops(model.device)
    hardware = (torch.cuda.get_device_name(model.device) if model.device.type == "cuda"
                else f"{os.cpu_count()} CPU cores")
    params = non_embedding_parameters(model)
    print(f"model {model.name}: {model.n_layers} layers x {model.hidden_size}, "
          f"{params / 1e6:.1f} M non-embedding parameters, device {model.device} ({hardware}), "
          f"{torch.get_num_threads()} torch threads, load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"corpus {corpus.name}: {len(corpus.sentences)} sentences, {len(corpus.words)} words")
    print(f"matmul throughput: {gflops:.1f} GFLOP/s (fp32, 2048 x 2048)")
    layer_gflops = layer_gemm_gflops(model)
    print(f"the model's linear layers on 1,024 rows: {layer_gflops:.1f} GFLOP/s "
          f"({100 * layer_gflops / gflops:.0f}% of that)")

    warm = replace(corpus, sentences=corpus.sentences[:8],
                   words=corpus.words[corpus.words["sentence_id"] < 8].reset_index(drop=True))
    with tempfile.TemporaryDirectory() as root:
        activations(model, warm, root=root, progress=False)  # warm-up
    times = []
    for repeat in range(args.repeats):  # each into a fresh store: nothing is cached
        with tempfile.TemporaryDirectory() as root:
            t0 = time.perf_counter()
            store = activations(model, corpus, root=root,
                                batch_tokens=args.batch_tokens or None, progress=False)
            times.append(time.perf_counter() - t0)
            if repeat == args.repeats - 1:  # every run writes the same vectors: read one back
                batched = np.stack([store.layer(i) for i in range(store.n_layers)])
    tokens = store.meta["counts"]["tokens"]
    batch_tokens = store.meta["extraction"]["batch_tokens"]
    batched_s = min(times)
    enc = encode(model, corpus)  # the batches' tokens and alignment, outside every timer
    batches = padded_batches(model, enc, batch_tokens)
    padded = sum(ids.numel() for ids, _ in batches)
    forward_s = forward_only_seconds(model, batches, args.repeats)
    naive, naive_s = naive_extract(model, enc)
    n_words = naive.shape[1]
    scale = np.abs(naive).max(axis=(1, 2))
    rel = float((np.abs(batched - naive).max(axis=(1, 2)) / scale).max())
    achieved = 2 * params * tokens / batched_s / 1e9
    figures: dict[str, Any] = {
        "model": args.model, "random_weights": args.random_weights, "hardware": hardware,
        "corpus": corpus.name, "sentences": len(corpus.sentences),
        "words": n_words, "tokens": tokens, "threads": torch.get_num_threads(),
        "batch_tokens": batch_tokens, "padded_tokens": padded, "forward_only_seconds": forward_s,
        "forward_only_fraction_of_matmul": 2 * params * tokens / forward_s / 1e9 / gflops,
        "batched_words_per_s": n_words / batched_s, "naive_words_per_s": n_words / naive_s,
        "speedup": naive_s / batched_s, "batched_seconds": batched_s,
        "batched_seconds_all": times, "naive_seconds": naive_s,
        "max_rel_difference_float16_store": rel, "matmul_gflops": gflops,
        "achieved_gflops": achieved, "fraction_of_matmul": achieved / gflops,
        "layer_gemm_gflops": layer_gflops, "fraction_of_layer_gemm": achieved / layer_gflops,
        "speedup_ceiling": naive_s / (2 * params * tokens / (gflops * 1e9)),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    print(f"batched: {figures['batched_words_per_s']:8.0f} words/s ({batched_s:.1f} s, "
          f"best of {len(times)}: {', '.join(f'{t:.1f}' for t in times)} s; "
          "tokenize + align + forward + write, float16 store)")
    print(f"naive:   {figures['naive_words_per_s']:8.0f} words/s ({naive_s:.1f} s)")
    print(f"speedup: {figures['speedup']:.1f}x (target >= 4x); stores agree to {rel:.1e} "
          "relative (float16 rounding)")
    print(f"batched run: {achieved:.1f} GFLOP/s = {100 * achieved / gflops:.0f}% of matmul "
          f"throughput (2 x non-embedding parameters x tokens), "
          f"{100 * achieved / layer_gflops:.0f}% of its linear layers' rate")
    print(f"forward passes alone (same batches, nothing pooled or written): {forward_s:.1f} s "
          f"= {100 * figures['forward_only_fraction_of_matmul']:.0f}% of matmul throughput; "
          f"the rest of the batched run: {100 * (1 - forward_s / batched_s):.0f}% of its time")
    print(f"padding: {padded:,} tokens fed for {tokens:,} real ones "
          f"({100 * (padded / tokens - 1):.1f}% more; batches of <= {batch_tokens} tokens)")
    print(f"ceiling: a batched run at 100% of that throughput would be "
          f"{figures['speedup_ceiling']:.1f}x the naive loop")
    print(f"peak RSS of this process: {figures['peak_rss_bytes'] / 2**20:.0f} MiB")
    if args.scaling:
        rows = scaling(args)
        figures["scaling"] = rows
        for r in rows:
            print(f"scaling n={r['n']:6d}: {r['words']:7d} words, store "
                  f"{r['store_bytes'] / 2**20:7.1f} MiB, RSS before extraction "
                  f"{r['rss_before'] / 2**20:6.0f} MiB, peak during "
                  f"{r['rss_peak'] / 2**20:6.0f} MiB "
                  f"(+{(r['rss_peak'] - r['rss_before']) / 2**20:.0f} MiB), "
                  f"{r['words'] / r['seconds']:.0f} words/s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)


if __name__ == "__main__":
    main()
