"""Seed 001's MEV and PC1 static vectors, the authors' way and the corrected way (issue 46).

What adopting the authors' estimators (``docs/SEED001_ESTIMATORS.md``) changes, measured
without re-running chapter 3:

1. **The released numbers** (no model): how many of the authors' per-word MEV values
   (``variance_explained.csv``) lie below ``1 / min(k - 1, d)``, the least share a centred PCA
   of ``k`` occurrences in ``d`` dimensions can give its first component. ``k`` comes from
   the authors' word index rebuilt from the STS pairs they used (every scored pair of STS
   2012-2016, with 2012's MSRvid from STS-B; spaCy's English tokenizer, punctuation left
   out, case kept, words with at least 5 occurrences): exact for ELMo and GPT-2, whose index
   is spaCy's; for BERT, whose index is WordPiece's, the spaCy count of the same string
   stands in. A value of 0.000 is impossible for a centred PCA whatever ``k``.
2. **MEV on a store** (the chapter's STS sample): per layer, the mean per-word MEV and the
   adjusted MEV (minus the 1,000-word ``TruncatedSVD`` baseline) under the seed preset as it
   now is (``ethayarajh2019``: the ``TruncatedSVD`` ratio) and as it was (the same preset with
   a centred PCA), the corrected preset's, and the share of words whose seed-preset MEV lies
   below the centred floor; the chapter's statistic (largest mean adjusted MEV over layers
   1-L) for each.
3. **PC1 vectors on a store** (the chapter's benchmark-context corpus): per layer, the
   authors' PC1 vectors (uncentred, ``svd_flip`` sign), the centred ones (signed to the
   mean), the mean vectors of the same contexts, the layer-0 mean vectors and GloVe 6B-50d,
   scored on the chapter's four similarity benchmarks, each on the items every embedding
   covers (Spearman rho, paired bootstrap intervals over items), and their mean; the
   chapter's statistics for the authors' vectors (largest gain over GloVe and over the
   layer-0 vectors, the best layer picked inside each resample; rho with the layer); the
   cosine of the authors' PC1 with the word's mean; how often the ``svd_flip`` sign differs
   from the mean's, and from the sign today's scikit-learn (1.9: largest entry of the right
   singular vector positive) would give.

Usage::

    python benchmarks/seed001_estimators.py --models minilm-l6 --json out.json
    python benchmarks/seed001_estimators.py --models minilm-l6 mpnet-base smollm2-135m \\
        gemma3-270m --benchmarks simlex999
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import time

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from lmgeometry.activations import store
from lmgeometry.chapters.common import control_rows, controls_for
from lmgeometry.io import corpus, vectors
from lmgeometry.io.benchmarks import load_benchmark
from lmgeometry.io.datasets import load_sts, load_stsb
from lmgeometry.io.released import ETHAYARAJH2019_MODELS, load_ethayarajh2019
from lmgeometry.measures import contextual, stats
from lmgeometry.measures.static import mean_embeddings, static_embeddings
from lmgeometry.measures.unit_rows import UnitRows
from lmgeometry.measures.word_similarity import paired_correlations, similarity_scores

#: The released models' hidden sizes.
WIDTH = {"bert": 768, "elmo": 1024, "gpt2": 768}

#: The seed preset before this change: the same estimators with a centred PCA for word MEV.
PCA_SEED = dataclasses.replace(contextual.PRESETS["ethayarajh2019"], name="ethayarajh2019-pca",
                               mev_method="centered")


def authors_counts() -> pd.Series:
    """Occurrences of each word in the authors' STS data (``preprocess.index_sentence``)."""
    import spacy

    pairs = load_sts()
    pairs = pairs[pairs["score"].notna()]
    msr = pd.concat([load_stsb(s) for s in ("train", "dev", "test")])
    msr = msr[(msr["source"] == "MSRvid") & msr["year"].str.startswith("2012")]
    both = pd.concat([pairs[["sentence1", "sentence2"]], msr[["sentence1", "sentence2"]]])
    tokenizer = spacy.blank("en").tokenizer
    count: collections.Counter[str] = collections.Counter()
    for column in ("sentence1", "sentence2"):  # the authors removed every '"' from sts.csv
        for doc in tokenizer.pipe(t.replace('"', "") for t in both[column]):
            count.update(t.text for t in doc if not t.is_punct)
    return pd.Series(count, name="k")


