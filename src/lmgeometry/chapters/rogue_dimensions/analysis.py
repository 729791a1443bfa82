"""Rogue dimensions, layer-by-layer CKA and one-dimension classifiers (seed 003, GPTology).

Seed 003 fine-tuned GPT-2 and BERT on SST-2 and QNLI and reported that (1) layer-by-layer CKA
of the pretrained GPT-2 has a block structure, which fine-tuning turns into a "bow tie"; (2) a
few *rogue dimensions* (Timkey & van Schijndel 2021), coordinates with far more variance than
the rest, dominate the last layers; (3) a threshold on the single highest-variance dimension
classifies SST-2 almost as well as the whole fine-tuned model (91.3% vs 92.8%) for GPT-2 but
not for BERT (76.0% vs 92.2%); (4) zeroing the top-variance dimensions hurts the trained
classifier while zeroing the bottom ones barely does.

:func:`analyse` asks these questions of *pretrained* models (chapter 7,
:mod:`lmgeometry.chapters.finetuning.analysis`, fine-tunes) on SST-2 and QNLI
(:class:`Task`): per task and model, :func:`task_tables` reads every layer's sentence vectors
once and computes the
rogue-dimension statistics, the 1-D threshold against a linear head on held-out sentences, the
majority baseline, the ablation curves and the layer-by-layer CKA, each with an interval;
:func:`task_claims` states the seed's claims as :class:`Claim` records. Beyond the seed,
:func:`cross_tables` compares the layers of an encoder and a decoder on the same words, with
and without each sentence's first word (a decoder's attention sink: Xiao et al. 2023; Sun et
al. 2024). The measures live in :mod:`lmgeometry.measures.similarity` and
:mod:`lmgeometry.measures.probes`.

The claims on a classifier (the 1-D threshold against the majority class and against the
linear head, the ablations) each get a null (:mod:`.nulls`): the same statistic, on the same
last layer, split and rogue dimension, with the labels permuted within the training and
within the held-out sentences (:func:`permuted_summary`; the threshold and the head fitted
again on the permuted labels). The block structure of CKA and the rogue dimensions' emergence
are claims about depth: their null is the same statistic with blocks 1..L in random orders
(:func:`shuffled_claims`). The last layer's dominance by a few rogue dimensions is a claim
about single coordinates: its null is the same top-3 variance share of the same vectors in a
random orthonormal basis (:func:`rotated_claims`), which keeps their spectrum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.calibration import SEED003
from lmgeometry.chapters.common import ChapterResult, check_whole, per_layer, with_blas_threads
from lmgeometry.chapters.nulls import (
    null_sentences,
    permuted_claim,
    rotated_claim,
    shuffled_claim,
    with_permuted,
    with_rotated,
    with_shuffled,
)
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.errors import UsageError
from lmgeometry.measures import probes, similarity
from lmgeometry.measures.permutation import PERMUTATION_STREAM, permute_within
from lmgeometry.measures.stats import (
    bootstrap_ci,
    percentile_interval,
    spearman_rows,
    wilson_interval,
)
from lmgeometry.report.prose import layers_phrase, number, pct, span

__all__ = [
    "accuracy_long",
    "analyse",
    "block_statistic",
    "cka_matrices",
    "cross_best_long",
    "cross_tables",
    "last_layers",
    "LABELLED",
    "permuted_claims",
    "rotated_claims",
    "shuffled_claims",
    "permuted_summary",
    "pooling_for",
    "PUBLISHED",
    "RogueParams",
    "SEED003",
    "sentence_vectors",
    "Task",
    "task_profiles",
    "task_claims",
    "task_tables",
    "THRESHOLDS",
]


POOLINGS = ("auto", "last", "mean")


@dataclass(frozen=True)
class RogueParams:
    """Every parameter of chapter 6's analysis (the keyword arguments of :func:`analyse` after
    its data, documented there), checked once before any layer is read."""

    seed: int = 0
    n_boot: int = 1000
    pooling: str = "auto"
    ablation_ks: Sequence[int] = (0, 1, 3, 10, 30, 100, 300)
    ablation_k: int = 3
    cka_words: int = 3000
    sink_ratio: float = 10.0

    def __post_init__(self) -> None:
        for name, low in {"seed": 0, "n_boot": 0, "ablation_k": 1, "cka_words": 1}.items():
            check_whole(name, getattr(self, name), low)
        if self.pooling not in POOLINGS:
            raise UsageError(f"pooling={self.pooling!r}: pass one of {', '.join(POOLINGS)}")
        if isinstance(self.ablation_ks, str):
            raise UsageError(f"ablation_ks={self.ablation_ks!r}: pass a list of whole numbers")
        for k in self.ablation_ks:
            check_whole("a value of ablation_ks", k, 0)
        object.__setattr__(self, "ablation_ks", tuple(int(k) for k in self.ablation_ks))
        ratio = self.sink_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not ratio > 0:
            raise UsageError(f"sink_ratio={ratio!r}: pass a number above 0 (default 10)")


@dataclass(frozen=True)
class Task:
    """One classification task: the stores of its corpus, its labels and its held-out split.

    ``labels`` and ``is_test`` have one entry per sentence (``sentence_id`` order), as
    :func:`lmgeometry.io.corpus.sst2_corpus` and :func:`~lmgeometry.io.corpus.qnli_corpus`
    return them; a model's store may hold another corpus than the next model's (QNLI joins a
    pair with each encoder's own separator) but the same sentences.
    """

    name: str
    stores: Mapping[str, Store]
    labels: np.ndarray
    is_test: np.ndarray


#: The claims' thresholds: effect sizes, each with the reason the chapter states for it.
THRESHOLDS: dict[str, tuple[float, str]] = {
    "cka_block": (0.1, "adjacent blocks at least 0.1 (a tenth of CKA's range) more similar "
                  "than blocks half the network apart: a block structure a heatmap shows"),
    "rogue_dominance": (0.5, "three dimensions hold more than half the variance (an isotropic "
                        "cloud gives them 3/d, under 1%)"),
    "rogue_emergence": (0.5, "a strong monotone rise over the blocks (Spearman rho 0.5, "
                        "Cohen's 'large' correlation)"),
    "beats_majority": (0.05, "five points above always answering the training majority class: "
                       "less is a cut that carries little of the label"),
    "threshold_gap": (0.05, "within five points of the linear head: the seed calls GPT-2's "
                      "1.5-point gap 'almost as well' and BERT's 16-point gap a failure"),
    "ablation": (0.02, "two points of accuracy, a loss a reader of the seed's Fig. 6 would "
                 "see"),
}

#: The claims (keys of :data:`THRESHOLDS`) whose statistic reads the task's labels: a
#: classifier's accuracy. Each gets its null with the labels permuted (:func:`permuted_summary`).
LABELLED: tuple[str, ...] = ("beats_majority", "threshold_gap", "ablation")

#: Seed 003's own numbers or patterns, quoted beside each claim.
PUBLISHED: dict[str, str] = {
    "cka_block": "pretrained GPT-2: block-diagonal CKA, early, middle and last blocks (Fig. 1)",
    "rogue_dominance": "last blocks of GPT-2 dominated by a few rogue dimensions (Figs. 3-4)",
    "rogue_emergence": "rogue dimensions emerge in the later blocks (Fig. 3)",
    "beats_majority": "fine-tuned: SST-2 91.3% (GPT-2), 76.0% (BERT); QNLI 86.6%, 81.9%; "
                      "classes balanced",
    "threshold_gap": "fine-tuned: SST-2 91.3 vs 92.8 (GPT-2), 76.0 vs 92.2 (BERT); QNLI 86.6 "
                     "vs 88.2, 81.9 vs 89.7",
    "ablation": "fine-tuned GPT-2: ablating the 765 lowest-variance dimensions barely hurts; "
                "ablating top dimensions does (Fig. 6)",
}


def pooling_for(store: Store, pooling: str = "auto") -> str:
    """The sentence vector of a store's model: ``"auto"`` is a decoder's last word (the only
    position that sees the whole sentence: seed 003's GPT-2 representation) and an encoder's
    mean word (how sentence-transformers pool)."""
    if pooling != "auto":
        return pooling
    return "last" if store.meta.get("model", {}).get("kind") == "decoder" else "mean"


def sentence_vectors(words: pd.DataFrame, layer: np.ndarray, pooling: str = "last"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """One vector per sentence from a store's word rows.

    ``"last"``: the sentence's last word; ``"mean"``: the mean of its words. Special tokens
    are not in the store, so BERT's [CLS] is not available; say so when comparing with the
    seed's BERT numbers.

    Returns
    -------
    vectors : ndarray of shape (sentences, d), float64
    sentence_ids : ndarray of the sentence ids, ascending
    """
    sid = words["sentence_id"].to_numpy()
    ids, start, counts = np.unique(sid, return_index=True, return_counts=True)
    if np.any(np.diff(sid) < 0):
        raise ValueError("word rows must be ordered by sentence (store order)")
    X = np.asarray(layer, dtype=np.float64)
    if pooling == "last":
        return X[start + counts - 1], ids
    if pooling == "mean":
        return np.add.reduceat(X, start, axis=0) / counts[:, None], ids
    raise ValueError(f"pooling must be 'last' or 'mean', not {pooling!r}")


def _interval(values: np.ndarray, n_boot: int, gen: np.random.Generator
              ) -> tuple[float, float, float]:
    """Mean of per-example values with its bootstrap interval over the examples."""
    return bootstrap_ci(np.asarray(values, dtype=np.float64), n_boot, gen)


def _accuracy(correct: np.ndarray) -> tuple[float, float, float]:
    """Share correct and its Wilson interval."""
    p = float(np.mean(correct))
    return (p, *wilson_interval(p, len(correct)))


def _layer_row(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray,
               counts: np.ndarray, n_boot: int, gen: np.random.Generator, seed: int
               ) -> tuple[dict[str, Any], np.ndarray, probes.LogisticHead]:
    """One layer's rogue dimensions and classifiers (see :func:`task_tables`)."""
    dim = int(similarity.top_dimensions(Xtr, 1)[0])
    reps = similarity.variance_share_replicates(Xtr, counts, (1, 3))
    contributions = similarity.cosine_contributions(Xtr)
    total = float(contributions.sum())
    cos_dim = int(np.argmax(contributions))
    scores, head = _classifiers(Xtr, ytr, Xte, yte, dim, n_boot, gen, seed)
    row: dict[str, Any] = {"rogue_dim": dim,
                           "threshold_one_class": scores.pop("threshold_one_class")}
    for j, k in enumerate((1, 3)):
        v = similarity.variance_share(Xtr, k)
        lo, hi = percentile_interval(reps[:, j], v)
        row |= {f"variance_share_top{k}": v, f"variance_share_top{k}_lo": lo,
                f"variance_share_top{k}_hi": hi}
    row |= {"mean_cosine": total, "cosine_dim": cos_dim,
            "cosine_share_cosine_dim": contributions[cos_dim] / total if total else math.nan,
            "cosine_share_rogue_dim": contributions[dim] / total if total else math.nan}
    return row | scores, reps[:, 0], head


def _classifiers(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, dim: int,
                 n_boot: int, gen: np.random.Generator, seed: int
                 ) -> tuple[dict[str, Any], probes.LogisticHead]:
    """The 1-D threshold on dimension ``dim``, the logistic head on every dimension and the
    majority class, fitted on the training rows and scored on the held-out rows (accuracies,
    and the paired differences with bootstrap intervals); the head."""
    threshold = probes.ThresholdClassifier().fit(Xtr[:, dim], ytr)
    head = probes.fit_logistic(Xtr, ytr, seed=seed)
    majority = int(np.bincount(ytr, minlength=2).argmax())
    predicted = threshold.predict(Xte[:, dim])
    c_thr = predicted == yte
    c_head = head.predict(Xte) == yte
    c_maj = yte == majority
    row: dict[str, Any] = {"threshold_one_class": bool(np.unique(predicted).size == 1)}
    for name, correct in (("threshold", c_thr), ("head", c_head), ("majority", c_maj)):
        row[f"{name}_accuracy"], row[f"{name}_accuracy_lo"], row[f"{name}_accuracy_hi"] = \
            _accuracy(correct)
    for name, diff in (("threshold_minus_majority", c_thr.astype(float) - c_maj),
                       ("head_minus_threshold", c_head.astype(float) - c_thr)):
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = _interval(diff, n_boot, gen)
    row["head_converged"] = head.converged
    return row, head


def permuted_summary(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray,
                     dim: int, *, n_boot: int = 1000, seed: int = 0, ablation_k: int = 3
                     ) -> dict[str, Any]:
    """The label-reading statistics of :func:`task_tables`' last layer, with the labels
    permuted: the claims' null.

    The labels are shuffled within the training and within the held-out sentences
    (:func:`permute_within`: each side keeps its class counts, so the majority class and its
    accuracy are the real ones); the 1-D threshold on the same rogue dimension ``dim`` (found
    without labels) and the logistic head are fitted again on the permuted training labels and
    scored on the permuted held-out labels, and the head's ablations are scored there too.
    The intervals draw their own resamples (a generator of their own), so the real ones are
    unchanged.

    Returns
    -------
    dict
        ``beats_majority`` and ``gap`` (value, low, high: threshold minus majority, head minus
        threshold) and ``ablation`` (per mode, as :func:`task_tables`' summary).
    """
    test = np.r_[np.zeros(len(ytr), bool), np.ones(len(yte), bool)]
    permuted = permute_within(np.r_[ytr, yte], test, seed=seed)
    ptr, pte = permuted[~test], permuted[test]
    gen = np.random.default_rng([seed, PERMUTATION_STREAM])
    row, head = _classifiers(Xtr, ptr, Xte, pte, dim, n_boot, gen, seed)
    _, ablation = _ablation(Xtr, ptr, Xte, pte, head, (), ablation_k, n_boot, gen)
    ends = ("", "_lo", "_hi")
    return {"beats_majority": tuple(row[f"threshold_minus_majority{s}"] for s in ends),
            "gap": tuple(row[f"head_minus_threshold{s}"] for s in ends), "ablation": ablation}


def _ablation(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray,
              head: probes.LogisticHead, ks: Sequence[int], k: int, n_boot: int,
              gen: np.random.Generator) -> tuple[pd.DataFrame, dict[str, tuple[float, ...]]]:
    """Ablation curves of the last layer's head, and top-k against bottom-k at ``k``.

    The statistic per mode is acc(bottom k ablated) - acc(top k ablated), from per-example
    correctness (paired), with a bootstrap interval over the held-out examples.
    """
    ks = [q for q in ks if q < Xtr.shape[1]]
    curve = pd.concat([probes.ablation_curve(Xtr, ytr, Xte, yte, ks, mode, head=head)
                       for mode in probes.ABLATION_MODES], ignore_index=True)
    order = np.argsort(-Xtr.var(axis=0), kind="stable")
    mean = Xtr.mean(axis=0)
    stats_: dict[str, tuple[float, ...]] = {}
    for mode in probes.ABLATION_MODES:
        c = {side: head.predict(probes.ablate(Xte, dims, mode, mean)) == yte
             for side, dims in (("top", order[:k]), ("bottom", order[len(order) - k:]))}
        diff = c["bottom"].astype(float) - c["top"]
        stats_[mode] = (*_interval(diff, n_boot, gen), float(c["top"].mean()),
                        float(c["bottom"].mean()))
    return curve, stats_


def _block_pairs(L: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Blocks 1..L's adjacent pairs (lag 1) and distant pairs (lag >= L/2)."""
    near = [(i, i + 1) for i in range(1, L)]
    far = [(i, j) for i in range(1, L + 1) for j in range(i + 1, L + 1) if j - i >= L / 2]
    return near, far


def block_statistic(matrix: np.ndarray, order: np.ndarray | None = None) -> float:
    """The CKA block statistic of :func:`_cka_block` from the layers' CKA ``matrix``, with
    block ``order[i]`` (0-based over blocks 1..L) in the place of block ``i + 1``: mean CKA
    of adjacent blocks minus blocks >= L/2 apart. The identity order gives the observed
    statistic; random orders give its null (:func:`shuffled_claims`).

    Examples
    --------
    >>> lag = np.abs(np.subtract.outer(np.arange(5), np.arange(5)))
    >>> round(block_statistic(1.0 - lag / 4), 3)  # similarity falls with distance
    0.333
    >>> round(block_statistic(1.0 - lag / 4, np.array([0, 2, 1, 3])), 3)  # order lost
    0.0
    """
    near, far = _near_far(matrix, order)
    return near - far


def _near_far(matrix: np.ndarray, order: np.ndarray | None = None) -> tuple[float, float]:
    """Mean CKA of the adjacent and of the distant blocks (:func:`_block_pairs`), blocks
    placed in ``order`` (:func:`block_statistic`)."""
    L = len(matrix) - 1
    blocks = 1 + (np.arange(L) if order is None else np.asarray(order))
    at = np.concatenate([[0], blocks])  # position i (1..L) holds block at[i]
    near, far = (float(np.mean([matrix[at[i], at[j]] for i, j in pairs]))
                 for pairs in _block_pairs(L))
    return near, far


def _cka_block(test_vectors: Sequence[np.ndarray], n_boot: int, gen: np.random.Generator
               ) -> tuple[np.ndarray, tuple[float, float, float, float, float]]:
    """Every layer's CKA with every other, and the block statistic over blocks 1..L.

    Block statistic: mean CKA of adjacent blocks (lag 1) minus mean CKA of blocks at lag
    >= L/2, with a bootstrap interval over the held-out sentences
    (:func:`similarity.gram_cka`). Layer 0 (the embeddings) is left out, as seed 003 looks at
    decoder blocks.
    """
    L = len(test_vectors) - 1
    near, far = _block_pairs(L)
    matrix, reps = similarity.gram_cka(test_vectors, near + far, n_boot, gen)
    point_near, point_far = _near_far(matrix)
    block = point_near - point_far
    rep = reps[:, :len(near)].mean(axis=1) - reps[:, len(near):].mean(axis=1)
    lo, hi = percentile_interval(rep, block) if n_boot else (math.nan, math.nan)
    return matrix, (block, lo, hi, point_near, point_far)


def _trend(shares: np.ndarray, point: np.ndarray) -> tuple[float, float, float]:
    """Spearman rho of the top-1 share with the block index (1..L), and its interval."""
    rho = float(spearman_rows(point[None, 1:])[0])
    lo, hi = percentile_interval(spearman_rows(shares[:, 1:]), rho)
    return rho, lo, hi


def task_tables(store: Store, labels: np.ndarray, is_test: np.ndarray, *,
                pooling: str = "auto", n_boot: int = 1000, seed: int = 0,
                ablation_ks: Sequence[int] = (0, 1, 3, 10, 30, 100, 300),
                ablation_k: int = 3) -> dict[str, Any]:
    """Everything the chapter shows for one model on one task, every layer read once.

    Per layer, on the sentence vectors (:func:`pooling_for`) of the training sentences: the
    principal rogue dimension (highest variance) and the variance share of the top 1 and 3
    dimensions, with intervals from a bootstrap over training sentences (the same replicates
    in every layer, so the trend over blocks gets one too); each dimension's contribution to
    the mean cosine (:func:`similarity.cosine_contributions`). On the held-out sentences: a
    :class:`probes.ThresholdClassifier` on the rogue dimension and a logistic head on all
    dimensions, both fitted on the training sentences only, and the majority baseline (the
    training majority class); accuracies with Wilson intervals, and the paired differences
    threshold - majority and head - threshold with bootstrap intervals over the held-out
    sentences. The last layer's head is also the head of the ablation curves
    (:func:`probes.ablation_curve`), so its unablated accuracy is the same number. CKA
    between every pair of layers on the held-out sentence vectors, and the block statistic
    (:func:`_cka_block`).

    Returns
    -------
    dict
        ``layers`` (per layer), ``cka`` (per pair of layers), ``ablation``, ``profile`` (the
        last layer's per-dimension standard deviation), ``summary`` (the claims' numbers;
        under ``permuted``, the label-reading ones with the labels permuted,
        :func:`permuted_summary`).
    """
    pool = pooling_for(store, pooling)
    words = store.words
    ids = np.unique(words["sentence_id"].to_numpy())
    y, test = np.asarray(labels)[ids].astype(int), np.asarray(is_test)[ids]
    ytr, yte = y[~test], y[test]
    gen = np.random.default_rng(seed)
    n_tr = int((~test).sum())
    counts = gen.multinomial(n_tr, np.full(n_tr, 1.0 / n_tr), size=n_boot)
    rows, shares, test_vectors = [], [], []
    for layer in range(store.n_layers):
        S = sentence_vectors(words, store.layer(layer), pool)[0]
        Xtr, Xte = S[~test], S[test]
        row, share_reps, head = _layer_row(Xtr, ytr, Xte, yte, counts, n_boot, gen, seed)
        rows.append({"layer": layer, "pooling": pool} | row)
        shares.append(share_reps)
        test_vectors.append(Xte)
    layers = pd.DataFrame(rows)
    ablation, abl = _ablation(Xtr, ytr, Xte, yte, head, ablation_ks, ablation_k, n_boot, gen)
    matrix, block = _cka_block(test_vectors, n_boot, gen)
    last = layers.iloc[-1]
    n = len(matrix)
    rotated = Xtr @ similarity.random_rotation(Xtr.shape[1], seed=seed)
    rotated_top3 = similarity.variance_share(rotated, 3)
    summary = {
        "cka_block": block, "cka_matrix": matrix, "emergence": _trend(np.stack(shares, axis=1),
                                                layers["variance_share_top1"].to_numpy()),
        "share_top1": layers["variance_share_top1"].to_numpy(),
        "rotated": {"dominance": (rotated_top3, *percentile_interval(
            similarity.variance_share_replicates(rotated, counts, (3,))[:, 0], rotated_top3))},
        "dominance": tuple(last[f"variance_share_top3{s}"] for s in ("", "_lo", "_hi")),
        "beats_majority": tuple(last[f"threshold_minus_majority{s}"] for s in ("", "_lo", "_hi")),
        "gap": tuple(last[f"head_minus_threshold{s}"] for s in ("", "_lo", "_hi")),
        "ablation": abl, "ablation_k": ablation_k, "n_train": n_tr, "n_test": len(yte),
        "last": last, "permuted": permuted_summary(Xtr, ytr, Xte, yte, int(last["rogue_dim"]),
                                                   n_boot=n_boot, seed=seed,
                                                   ablation_k=ablation_k),
    }
    return {
        "layers": layers,
        "cka": pd.DataFrame({"layer": np.repeat(np.arange(n), n),
                             "other_layer": np.tile(np.arange(n), n), "cka": matrix.ravel()}),
        "ablation": ablation.assign(layer=store.n_layers - 1)[
            ["layer", "mode", "removed", "k", "accuracy", "head_converged"]],
        "profile": pd.DataFrame({"layer": store.n_layers - 1, "dimension": np.arange(Xtr.shape[1]),
                                 "std": Xtr.std(axis=0)}),
        "summary": summary,
    }


def _claim(key: str, task: str, model: str, claim: str, statistic: str,
           interval: Sequence[float], direction: str, figure: str, evidence: str) -> Claim:
    threshold, rule = THRESHOLDS[key]
    value, low, high = (float(x) for x in interval[:3])
    return Claim(seed="003", claim=claim, model=model, statistic=f"{statistic} ({task})",
                 value=value, ci_low=low, ci_high=high, threshold=threshold,
                 direction=direction, rule=rule,  # type: ignore[arg-type]
                 published=PUBLISHED[key], figure=figure, evidence=evidence, task=task)


def task_claims(task: str, model: str, summary: Mapping[str, Any]) -> list[Claim]:
    """Seed 003's claims on one model and task, from :func:`task_tables`'s ``summary``.

    Every claim rests on sentence vectors; a decoder's is its last word's, never a
    sentence's first word, so the first-word control would leave the numbers unchanged and
    the claims are stated under the seed's protocol only.
    """
    s, last, k = summary, summary["last"], summary["ablation_k"]
    block = s["cka_block"]
    out = [
        _claim("cka_block", task, model, "layer-by-layer CKA has a block structure",
               "mean CKA of adjacent blocks minus blocks >= L/2 apart", block, "above",
               f"cka-{model}", f"adjacent {number(block[3])}, distant {number(block[4])}"),
        _claim("rogue_dominance", task, model, "a few rogue dimensions dominate the last layer",
               "variance share of the top 3 dimensions, last layer", s["dominance"], "above",
               "variance-share", f"top 1: {pct(last['variance_share_top1'], 1)} (dimension "
               f"{int(last['rogue_dim'])})"),
        _claim("rogue_emergence", task, model, "beyond the paper: before fine-tuning, rogue "
               "dimensions emerge in the later blocks",
               "Spearman rho of the top-1 variance share with the block index",
               s["emergence"], "above", "variance-share", ""),
        _claim("beats_majority", task, model,
               "beyond the paper: before fine-tuning, a threshold on the principal rogue "
               "dimension beats the majority class",
               "1-D threshold accuracy minus majority baseline, last layer, held out",
               s["beats_majority"], "above", "threshold-vs-head",
               f"threshold {pct(last['threshold_accuracy'], 1)}, majority "
               f"{pct(last['majority_accuracy'], 1)}"),
        _claim("threshold_gap", task, model,
               "beyond the paper: before fine-tuning, the 1-D threshold nearly matches a "
               "linear head",
               "head accuracy minus 1-D threshold accuracy, last layer, held out", s["gap"],
               "below", "threshold-vs-head", f"head {pct(last['head_accuracy'], 1)}, "
               f"threshold {pct(last['threshold_accuracy'], 1)}"),
    ]
    for mode, words in (("zero", "zeroed, the seed's ablation"), ("mean", "set to the "
                                                                     "training mean")):
        a = s["ablation"][mode]
        out.append(_claim(
            "ablation", task, model,
            "beyond the paper: before fine-tuning, ablating the top-variance dimensions hurts "
            "a linear head more than the bottom ones",
            f"accuracy with the bottom {k} minus with the top {k} dimensions {words}", a,
            "above", f"ablation-{mode}",
            f"top {k} ablated {pct(a[3], 1)}, bottom {k} {pct(a[4], 1)}, none "
            f"{pct(last['head_accuracy'], 1)}"))
    return out


def permuted_claims(task: str, model: str, summary: Mapping[str, Any]) -> list[Claim]:
    """The null rows (:func:`permuted_claim`) of :func:`task_claims`' :data:`LABELLED` claims:
    the same claims on ``summary["permuted"]``."""
    rules = {THRESHOLDS[key][1] for key in LABELLED}
    return [permuted_claim(c, (c.value, c.ci_low, c.ci_high))
            for c in task_claims(task, model, {**summary, **summary["permuted"]})
            if c.rule in rules]


def shuffled_claims(task: str, model: str, summary: Mapping[str, Any], seed: int = 0
                    ) -> list[Claim]:
    """The null rows (:func:`.nulls.shuffled_claim`) of the two depth claims: the block
    structure (:func:`block_statistic`) and the rogue dimensions' emergence (Spearman rho of
    the top-1 variance share with the block index), each with blocks 1..L in random
    orders."""
    matrix, shares = summary["cka_matrix"], np.asarray(summary["share_top1"])[1:]
    found = {c.claim: c for c in task_claims(task, model, summary)}
    block = found["layer-by-layer CKA has a block structure"]
    emergence = found["beyond the paper: before fine-tuning, rogue dimensions emerge in the "
                      "later blocks"]
    return [shuffled_claim(block, lambda order: block_statistic(matrix, order),
                           len(matrix) - 1, seed),
            shuffled_claim(emergence, lambda order: float(spearman_rows(shares[order][None])[0]),
                           len(shares), seed)]


def rotated_claims(task: str, model: str, summary: Mapping[str, Any]) -> list[Claim]:
    """The null row (:func:`.nulls.rotated_claim`) of the rogue-dimension dominance claim: the
    top-3 variance share of the same last-layer vectors in a random orthonormal basis."""
    claim = next(c for c in task_claims(task, model, summary)
                 if c.claim == "a few rogue dimensions dominate the last layer")
    return [rotated_claim(claim, summary["rotated"]["dominance"])]


def cross_tables(reference: Store, store: Store, n_words: int = 3000, seed: int = 0
                 ) -> dict[str, pd.DataFrame]:
    """Beyond the seed: CKA between every layer of two models on the same words.

    A seeded sample of ``n_words`` word rows, every layer of both models, with and without
    the words that open a sentence (:func:`similarity.cross_model_cka`): a decoder run
    without BOS puts a huge hidden state on its first position (an attention sink), and a few
    rows of huge norm dominate linear CKA.

    Returns
    -------
    dict
        ``layers``: one row per layer of ``store`` (best-matching ``reference`` layer, all
        words, without first words, and without first words and ``store``'s top-variance
        dimension; the first word's norm ratio); ``matrix``: one row per pair of layers and
        row set.
    """
    key = ["sentence_id", "word_index"]
    if not reference.words[key].equals(store.words[key]):
        raise ValueError(f"{reference.label} and {store.label} do not hold the same words")
    idx = similarity.subsample(reference.n_words, n_words, seed)
    first = reference.words["word_index"].to_numpy()[idx] == 0
    A = [reference.layer(i, idx, dtype=np.float64) for i in range(reference.n_layers)]
    B = [store.layer(i, idx, dtype=np.float64) for i in range(store.n_layers)]
    all_rows, without, table = similarity.cross_model_cka(A, B, first)
    n_a, n_b = all_rows.shape
    matrix = pd.concat([pd.DataFrame({"layer": np.tile(np.arange(n_b), n_a),
                                      "reference_layer": np.repeat(np.arange(n_a), n_b),
                                      "rows": rows, "cka": M.ravel()})
                        for rows, M in (("all words", all_rows),
                                        ("first words left out", without))],
                       ignore_index=True)
    extra = {"reference": reference.label, "n_words": len(idx), "n_first_words": int(first.sum())}
    return {"layers": table.assign(**extra), "matrix": matrix.assign(reference=reference.label)}


def _sentences(tables: Mapping[str, pd.DataFrame], sink_ratio: float) -> list[str]:
    """A few sentences on what this run shows, each read from the tables."""
    out = []
    layers = tables["layers"]
    last = layers[layers["layer"] == layers.groupby("model")["layer"].transform("max")]
    for task, part in last.groupby("task", sort=False):
        items = ", ".join(f"{r.model} {pct(r.threshold_accuracy, 1)} vs {pct(r.head_accuracy, 1)} "
                          f"({pct(r.majority_accuracy, 1)})" for r in part.itertuples())
        out.append(f"{task}, last layer, held-out accuracy of the 1-D threshold vs the linear "
                   f"head (majority class): {items}.")
    cross = tables.get("cross_cka")
    if cross is not None and len(cross):
        for model, part in cross.groupby("model", sort=False):
            sink = part[part["first_word_norm_ratio"] > sink_ratio]
            ref = part["reference"].iloc[0]
            if sink.empty:
                out.append(f"In no layer of {model} is the first word's median norm more than "
                           f"{sink_ratio:.0f} times the other words'.")
                continue
            ratio, best, rest = (sink[c] for c in ("first_word_norm_ratio", "best_cka_all",
                                                   "best_cka_without_first"))
            out.append(
                f"In {model} {layers_phrase(sink['layer'])} the first word's median norm is "
                f"{span(ratio.min(), ratio.max(), '.0f')} times the other words'; there the "
                f"best-matching {ref} layer reaches a CKA of {span(best.min(), best.max())} on "
                f"all words and {span(rest.min(), rest.max())} without the first words.")
    return out


def _cross(cross: Mapping[str, Store], n_words: int, seed: int) -> dict[str, pd.DataFrame]:
    """:func:`cross_tables` of the first encoder against every decoder of ``cross``."""
    kind = {label: s.meta.get("model", {}).get("kind") for label, s in cross.items()}
    encoders = [s for label, s in cross.items() if kind[label] == "encoder"]
    decoders = [s for label, s in cross.items() if kind[label] == "decoder"]
    if not encoders or not decoders:
        return {}
    parts = {id(s): cross_tables(encoders[0], s, n_words, seed) for s in decoders}
    return {name: per_layer(decoders, lambda s, k=key: parts[id(s)][k])
            for name, key in (("cross_cka", "layers"), ("cross_cka_matrix", "matrix"))}


@with_blas_threads
def analyse(
    tasks: Sequence[Task],
    cross: Mapping[str, Store] | None = None,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    pooling: str = "auto",
    ablation_ks: Sequence[int] = (0, 1, 3, 10, 30, 100, 300),
    ablation_k: int = 3,
    cka_words: int = 3000,
    sink_ratio: float = 10.0,
) -> ChapterResult:
    """Seed 003's questions, asked of pretrained models on each task, with intervals.

    Parameters
    ----------
    tasks : sequence of Task
        SST-2, QNLI: stores, labels and held-out split.
    cross : mapping, optional
        Stores of one word corpus (e.g. ``mnli_polysemy``) by model, for the cross-model CKA
        of the first encoder against every decoder (beyond the seed).
    seed : int
        Seeds every bootstrap and sample.
    n_boot : int
        Bootstrap replicates of every interval.
    pooling : {"auto", "last", "mean"}
        Sentence vectors (:func:`pooling_for`).
    ablation_ks : sequence of int
        Dimensions ablated along the ablation curves.
    ablation_k : int
        The top-k against bottom-k comparison of the ablation claims.
    cka_words : int
        Words sampled for the cross-model CKA.
    sink_ratio : float
        A layer whose first words have a median norm above this multiple of the others' is
        called a sink layer in the sentences.

    Raises
    ------
    UsageError
        A parameter out of its range (:class:`RogueParams`), before any layer is read.

    Returns
    -------
    ChapterResult
        Tables ``layers``, ``cka``, ``ablation``, ``profile`` (model, layer, depth, task,
        ...), ``tasks``, and with ``cross`` ``cross_cka``, ``cross_cka_matrix``; the claims
        of :func:`task_claims`; a few sentences.
    """
    p = RogueParams(seed=seed, n_boot=n_boot, pooling=pooling, ablation_ks=ablation_ks,
                    ablation_k=ablation_k, cka_words=cka_words, sink_ratio=sink_ratio)
    parts: dict[tuple[str, int], dict[str, Any]] = {}
    claims: list[Claim] = []
    nulls: list[Claim] = []
    shuffled: list[Claim] = []
    rotated: list[Claim] = []
    for task in tasks:
        for store in task.stores.values():
            part = task_tables(store, task.labels, task.is_test, pooling=p.pooling,
                               n_boot=p.n_boot, seed=p.seed, ablation_ks=p.ablation_ks,
                               ablation_k=p.ablation_k)
            parts[(task.name, id(store))] = part
            claims += task_claims(task.name, store.label, part["summary"])
            nulls += permuted_claims(task.name, store.label, part["summary"])
            shuffled += shuffled_claims(task.name, store.label, part["summary"], p.seed)
            rotated += rotated_claims(task.name, store.label, part["summary"])
    tables: dict[str, pd.DataFrame] = {}
    for name in ("layers", "cka", "ablation", "profile"):
        frames = []
        for task in tasks:
            frame = per_layer(task.stores.values(),
                              lambda s, k=name, t=task.name: parts[(t, id(s))][k])
            frame.insert(3, "task", task.name)
            frames.append(frame)
        tables[name] = pd.concat(frames, ignore_index=True)
    tables["tasks"] = pd.DataFrame([
        {"task": task.name, "model": s.label, "pooling": pooling_for(s, p.pooling),
         "n_train": parts[(task.name, id(s))]["summary"]["n_train"],
         "n_test": parts[(task.name, id(s))]["summary"]["n_test"]}
        for task in tasks for s in task.stores.values()])
    if cross:
        tables |= _cross(cross, p.cka_words, p.seed)
    facts = calibration.store_facts(s for task in tasks for s in task.stores.values())
    frame = with_rotated(with_shuffled(with_permuted(
        calibration.annotate(claims_frame(claims), facts), nulls), shuffled), rotated)
    return ChapterResult(tables=tables, claims=frame,
                         sentences=[*_sentences(tables, p.sink_ratio), *null_sentences(frame)])


def cka_matrices(cka: pd.DataFrame, task: str) -> dict[str, np.ndarray]:
    """Per model (in their order in ``cka``), the matrix of linear CKA between its layers on
    ``task`` (rows ``layer``, columns ``other_layer``)."""
    return {spec: part.pivot(index="layer", columns="other_layer", values="cka").to_numpy()
            for (name, spec), part in cka.groupby(["task", "model"], sort=False)
            if name == task}


def task_profiles(profile: pd.DataFrame) -> dict[str, tuple[list[np.ndarray], list[str]]]:
    """Per model: each task's standard deviation of every dimension (last layer), and the
    task names, tasks and models in their order in ``profile``."""
    return {spec: ([g["std"].to_numpy() for _, g in part.groupby("task", sort=False)],
                   list(pd.unique(part["task"])))
            for spec, part in profile.groupby("model", sort=False)}


def accuracy_long(layers: pd.DataFrame) -> pd.DataFrame:
    """``layers`` once per classifier (1-D threshold, all dimensions, majority baseline) with
    ``classifier``, ``accuracy``, ``lo`` and ``hi`` added, classifiers in that order."""
    return pd.concat(
        [layers.assign(classifier=label, accuracy=layers[f"{key}_accuracy"],
                       lo=layers[f"{key}_accuracy_lo"], hi=layers[f"{key}_accuracy_hi"])
         for key, label in (("threshold", "1-D threshold"), ("head", "all dimensions"),
                            ("majority", "majority baseline"))],
        ignore_index=True,
    )


def cross_best_long(cross_table: pd.DataFrame) -> pd.DataFrame:
    """The cross-model CKA table once per set of rows (all words, first words left out, first
    words and top dimension left out) with ``rows`` and ``value`` (the best CKA) added."""
    return pd.concat(
        [cross_table.assign(rows=label, value=cross_table[key]) for key, label in (
            ("best_cka_all", "all words"), ("best_cka_without_first", "first words left out"),
            ("best_cka_without_first_and_top_dim", "first words and top dimension left out"))],
        ignore_index=True,
    )


def last_layers(layers: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``layers`` at each model's last layer (in their order)."""
    return layers[layers["layer"] == layers.groupby("model")["layer"].transform("max")]