def released_floor() -> dict:
    """Released per-word MEV values below the centred PCA's floor, per model and layer."""
    k = authors_counts()
    indexed = set(k[k >= 5].index)
    out = {}
    for model in ETHAYARAJH2019_MODELS:
        released = load_ethayarajh2019(model)["variance_explained"].dropna(subset=["mev"])
        v = released.assign(k=released["word"].map(k)).dropna(subset=["k"])
        v = v[v["k"] >= 2]
        floor = np.round(1.0 / np.minimum(v["k"] - 1, WIDTH[model]), 3)
        below = v["mev"] < floor
        out[model] = {
            "values": len(released),
            "zeros": int((released["mev"] == 0).sum()),
            "words_released": released["word"].nunique(),
            "words_indexed_here": len(indexed),
            "words_in_both": len(set(released["word"]) & indexed),
            "values_with_k": len(v),
            "below_floor": int(below.sum()),
            "below_floor_share": float(below.mean()),
            "below_floor_share_by_layer": {int(layer): float(b.mean()) for layer, b
                                           in below.groupby(v["layer"])},
            "median_k": float(v["k"].median()),
            "median_mev": float(v["mev"].median()),
            "median_mev_over_floor": float((v["mev"] * np.minimum(v["k"] - 1,
                                                                  WIDTH[model])).median()),
            "k_source": "spaCy index (exact)" if model != "bert"
                        else "spaCy count of the same string (WordPiece index not rebuilt)",
        }
    return out


def _layer_mev(X: np.ndarray, words: pd.DataFrame, seed: int) -> dict:
    u = UnitRows.of(X)
    row = {}
    for est in (contextual.PRESETS["ethayarajh2019"], PCA_SEED, contextual.PRESETS["corrected"]):
        t = contextual.context_tables(u, words, est, seed, n_intra_sentences=2)
        wt = t.words.dropna(subset=["mev"])
        mean, lo, hi = stats.bootstrap_ci(wt["mev_adj"].to_numpy(), 1000, seed)
        row[est.name] = {"mev": float(wt["mev"].mean()), "mev_baseline": t.mev_baseline,
                         "mev_adj": mean, "mev_adj_lo": lo, "mev_adj_hi": hi,
                         "words": len(wt)}
        if est.name == "ethayarajh2019":
            floor = np.round(1.0 / np.minimum(wt["n_occurrences"] - 1, X.shape[1]), 3)
            row[est.name]["below_centred_floor"] = float((wt["mev"] < floor).mean())
            row[est.name]["median_mev"] = float(wt["mev"].median())
            row[est.name]["zeros"] = float((wt["mev"] == 0).mean())  # 0.000 after rounding
    return row


def mev_part(spec: str, n_sentences: int, seed: int) -> dict:
    """MEV per layer on the chapter's STS store under the three estimators, per control
    (decoders also without each sentence's first word, as the chapter does)."""
    s = store.activations(spec, corpus.sts(n=n_sentences, seed=seed))
    out = {}
    for control in controls_for(s):
        rows = control_rows(s, control)
        words = s.words.iloc[rows].reset_index(drop=True)
        layers = {i: _layer_mev(s.layer(i, rows=rows), words, seed)
                  for i in range(1, s.n_layers)}
        best = {}
        for name in ("ethayarajh2019", PCA_SEED.name, "corrected"):
            top = max(layers, key=lambda i: layers[i][name]["mev_adj"])
            best[name] = {"layer": top, **{k: layers[top][name][k]
                                           for k in ("mev_adj", "mev_adj_lo", "mev_adj_hi")}}
        out[control] = {"layers": layers, "largest_adjusted": best}
    return out


def _targets(s: store.Store) -> tuple[np.ndarray, pd.DataFrame]:
    """The benchmark corpus's target rows, each named by its benchmark word."""
    w = s.words
    rows = np.flatnonzero(w["is_target"].to_numpy())
    words = w.iloc[rows].reset_index(drop=True)
    return rows, words.assign(text=words["target"].astype(str))


def _signs(V: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> float:
    return float(np.mean([np.sign(V[w] @ ref[w]) < 0 for w in V]))


def _sklearn19_flips(V: dict[str, np.ndarray]) -> float:
    """Share of vectors whose largest-magnitude entry is negative: the vectors today's
    scikit-learn (``svd_flip`` on the right singular vector) would sign the other way."""
    return float(np.mean([v[np.argmax(np.abs(v))] < 0 for v in V.values()]))


def _best_gain(R: np.ndarray, names: list[str], over: str) -> dict:
    """Largest gain over layers 1-L of the authors' PC1 rho over ``over``'s, the best layer
    picked inside each resample (the chapter's statistic), with its 95% interval."""
    pc1 = [j for j, n in enumerate(names) if n.startswith("PC1 authors")]
    best = np.nanmax(R[:, pc1] - R[:, [names.index(over)]], axis=1)
    return {"value": float(best[0]), "lo": float(np.nanpercentile(best[1:], 2.5)),
            "hi": float(np.nanpercentile(best[1:], 97.5))}


def _scores(found: dict, frames: dict, seed: int, n_boot: int) -> tuple[list[str], dict]:
    """Spearman rho of every embedding on each benchmark's items that all of them cover, with
    one resample of the items per benchmark shared by the embeddings (``(1 + n_boot, E)``)."""
    names = list(found)
    out = {}
    for j, (bench, frame) in enumerate(frames.items()):
        S = np.column_stack([similarity_scores(found[n], frame) for n in names])
        ok = np.isfinite(S).all(axis=1)
        out[bench] = (int(ok.sum()), paired_correlations(
            frame["score"].to_numpy(dtype=np.float64)[ok], S[ok].T, n_boot, [seed, 46, j],
            method="spearman"))
    return names, out


def static_part(spec: str, k: int, window: int, seed: int, benches: list[str],
                n_boot: int) -> dict:
    """PC1 vectors both ways against the mean vectors and GloVe, per layer and benchmark."""
    s = store.activations(spec, corpus.benchmark_contexts(k=k, window=window, seed=seed),
                          too_long="skip")
    rows, words = _targets(s)
    found: dict[str, dict[str, np.ndarray]] = {}
    extra = {}
    for i in range(s.n_layers):
        u = UnitRows.of(s.layer(i, rows=rows))
        mean = mean_embeddings(u, words, k)
        if i == 0:
            found["layer-0 mean"] = mean
            glove = vectors.glove_vectors(mean)
            found["GloVe 6B-50d"] = {w: glove[w] for w in mean if w in glove}
            continue
        authors = static_embeddings(u, words, k, centered=False, orientation="svd_flip")
        found[f"PC1 authors L{i}"] = authors
        found[f"PC1 centred L{i}"] = static_embeddings(u, words, k)
        found[f"mean L{i}"] = mean
        extra[i] = {"cos_authors_pc1_mean_median": float(np.median(
                        [authors[w] @ mean[w] for w in authors])),
                    "svd_flip_against_mean": _signs(authors, mean),
                    "sklearn19_sign_differs": _sklearn19_flips(authors),
                    "words": len(authors)}
    names, per = _scores(found, {b: load_benchmark(b) for b in benches}, seed, n_boot)
    out = {"layers": extra, "benchmarks": {}}
    for bench, R in [*((b, r) for b, (_, r) in per.items()),
                     ("mean", np.mean([r for _, r in per.values()], axis=0))]:
        pc1 = [R[0, j] for j, n in enumerate(names) if n.startswith("PC1 authors")]
        out["benchmarks"][bench] = {
            "items": per[bench][0] if bench in per else None,
            "rho": {n: {"rho": float(R[0, j]), "lo": float(np.nanpercentile(R[1:, j], 2.5)),
                        "hi": float(np.nanpercentile(R[1:, j], 97.5))}
                    for j, n in enumerate(names)},
            "authors_pc1_gain_over_glove": _best_gain(R, names, "GloVe 6B-50d"),
            "authors_pc1_gain_over_input": _best_gain(R, names, "layer-0 mean"),
            "authors_pc1_rho_with_layer": float(spearmanr(np.arange(len(pc1)), pc1)[0])}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["minilm-l6"])
    ap.add_argument("--n-sentences", type=int, default=1000)
    ap.add_argument("--k", type=int, default=5, help="contexts per benchmark word")
    ap.add_argument("--window", type=int, default=3)
    ap.add_argument("--benchmarks", nargs="+", default=["simlex999", "men", "ws353", "rw"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.perf_counter()
    out = {"released": released_floor(), "models": {}}
    print(json.dumps(out["released"], indent=1))
    for spec in args.models:
        out["models"][spec] = {
            "mev": mev_part(spec, args.n_sentences, args.seed),
            "static": static_part(spec, args.k, args.window, args.seed, args.benchmarks,
                                  args.n_boot)}
        for control, m in out["models"][spec]["mev"].items():
            print(spec, control, json.dumps(m["largest_adjusted"], indent=1))
        for bench, st in out["models"][spec]["static"]["benchmarks"].items():
            print(spec, bench, st["items"], "items;",
                  {n: round(r["rho"], 3) for n, r in st["rho"].items()})
    out["seconds"] = time.perf_counter() - t0
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
