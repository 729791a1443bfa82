"""Fine-tuning and rogue dimensions (seed 003, GPTology): the seed's central experiment, run.

Seed 003 fine-tuned GPT-2 and BERT on SST-2 and QNLI and reported, for the fine-tuned models:
layer-by-layer CKA turns into a "bow tie" (the first blocks stay, the last half specialises
and becomes one block); rogue dimensions emerge in the later blocks, are exacerbated by
fine-tuning and are the same dimensions for both tasks (8 of 10); a threshold on the single
highest-variance dimension nearly matches the whole model for GPT-2 (SST-2 91.3% vs 92.8%)
but not for BERT (76.0% vs 92.2%); ablating the top-variance dimensions hurts the trained head
while ablating the bottom ones barely does. Chapter 6 asks these questions of pretrained
models; this chapter fine-tunes (:mod:`lmgeometry.training.finetune`) and asks them of the
fine-tuned models, beside the same models before fine-tuning.

The representation is the one the classification head reads, in every layer: an encoder's
first token, a decoder's last token (:func:`lmgeometry.activations.heads.head_states`), as the
seed reads GPT-2's last token and BERT's ``[CLS]``. :func:`prepare` fine-tunes (or finds the
cached checkpoints) and extracts these states; :func:`analyse` computes, per model and task
(:class:`Run`), every table and seed 003's claims with intervals over the held-out examples.
The measures live in :mod:`lmgeometry.measures.similarity` (CKA, plain and debiased, rogue
dimensions, top-k overlap), :mod:`lmgeometry.measures.probes` (threshold classifier,
ablation) and :mod:`lmgeometry.measures.clusters` (t-SNE).

The claims on a classifier's accuracy (the 1-D threshold against the majority class and
against the fine-tuned model, the ablations of the model's own head) each get a null
(:mod:`.nulls`): the same statistic with the labels permuted within the fit set and within the
held-out examples (:func:`permuted_summary`: the threshold fitted again, the fine-tuned model's
predictions scored against the permuted labels). The claims about depth (CKA's halves and
first blocks, where rogue dimensions emerge; :data:`SHUFFLED`) get the same statistic with
the blocks in random orders, the same order before and after fine-tuning, as their null
(:func:`shuffled_claims`). The claims on the last layer's rogue dimensions (a few dominate
its variance; fine-tuning raises the top one's share and brings their mean closer to zero)
are about single coordinates:
their null is the same statistics of the same states in a random orthonormal basis, the same
before and after fine-tuning (:func:`rotated_claims`). The claim that the two tasks'
fine-tunes share their top rogue dimensions (``_overlap``) has the same null.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.chapters import calibration
from lmgeometry.chapters.calibration import SEED003
from lmgeometry.chapters.common import ChapterResult, check_whole, with_blas_threads
from lmgeometry.chapters.nulls import (
    null_sentences,
    permuted_claim,
    rotated_claim,
    shuffled_claim,
    with_permuted,
    with_rotated,
    with_shuffled,
)
from lmgeometry.chapters.rogue_dimensions.analysis import LABELLED as CHAPTER6_LABELLED
from lmgeometry.chapters.rogue_dimensions.analysis import THRESHOLDS as CHAPTER6_THRESHOLDS
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.errors import UsageError
from lmgeometry.measures import clusters, probes, similarity
from lmgeometry.measures.permutation import PERMUTATION_STREAM, permute_within
from lmgeometry.measures.stats import (
    bootstrap_ci,
    percentile_interval,
    spearman_rows,
    wilson_interval,
)
from lmgeometry.report.claims import claim_sentences
from lmgeometry.report.prose import number, pct

__all__ = [
    "ABLATION_SHARE",
    "ablation_dimensions",
    "adequacy_gate",
    "analyse",
    "cka_tables",
    "rotated_claims",
    "shuffled_claims",
    "SHUFFLED",
    "FinetuningParams",
    "LABELLED",
    "permuted_claims",
    "permuted_summary",
    "PUBLISHED",
    "prepare",
    "Run",
    "run_claims",
    "run_tables",
    "SEED003",
    "SEED003_HARMLESS_SHARE",
    "STATES",
    "TASK_NAMES",
    "THRESHOLDS",
]

#: Task keys of :mod:`lmgeometry.training.finetune` and their names in tables.
TASK_NAMES: dict[str, str] = {"sst2": "SST-2", "qnli": "QNLI"}

#: The dimensions seed 003 keeps in its "all but the top 3" ablation (Fig. 6).
SEED003_KEEP = 3

#: The share of the dimensions whose removal seed 003 found harmless on SST-2: "model
#: performance minimally increases when removing the top 92 dimensions" of GPT-2's 768.
SEED003_HARMLESS_SHARE = 92 / 768

#: The two states of a model compared throughout.
STATES: tuple[str, str] = ("pretrained", "fine-tuned")

#: The claims' thresholds: effect sizes, each with the reason the chapter states for it. The
#: claims chapter 6 also tests on pretrained models keep its thresholds.
THRESHOLDS: dict[str, tuple[float, str]] = {
    "refines_last_half": (0.1, "fine-tuning moves the last half of the blocks at least 0.1 (a "
                          "tenth of CKA's range) further from the pretrained model than the "
                          "first half"),
    "early_preserved": (0.9, "'CKA scores near 1' read as above 0.9 for blocks 1-3 against the "
                        "same blocks before fine-tuning"),
    "two_blocks": (0.1, "blocks of the same half at least 0.1 (a tenth of CKA's range) more "
                   "similar than blocks of different halves: two blocks a heatmap shows"),
    "bow_tie_emerges": (0.05, "fine-tuning raises that two-block contrast by at least 0.05, "
                        "half the contrast a heatmap shows"),
    "rogue_exacerbated": (0.05, "fine-tuning adds at least 5 points to the variance share of "
                          "the top dimension of the last layer"),
    "rogue_mean_closer": (0.5, "'much closer to zero' read as at most half: the absolute "
                          "means in the fine-tuned model's top 3 dimensions, summed, at most "
                          "half those of the pretrained model in the same dimensions (the "
                          "seed's Fig. 4 gives no number)"),
    "overlap": (5.0, "more than half of the top 10 dimensions shared by the two fine-tunes "
                "(the seed: 8 of 10; two random sets of 10 share 100/d, under 1)"),
    "keep_top": (0.05, "keeping only the top 3 dimensions costs under five points of "
                 "accuracy: the seed's 'minimally decreases'"),
    "class_halves": (0.1, "'clearly learned distinct subspaces that separate points by class "
                     "label' in blocks 7-12 where 'none of the first 6' separate: the last "
                     "half's mean label silhouette at least 0.1 (a twentieth of its range, -1 "
                     "to 1) above the first half's. Whether the first half separates at all "
                     "is shown, not tested"),
    "class_halves_emerge": (0.05, "'have learned': fine-tuning raises that contrast of the "
                            "halves by at least 0.05 over the pretrained model's (half the "
                            "contrast the claim before asks for)"),
    "top_harmless": (-0.02, "'minimally increases' read as costing at most two points of "
                     "accuracy, with the same share of the dimensions zeroed (12%: 92 of "
                     "GPT-2's 768); the seed says it of SST-2, and of QNLI that 'accuracy "
                     "steadily decreases as we remove top dimensions'"),
    **{key: CHAPTER6_THRESHOLDS[key] for key in ("rogue_dominance", "rogue_emergence",
                                                 "beats_majority", "threshold_gap",
                                                 "ablation")},
}

#: The claims (keys of :data:`THRESHOLDS`) whose statistic reads the task's labels: a
#: classifier's accuracy. Each gets its null with the labels permuted (:func:`permuted_summary`).
LABELLED: tuple[str, ...] = (*CHAPTER6_LABELLED, "keep_top", "top_harmless", "class_halves",
                             "class_halves_emerge")

#: Seed 003's own numbers or patterns, quoted beside each claim.
PUBLISHED: dict[str, str] = {
    "refines_last_half": "fine-tuning specialises the last half of GPT-2's blocks (7-12 of "
                         "12; Fig. 1, abstract)",
    "early_preserved": "blocks 1-3 have CKA near 1 across fine-tuning tasks (Fig. 1)",
    "two_blocks": "fine-tuned GPT-2: blocks 1-6 similar to one another, 7-12 similar to one "
                  "another (bow tie, Fig. 1)",
    "bow_tie_emerges": "pretrained GPT-2: early, middle and last blocks; fine-tuning gives the "
                       "two-block bow tie (Fig. 1)",
    "rogue_dominance": "fine-tuned GPT-2: last blocks dominated by rogue dimensions (Fig. 3)",
    "rogue_emergence": "rogue dimensions emerge in the later blocks (Fig. 3)",
    "rogue_exacerbated": "fine-tuning exacerbates existing rogue dimensions (Figs. 3-4)",
    "rogue_mean_closer": "GPT-2: 'the mean in these dimensions is much closer to zero in the "
                         "fine-tuned models compared to the pre-trained GPT-2 representations' "
                         "(Fig. 4)",
    "overlap": "8 of the top 10 rogue dimensions shared by GPT-2's SST-2 and QNLI fine-tunes",
    "beats_majority": "SST-2 91.3% (GPT-2), 76.0% (BERT); QNLI 86.6%, 81.9%; classes balanced",
    "threshold_gap": "SST-2 91.3 vs 92.8 (GPT-2), 76.0 vs 92.2 (BERT); QNLI 86.6 vs 88.2, "
                     "81.9 vs 89.7: holds for GPT-2, not for BERT",
    "ablation": "ablating top dimensions hurts GPT-2's head, the 765 lowest barely (Fig. 6)",
    "keep_top": "GPT-2: ablating the 765 lowest-variance dimensions minimally decreases "
                "accuracy on SST-2; on QNLI it falls from ~85% to ~50% (Fig. 6)",
    "class_halves": "fine-tuned GPT-2, SST-2 and QNLI: 'none of the first 6 decoder blocks "
                    "... are able to separate input texts, layers 7-12 have clearly learned "
                    "distinct subspaces that separate points by class label' (Fig. 2)",
    "class_halves_emerge": "GPT-2: layers 7-12 'have learned' the separation in fine-tuning "
                           "(Fig. 2 shows the fine-tuned models only; that the pretrained "
                           "model lacks it is this book's reading of 'learned')",
    "top_harmless": "GPT-2, SST-2: 'model performance minimally increases when removing the "
                    "top 92 dimensions', then 'quickly decays if we ablate more than 300'; "
                    "QNLI: 'accuracy steadily decreases as we remove top dimensions' (Fig. 6)",
}


@dataclass(frozen=True)
class Run:
    """One model fine-tuned on one task, and the hidden states the chapter reads.

    ``before`` and ``after`` hold, for every layer (0 = embeddings), the held-out examples'
    hidden state at the head's token (encoders: first token; decoders: last), before and
    after fine-tuning: arrays of shape (layers, n_test, width) (memory maps from
    :class:`lmgeometry.activations.heads.HeadStates` serve). ``after_fit`` holds the same
    for training examples of the fine-tuning run (the data a threshold is chosen on).
    ``head`` is the fine-tuned model's own head (``predict``, ``accuracy``, ``converged``:
    :class:`lmgeometry.training.finetune.Head`), applied to last-layer states.
    """

    model: str
    kind: str
    task: str
    before: np.ndarray
    after: np.ndarray
    after_fit: np.ndarray
    y_test: np.ndarray
    y_fit: np.ndarray
    head: Any
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_layers(self) -> int:
        """Hidden states per example (blocks + 1)."""
        return int(self.after.shape[0])


def _layer(states: np.ndarray, i: int) -> np.ndarray:
    return np.asarray(states[i], dtype=np.float64)


def _mean0(a: np.ndarray) -> np.ndarray | float:
    """Mean over the first axis (pairs of layers); NaN when there are none."""
    if len(a) == 0:
        return np.full(a.shape[1:], np.nan) if a.ndim > 1 else math.nan
    return a.mean(axis=0)


def _accuracy(correct: np.ndarray) -> tuple[float, float, float]:
    """Share correct and its Wilson interval."""
    p = float(np.mean(correct))
    return (p, *wilson_interval(p, len(correct)))


def _rogue_row(X: np.ndarray, counts: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
    """One layer's rogue-dimension statistics on held-out states, and the share replicates."""
    reps = similarity.variance_share_replicates(X, counts, (1, 3, 10))
    contributions = similarity.cosine_contributions(X)
    total = float(contributions.sum())
    order = np.argsort(-contributions, kind="stable")
    row: dict[str, Any] = {"rogue_dim": int(similarity.top_dimensions(X, 1)[0]),
                           "cosine_dim": int(order[0]), "mean_cosine": total}
    for j, k in enumerate((1, 3, 10)):
        v = similarity.variance_share(X, k)
        lo, hi = percentile_interval(reps[:, j], v)
        row |= {f"variance_share_top{k}": v, f"variance_share_top{k}_lo": lo,
                f"variance_share_top{k}_hi": hi,
                f"cosine_share_top{k}": float(contributions[order[:k]].sum() / total)
                if total else math.nan}
    return row, reps


def _threshold_row(X_fit: np.ndarray, y_fit: np.ndarray, X_test: np.ndarray,
                   y_test: np.ndarray, full: np.ndarray, majority: np.ndarray, n_boot: int,
                   gen: np.random.Generator) -> dict[str, Any]:
    """The 1-D threshold on the fit set's principal rogue dimension, scored on held-out."""
    dim = int(similarity.top_dimensions(X_fit, 1)[0])
    cut = probes.ThresholdClassifier().fit(X_fit[:, dim], y_fit)
    correct = cut.predict(X_test[:, dim]) == y_test
    row: dict[str, Any] = {"threshold_dim": dim}
    row["threshold_accuracy"], row["threshold_accuracy_lo"], row["threshold_accuracy_hi"] = \
        _accuracy(correct)
    for name, diff in (("threshold_minus_majority", correct.astype(float) - majority),
                       ("full_minus_threshold", full.astype(float) - correct)):
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = bootstrap_ci(diff, n_boot, gen)
    return row


def _layers(run: Run, counts: np.ndarray, full: np.ndarray, majority: np.ndarray,
            n_boot: int, gen: np.random.Generator) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The per-layer table (both states) and the top-1/3/10 share replicates per state."""
    rows, shares = [], {state: [] for state in STATES}
    last = run.n_layers - 1
    for layer in range(run.n_layers):
        for state, states in zip(STATES, (run.before, run.after), strict=True):
            X = _layer(states, layer)
            row, reps = _rogue_row(X, counts)
            shares[state].append(reps)
            if state == "fine-tuned":
                row |= _threshold_row(_layer(run.after_fit, layer), run.y_fit, X, run.y_test,
                                      full, majority, n_boot, gen)
            rows.append({"layer": layer, "depth": layer / last, "state": state} | row)
    return pd.DataFrame(rows), {s: np.stack(v, axis=1) for s, v in shares.items()}


def _cka_groups(n: int, order: np.ndarray | None = None) -> dict[str, list[tuple[int, int]]]:
    """The pairs of layers each CKA statistic of :func:`cka_tables` averages, among ``n``
    pretrained layers (indices 0..n-1) and ``n`` fine-tuned ones (n..2n-1): ``diag`` (each
    block with itself fine-tuned), ``same_ft``/``same_pre`` (pairs in the same half of the
    blocks) and ``cross_ft``/``cross_pre`` (pairs in different halves). With ``order``, block
    ``order[i]`` (0-based over blocks 1..L) takes the place of block ``i + 1`` in both models
    (the layers-shuffled null)."""
    L = n - 1
    at = np.concatenate([[0], 1 + (np.arange(L) if order is None else np.asarray(order))])
    blocks = range(1, L + 1)
    first = set(range(1, L // 2 + 1))
    same = [(int(at[i]), int(at[j])) for i in blocks for j in blocks
            if i < j and ((i in first) == (j in first))]
    cross = [(int(at[i]), int(at[j])) for i in blocks for j in blocks
             if i < j and ((i in first) != (j in first))]
    return {"diag": [(int(at[i]), n + int(at[i])) for i in blocks],
            "same_ft": [(n + i, n + j) for i, j in same],
            "cross_ft": [(n + i, n + j) for i, j in cross], "same_pre": same,
            "cross_pre": cross}


def _cka_statistics(L: int) -> dict[str, Any]:
    """Each CKA statistic of :func:`cka_tables` as a function of the groups' CKA values."""
    n_early = min(3, L)
    return {
        "refines": lambda g: _mean0(g["diag"][:L // 2]) - _mean0(g["diag"][L // 2:]),
        "early": lambda g: _mean0(g["diag"][:n_early]),
        "two_blocks": lambda g: _mean0(g["same_ft"]) - _mean0(g["cross_ft"]),
        "two_blocks_pre": lambda g: _mean0(g["same_pre"]) - _mean0(g["cross_pre"]),
        "bow_tie": lambda g: (_mean0(g["same_ft"]) - _mean0(g["cross_ft"]))
        - (_mean0(g["same_pre"]) - _mean0(g["cross_pre"])),
    }


def cka_tables(run: Run, n_boot: int, gen: np.random.Generator
               ) -> tuple[pd.DataFrame, dict[str, tuple[float, ...]]]:
    """CKA between every pair of layers, pretrained and fine-tuned, linear and debiased.

    On the held-out examples. Returns the long matrix table (``comparison``: "pretrained",
    "fine-tuned" or "pretrained vs fine-tuned"; ``estimator``: "linear" or "debiased") and the
    claims' statistics over blocks 1..L (layer 0, the embeddings, left out as the seed looks at
    blocks), each (value, low, high, debiased value) with a bootstrap interval over the
    held-out examples (:func:`similarity.gram_cka`):

    * ``refines``: mean CKA(pretrained block l, fine-tuned block l) over the first half of the
      blocks minus over the last half;
    * ``early``: the same diagonal's mean over blocks 1-3;
    * ``two_blocks`` (fine-tuned) and ``two_blocks_pre``: mean CKA of pairs of blocks in the
      same half minus pairs in different halves; ``bow_tie``: fine-tuned minus pretrained.
    """
    n, L = run.n_layers, run.n_layers - 1
    layers = [run.before[i] for i in range(n)] + [run.after[i] for i in range(n)]
    groups = _cka_groups(n)
    pairs = [p for g in groups.values() for p in g]
    linear, reps = similarity.gram_cka(layers, pairs, n_boot, gen)
    debiased = similarity.gram_cka(layers, debiased=True)[0]
    cols, start = {}, 0
    for name, group in groups.items():
        cols[name] = slice(start, start + len(group))
        start += len(group)

    def stat(matrix: np.ndarray, replicates: np.ndarray | None, fn: Any) -> np.ndarray | float:
        if replicates is None:
            return fn({k: np.array([matrix[i, j] for i, j in g]) for k, g in groups.items()})
        return fn({k: replicates[:, cols[k]].T for k in groups})  # (pairs, replicates)

    summary: dict[str, Any] = {"linear": linear}  # the matrix, for the nulls
    for name, fn in _cka_statistics(L).items():
        value = float(stat(linear, None, fn))
        lo, hi = percentile_interval(stat(linear, reps, fn), value) if n_boot else (math.nan,
                                                                                     math.nan)
        summary[name] = (value, lo, hi, float(stat(debiased, None, fn)))
    frames = []
    for estimator, M in (("linear", linear), ("debiased", debiased)):
        for comparison, block in (("pretrained", M[:n, :n]), ("fine-tuned", M[n:, n:]),
                                  ("pretrained vs fine-tuned", M[:n, n:])):
            frames.append(pd.DataFrame({
                "layer": np.repeat(np.arange(n), n), "other_layer": np.tile(np.arange(n), n),
                "comparison": comparison, "estimator": estimator, "cka": block.ravel()}))
    return pd.concat(frames, ignore_index=True), summary


def _trend(shares: np.ndarray, point: np.ndarray) -> tuple[float, float, float]:
    """Spearman rho of the top-1 share with the block index (1..L), and its interval."""
    rho = float(spearman_rows(point[None, 1:])[0])
    lo, hi = percentile_interval(spearman_rows(shares[:, 1:]), rho)
    return rho, lo, hi


#: The share of the dimensions the top-versus-bottom ablation removes: seed 003's Fig. 6 shows
#: its effect on SST-2 from about 300 of GPT-2's 768 dimensions (removing the top 92 slightly
#: *raised* accuracy), so a contrast at 3 dimensions would fail the seed's own result.
ABLATION_SHARE = 0.4


@dataclass(frozen=True)
class FinetuningParams:
    """Every parameter of chapter 7's analysis (the keyword arguments of :func:`analyse` after
    its runs, documented there), checked once before any run is read."""

    seed: int = 0
    n_boot: int = 1000
    n_boot_cka: int = 200
    ablation_ks: Sequence[int] = (0, 1, 3, 10, 30, 100, 300)
    ablation_share: float = ABLATION_SHARE
    keep: int = 3
    overlap_k: int = 10
    tsne_points: int = 400

    def __post_init__(self) -> None:
        least = {"seed": 0, "n_boot": 0, "n_boot_cka": 0, "keep": 1, "overlap_k": 1,
                 "tsne_points": 0}
        for name, low in least.items():
            check_whole(name, getattr(self, name), low)
        if isinstance(self.ablation_ks, str):
            raise UsageError(f"ablation_ks={self.ablation_ks!r}: pass a list of whole numbers")
        for k in self.ablation_ks:
            check_whole("a value of ablation_ks", k, 0)
        object.__setattr__(self, "ablation_ks", tuple(int(k) for k in self.ablation_ks))
        share = self.ablation_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
            raise UsageError(f"ablation_share={share!r}: pass a share between 0 and 1 "
                             f"(default {ABLATION_SHARE})")


def ablation_dimensions(share: float, width: int) -> int:
    """The number of dimensions ablated: ``round(share * width)``, at least 1, below ``width``."""
    if not 0 < share < 1:
        raise ValueError(f"ablation_share must lie between 0 and 1, not {share}")
    return int(min(max(1, round(share * width)), width - 1))


def _halves(n_blocks: int) -> tuple[list[int], list[int]]:
    """Blocks 1..h and L-h+1..L, h = L // 2 (the middle block of an odd L in neither)."""
    h = n_blocks // 2
    return list(range(1, h + 1)), list(range(n_blocks - h + 1, n_blocks + 1))


def _class_separation(run: Run, y: np.ndarray, n_boot: int, gen: np.random.Generator
                      ) -> tuple[pd.DataFrame, tuple[float, ...], tuple[float, ...]]:
    """Per layer and state, the mean silhouette of the labels ``y`` among the held-out
    examples (:func:`clusters.label_silhouette_by_layer`), with intervals; the fine-tuned
    model's last half of blocks minus its first half (value, low, high, first, last); and
    that contrast minus the pretrained model's (value, low, high, pretrained contrast), both
    states on the same resampled examples."""
    n = len(y)
    counts = gen.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)
    first, last = _halves(run.n_layers - 1)
    rows, contrast = [], {}
    for state, states in zip(STATES, (run.before, run.after), strict=True):
        means, reps = clusters.label_silhouette_by_layer(states, y, counts)
        contrast[state] = (float(means[last].mean() - means[first].mean()),
                           reps[:, last].mean(axis=1) - reps[:, first].mean(axis=1),
                           float(means[first].mean()), float(means[last].mean()))
        for layer, value in enumerate(means):
            lo, hi = percentile_interval(reps[:, layer], float(value))
            rows.append({"layer": layer, "state": state, "label_silhouette": float(value),
                         "label_silhouette_lo": lo, "label_silhouette_hi": hi})
    (pre, pre_reps, *_), (ft, ft_reps, a, b) = contrast["pretrained"], contrast["fine-tuned"]
    return (pd.DataFrame(rows), (ft, *percentile_interval(ft_reps, ft), a, b),
            (ft - pre, *percentile_interval(ft_reps - pre_reps, ft - pre), pre))


def _ablation(run: Run, ks: Sequence[int], share: float, keep: int, n_boot: int,
              gen: np.random.Generator, own: np.random.Generator
              ) -> tuple[pd.DataFrame, dict[str, tuple[float, ...]]]:
    """Ablation of the last layer's top/bottom variance dimensions, scored by the model's head.

    Variance order and training mean from the fit set (training examples); the statistics:
    per mode, accuracy with the bottom ``k`` minus with the top ``k`` ablated
    (``top_vs_bottom``, ``k`` = :func:`ablation_dimensions` of ``share``) and accuracy
    unablated minus with all but the top ``keep`` ablated (``keep_top``), paired over the
    held-out examples; and accuracy with the top :data:`SEED003_HARMLESS_SHARE` of the
    dimensions zeroed minus unablated (``top_harmless``: its resamples from ``own``, so that
    the other statistics keep theirs).
    """
    X_fit, X_test = _layer(run.after_fit, -1), _layer(run.after, -1)
    d = X_fit.shape[1]
    k = ablation_dimensions(share, d)
    harmless = ablation_dimensions(SEED003_HARMLESS_SHARE, d)
    grid = sorted({q for q in ks if q < d} | {d - keep, k, harmless})
    curve = pd.concat([probes.ablation_curve(X_fit, run.y_fit, X_test, run.y_test, grid, mode,
                                             head=run.head) for mode in probes.ABLATION_MODES],
                      ignore_index=True)
    order = np.argsort(-X_fit.var(axis=0), kind="stable")
    mean = X_fit.mean(axis=0)
    full = run.head.predict(X_test) == run.y_test
    out: dict[str, tuple[float, ...]] = {}
    for mode in probes.ABLATION_MODES:
        c = {name: run.head.predict(probes.ablate(X_test, dims, mode, mean)) == run.y_test
             for name, dims in (("top", order[:k]), ("bottom", order[d - k:]),
                                ("keep", order[keep:]))}
        out[f"top_vs_bottom_{mode}"] = (*bootstrap_ci(c["bottom"].astype(float) - c["top"],
                                                      n_boot, gen),
                                        float(c["top"].mean()), float(c["bottom"].mean()))
        out[f"keep_top_{mode}"] = (*bootstrap_ci(full.astype(float) - c["keep"], n_boot, gen),
                                   float(c["keep"].mean()))
    zeroed = run.head.predict(probes.ablate(X_test, order[:harmless], "zero", mean)) == run.y_test
    out["top_harmless"] = (*bootstrap_ci(zeroed.astype(float) - full, n_boot, own),
                           float(zeroed.mean()), harmless)
    return curve, {**out, "ablation_k": k}


def run_tables(run: Run, *, seed: int = 0, n_boot: int = 1000, n_boot_cka: int = 200,
               ablation_ks: Sequence[int] = (0, 1, 3, 10, 30, 100, 300),
               ablation_share: float = ABLATION_SHARE, keep: int = 3,
               tsne_points: int = 400) -> dict[str, Any]:
    """Everything the chapter shows for one fine-tuned model on one task.

    Per layer and state (pretrained, fine-tuned), on the held-out examples: the principal
    rogue dimension, the variance share of the top 1, 3 and 10 dimensions with bootstrap
    intervals (the same resamples in every layer and state, so trends and differences get
    intervals too), the share of the mean cosine the top 1, 3 and 10 contributing dimensions
    explain (:func:`similarity.cosine_contributions`). Fine-tuned only: a
    :class:`probes.ThresholdClassifier` on the principal rogue dimension of the fit set (the
    fine-tuning run's training examples), fitted there and scored on the held-out examples,
    against the full fine-tuned model and the fit set's majority class, with paired
    bootstrap intervals. CKA (:func:`cka_tables`), ablation (``_ablation``), the last layer's
    per-dimension standard deviation and cosine contribution before and after (``profile``),
    and t-SNE of the last layer on a
    seeded sample of ``tsne_points`` held-out examples (0: none).

    Returns
    -------
    dict
        ``layers``, ``cka``, ``ablation``, ``profile``, ``tsne`` (tables) and ``summary``
        (the claims' numbers; under ``permuted``, the label-reading ones with the labels
        permuted, :func:`permuted_summary`).
    """
    gen = np.random.default_rng(seed)
    n = len(run.y_test)
    counts = gen.multinomial(n, np.full(n, 1.0 / n), size=n_boot)
    full = run.head.predict(_layer(run.after, -1)) == run.y_test
    majority = run.y_test == int(np.bincount(run.y_fit, minlength=2).argmax())
    layers, shares = _layers(run, counts, full, majority, n_boot, gen)
    separation, class_halves, class_emerge = _class_separation(
        run, run.y_test, n_boot, np.random.default_rng([seed, 7, 2]))
    layers = layers.merge(separation, on=["layer", "state"], how="left")
    cka, cka_summary = cka_tables(run, n_boot_cka, gen)
    ablation, ablation_summary = _ablation(run, ablation_ks, ablation_share, keep, n_boot, gen,
                                           np.random.default_rng([seed, 7, 1]))
    ft = layers[layers["state"] == "fine-tuned"].reset_index(drop=True)
    pre = layers[layers["state"] == "pretrained"].reset_index(drop=True)
    top1 = [f"variance_share_top1{s}" for s in ("", "_lo", "_hi")]
    exacerbated_reps = shares["fine-tuned"][:, -1, 0] - shares["pretrained"][:, -1, 0]
    exacerbated = float(ft[top1[0]].iloc[-1] - pre[top1[0]].iloc[-1])
    last = ft.iloc[-1]
    rotation = similarity.random_rotation(run.after.shape[2], seed=seed)
    profile = pd.concat([pd.DataFrame({"layer": run.n_layers - 1, "state": state,
                                       "dimension": np.arange(run.after.shape[2]),
                                       "mean": X.mean(axis=0), "std": X.std(axis=0),
                                       "cosine_contribution": similarity.cosine_contributions(X)})
                         for state, X in zip(STATES, (_layer(run.before, -1),
                                                      _layer(run.after, -1)), strict=True)],
                        ignore_index=True)
    summary = {
        **{f"cka_{name}": value for name, value in cka_summary.items()},
        "accuracy": _accuracy(full), "majority": float(majority.mean()),
        "dominance": tuple(last[f"variance_share_top3{s}"] for s in ("", "_lo", "_hi")),
        "emergence": _trend(shares["fine-tuned"][:, :, 0], ft[top1[0]].to_numpy()),
        "share_top1": ft[top1[0]].to_numpy(),
        "exacerbated": (exacerbated, *percentile_interval(exacerbated_reps, exacerbated),
                        pre[top1[0]].iloc[-1], last[top1[0]]),
        "beats_majority": tuple(last[f"threshold_minus_majority{s}"] for s in ("", "_lo", "_hi")),
        "gap": tuple(last[f"full_minus_threshold{s}"] for s in ("", "_lo", "_hi")),
        "last": last, **ablation_summary, "keep": keep, "class_halves": class_halves,
        "class_halves_emerge": class_emerge,
        "permuted": permuted_summary(run, seed=seed, n_boot=n_boot,
                                     ablation_share=ablation_share, keep=keep),
        "mean_closer": _mean_closer(_layer(run.before, -1), _layer(run.after, -1), counts),
        "rotated": _rotated_summary(_layer(run.before, -1) @ rotation,
                                    _layer(run.after, -1) @ rotation, counts),
    }
    tables = {"layers": layers, "cka": cka, "profile": profile,
              "ablation": ablation.assign(layer=run.n_layers - 1)}
    if tsne_points:
        rows = similarity.subsample(n, tsne_points, seed)
        tables["tsne"] = pd.concat([
            pd.DataFrame(np.round(clusters.tsne_project(_layer(states, -1)[rows], seed=seed), 3),
                         columns=["x", "y"]).assign(state=state, example=rows,
                                                    label=run.y_test[rows])
            for state, states in zip(STATES, (run.before, run.after), strict=True)],
            ignore_index=True)
    return tables | {"summary": summary}


def _mean_closer(before: np.ndarray, after: np.ndarray, counts: np.ndarray,
                 k: int = SEED003_KEEP) -> tuple[Any, ...]:
    """How much closer to zero fine-tuning brings the mean in the rogue dimensions.

    ``r = sum_d |mean_after_d| / sum_d |mean_before_d|`` over the ``k`` dimensions of largest
    variance after fine-tuning (seed 003's "the mean in these dimensions is much closer to
    zero in the fine-tuned models", Fig. 4), both means over the same held-out examples; the
    interval resamples the examples with ``counts`` (n_boot x n multinomial counts), the same
    draw for both states, the dimensions kept.

    Returns
    -------
    tuple
        ``(r, low, high, sum before, sum after, dimensions)``.
    """
    dims = similarity.top_dimensions(after, k)
    weights = np.asarray(counts, dtype=np.float64) / len(after)
    b, a = (np.abs(X[:, dims].mean(axis=0)).sum() for X in (before, after))
    reps = np.abs(weights @ after[:, dims]).sum(axis=1) / np.abs(
        weights @ before[:, dims]).sum(axis=1)
    ratio = float(a / b)
    return (ratio, *percentile_interval(reps, ratio), float(b), float(a),
            tuple(int(d) for d in dims))


def _rotated_summary(before: np.ndarray, after: np.ndarray, counts: np.ndarray
                     ) -> dict[str, tuple[float, ...]]:
    """The dominance, exacerbation and mean statistics of the last layer's states in a random
    orthonormal basis (the same for both states), with the same resamples: their null
    (:func:`rotated_claims`)."""
    top_after = similarity.variance_share_replicates(after, counts, (1, 3))
    top_before = similarity.variance_share_replicates(before, counts, (1,))[:, 0]
    share_before, share_after = (similarity.variance_share(X, 1) for X in (before, after))
    dominance = similarity.variance_share(after, 3)
    change = share_after - share_before
    return {"dominance": (dominance, *percentile_interval(top_after[:, 1], dominance)),
            "exacerbated": (change, *percentile_interval(top_after[:, 0] - top_before, change),
                            share_before, share_after),
            "mean_closer": _mean_closer(before, after, counts)}


def permuted_summary(run: Run, *, seed: int = 0, n_boot: int = 1000,
                     ablation_share: float = ABLATION_SHARE, keep: int = 3) -> dict[str, Any]:
    """The label-reading statistics of :func:`run_tables`, with the labels permuted: the
    claims' null.

    The labels are shuffled within the fit set and within the held-out examples
    (:func:`permute_within`: each keeps its class counts, so the majority class and its
    accuracy are the real ones). The 1-D threshold on the fit set's principal rogue dimension
    (found without labels) is fitted again on the permuted fit labels; the fine-tuned model and
    its head cannot be trained again, so their predictions, whole and ablated, are scored
    against the permuted held-out labels. The intervals draw their own resamples (a generator
    of their own), so the real ones are unchanged.

    Returns
    -------
    dict
        ``beats_majority`` and ``gap`` (value, low, high: threshold minus majority, model minus
        threshold, last layer), ``top_vs_bottom_<mode>``, ``keep_top_<mode>``,
        ``top_harmless``, ``class_halves`` and ``class_halves_emerge``, as in
        :func:`run_tables`' summary.
    """
    test = np.r_[np.zeros(len(run.y_fit), bool), np.ones(len(run.y_test), bool)]
    permuted = permute_within(np.r_[run.y_fit, run.y_test], test, seed=seed)
    null = dataclasses.replace(run, y_fit=permuted[~test], y_test=permuted[test])
    gen = np.random.default_rng([seed, PERMUTATION_STREAM])
    full = run.head.predict(_layer(run.after, -1)) == null.y_test
    majority = null.y_test == int(np.bincount(null.y_fit, minlength=2).argmax())
    row = _threshold_row(_layer(run.after_fit, -1), null.y_fit, _layer(run.after, -1),
                         null.y_test, full, majority, n_boot, gen)
    _, ablation = _ablation(null, (), ablation_share, keep, n_boot, gen,
                            np.random.default_rng([seed, PERMUTATION_STREAM, 7, 1]))
    _, class_halves, class_emerge = _class_separation(
        null, null.y_test, n_boot, np.random.default_rng([seed, PERMUTATION_STREAM, 7, 2]))
    ends = ("", "_lo", "_hi")
    return {"beats_majority": tuple(row[f"threshold_minus_majority{s}"] for s in ends),
            "gap": tuple(row[f"full_minus_threshold{s}"] for s in ends),
            "class_halves": class_halves, "class_halves_emerge": class_emerge,
            **{k: v for k, v in ablation.items() if k != "ablation_k"}}


def permuted_claims(run: Run, summary: Mapping[str, Any]) -> list[Claim]:
    """The null rows (:func:`permuted_claim`) of :func:`run_claims`' :data:`LABELLED` claims:
    the same claims on ``summary["permuted"]``."""
    rules = {THRESHOLDS[key][1] for key in LABELLED}
    return [permuted_claim(c, (c.value, c.ci_low, c.ci_high))
            for c in run_claims(run, {**summary, **summary["permuted"]}) if c.rule in rules]


#: The claims about depth that :func:`shuffled_claims` gives a null, with their statistic:
#: a key of :func:`_cka_statistics` or ``"emergence"``.
SHUFFLED = {"refines_last_half": "refines", "early_preserved": "early",
            "two_blocks": "two_blocks", "bow_tie_emerges": "bow_tie",
            "rogue_emergence": "emergence"}


def shuffled_claims(run: Run, summary: Mapping[str, Any], seed: int = 0) -> list[Claim]:
    """The null rows (:func:`.nulls.shuffled_claim`) of :func:`run_claims`' claims about depth
    (:data:`SHUFFLED`): each statistic with blocks 1..L in random orders, the same order in
    the pretrained and the fine-tuned model (CKA from ``summary["cka_linear"]``, the top-1
    variance shares from ``summary["share_top1"]``)."""
    matrix, shares = summary["cka_linear"], summary["share_top1"]
    n = len(shares)
    fns = _cka_statistics(n - 1)

    def statistic(name: str) -> Any:
        if name == "emergence":
            return lambda order: float(spearman_rows(shares[1:][order][None])[0])
        return lambda order: float(fns[name]({
            k: np.array([matrix[i, j] for i, j in g]) for k, g in _cka_groups(n, order).items()}))

    rules = {THRESHOLDS[key][1]: name for key, name in SHUFFLED.items()}
    return [shuffled_claim(c, statistic(rules[c.rule]), n - 1, seed)
            for c in run_claims(run, summary) if c.rule in rules]


def rotated_claims(run: Run, summary: Mapping[str, Any]) -> list[Claim]:
    """The null rows (:func:`.nulls.rotated_claim`) of the claims about single coordinates
    (the last layer's dominance by a few rogue dimensions, and fine-tuning exacerbating the
    top one): the same statistics of the same states in a random orthonormal basis."""
    wanted = {THRESHOLDS[key][1] for key in ("rogue_dominance", "rogue_exacerbated",
                                             "rogue_mean_closer")}
    return [rotated_claim(c, (c.value, c.ci_low, c.ci_high))
            for c in run_claims(run, {**summary, **summary["rotated"]}) if c.rule in wanted]


def _claim(key: str, run: Run, claim: str, statistic: str, interval: Sequence[float],
           direction: str, figure: str, evidence: str) -> Claim:
    threshold, rule = THRESHOLDS[key]
    value, low, high = (float(x) for x in interval[:3])
    return Claim(seed="003", claim=claim, model=run.model,
                 statistic=f"{statistic} ({run.task}, fine-tuned)", value=value, ci_low=low,
                 ci_high=high, threshold=threshold, direction=direction,  # type: ignore[arg-type]
                 rule=rule, published=PUBLISHED[key], figure=figure, evidence=evidence,
                 task=run.task)


def _cka_claims(run: Run, s: Mapping[str, Any]) -> list[Claim]:
    out = []
    for key, name, claim, statistic, direction in (
        ("refines_last_half", "refines", "fine-tuning changes the last half of the network "
         "more than the first", "mean CKA(pretrained block, same fine-tuned block), first half "
         "minus last half", "above"),
        ("early_preserved", "early", "the first three blocks are preserved by fine-tuning",
         "mean CKA(pretrained block, same fine-tuned block) over blocks 1-3", "above"),
        ("two_blocks", "two_blocks", "after fine-tuning the blocks form two halves (bow tie)",
         "mean CKA within halves minus across halves, fine-tuned", "above"),
        ("bow_tie_emerges", "bow_tie", "fine-tuning creates the two-half block structure",
         "two-half contrast, fine-tuned minus pretrained", "above"),
    ):
        v = s[f"cka_{name}"]
        evidence = f"debiased CKA: {number(v[3])}"
        if name == "bow_tie":
            evidence += (f"; contrast pretrained {number(s['cka_two_blocks_pre'][0])}, "
                         f"fine-tuned {number(s['cka_two_blocks'][0])}")
        out.append(_claim(key, run, claim, statistic, v, direction,
                          f"cka-{run.model}-{run.task}", evidence))
    return out


def run_claims(run: Run, s: Mapping[str, Any]) -> list[Claim]:
    """Seed 003's claims on one fine-tuned model and task, from :func:`run_tables`'s summary."""
    last, k, keep = s["last"], s["ablation_k"], s["keep"]
    out = _cka_claims(run, s)
    out += [
        _claim("rogue_dominance", run, "after fine-tuning a few rogue dimensions dominate the "
               "last layer", "variance share of the top 3 dimensions, last layer",
               s["dominance"], "above", "variance-share",
               f"top 1: {pct(last['variance_share_top1'], 1)} (dimension "
               f"{int(last['rogue_dim'])})"),
        _claim("rogue_emergence", run, "after fine-tuning rogue dimensions emerge in the later "
               "blocks", "Spearman rho of the top-1 variance share with the block index",
               s["emergence"], "above", "variance-share", ""),
        _claim("rogue_exacerbated", run, "fine-tuning exacerbates the rogue dimensions",
               "variance share of the top dimension, last layer, fine-tuned minus pretrained",
               s["exacerbated"], "above", "variance-share",
               f"pretrained {pct(s['exacerbated'][3], 1)}, fine-tuned "
               f"{pct(s['exacerbated'][4], 1)}"),
        _claim("rogue_mean_closer", run, "after fine-tuning the mean in the rogue dimensions "
               "is much closer to zero", "sum of |mean| over the fine-tuned last layer's top "
               f"{SEED003_KEEP} variance dimensions, fine-tuned over pretrained",
               s["mean_closer"], "below", "variance-share",
               f"dimensions {', '.join(map(str, s['mean_closer'][5]))}: summed |mean| "
               f"pretrained {number(s['mean_closer'][3])}, fine-tuned "
               f"{number(s['mean_closer'][4])}"),
        _claim("class_halves", run, "after fine-tuning the last half of the blocks separates "
               "the classes better than the first half", "mean silhouette of the labels "
               "(Euclidean) over the last half of the blocks minus over the first half",
               s["class_halves"], "above", "class-separation",
               f"first half {number(s['class_halves'][3])}, last half "
               f"{number(s['class_halves'][4])}"),
        _claim("class_halves_emerge", run, "fine-tuning creates the last half's separation of "
               "the classes", "contrast of the halves' mean label silhouette, fine-tuned "
               "minus pretrained", s["class_halves_emerge"], "above", "class-separation",
               f"contrast pretrained {number(s['class_halves_emerge'][3])}, fine-tuned "
               f"{number(s['class_halves'][0])}"),
        _claim("beats_majority", run, "beyond the paper: after fine-tuning a threshold on the "
               "principal rogue dimension beats the majority class",
               "1-D threshold accuracy minus majority baseline, last layer, held out",
               s["beats_majority"], "above", "threshold-vs-full",
               f"threshold {pct(last['threshold_accuracy'], 1)}, majority "
               f"{pct(s['majority'], 1)}"),
        _claim("threshold_gap", run, "the 1-D threshold nearly matches the full fine-tuned "
               "model", "full fine-tuned model accuracy minus 1-D threshold accuracy, held out",
               s["gap"], "below", "threshold-vs-full",
               f"model {pct(s['accuracy'][0], 1)}, threshold "
               f"{pct(last['threshold_accuracy'], 1)}"),
    ]
    for mode, words in (("zero", "zeroed, the seed's ablation"), ("mean", "set to the "
                                                                     "training mean")):
        a, kt = s[f"top_vs_bottom_{mode}"], s[f"keep_top_{mode}"]
        how = "zeroing" if mode == "zero" else "beyond the paper: mean-setting"
        out.append(_claim(
            "ablation", run, f"{how} the top-variance dimensions hurts the fine-tuned head "
            "more than the bottom ones", f"accuracy with the bottom {k} minus with the top {k} "
            f"dimensions {words}", a, "above", f"ablation-{mode}",
            f"top {k} ablated {pct(a[3], 1)}, bottom {k} {pct(a[4], 1)}, none "
            f"{pct(s['accuracy'][0], 1)}"))
        # the seed's claim keeps 3 dimensions; another number is this book's variant
        lead = how if keep == SEED003_KEEP or how.startswith("beyond") else \
            f"beyond the paper: {how}"
        out.append(_claim(
            "keep_top", run, f"{lead} all but the top {keep} variance dimensions keeps the "
            "fine-tuned head's accuracy",
            f"accuracy unablated minus with all but the top {keep} "
            f"dimensions {words}", kt, "below", f"ablation-{mode}",
            f"only the top {keep} kept: {pct(kt[3], 1)}, none ablated "
            f"{pct(s['accuracy'][0], 1)}"))
    h = s["top_harmless"]
    out.append(_claim(
        "top_harmless", run, "zeroing the top 12% of the variance dimensions barely changes "
        "the fine-tuned head's accuracy", f"accuracy with the top {int(h[4])} variance "
        "dimensions zeroed minus unablated (12% of the dimensions: the seed's 92 of GPT-2's "
        "768)", h, "above", "ablation-zero",
        f"top {int(h[4])} zeroed {pct(h[3], 1)}, none ablated {pct(s['accuracy'][0], 1)}"))
    return out


def _overlap(a: Run, b: Run, k: int, n_boot: int, gen: np.random.Generator, seed: int = 0
             ) -> tuple[dict[str, Any], Claim, Claim]:
    """Top-``k`` variance dimensions of the last layer shared by two fine-tunes of one model,
    and the claim's null: the same overlap of the same states in one random orthonormal
    basis (:func:`.nulls.rotated_claim`; shared directions stay shared, coordinates lose
    their identity), with the same resamples."""
    Xa, Xb = _layer(a.after, -1), _layer(b.after, -1)
    ca = gen.multinomial(len(Xa), np.full(len(Xa), 1.0 / len(Xa)), size=n_boot)
    cb = gen.multinomial(len(Xb), np.full(len(Xb), 1.0 / len(Xb)), size=n_boot)

    def shared(A: np.ndarray, B: np.ndarray) -> tuple[float, float, float]:
        value = similarity.top_overlap(A, B, k)
        return (value, *percentile_interval(
            similarity.top_overlap_replicates(A, B, ca, cb, k), value))

    value, lo, hi = shared(Xa, Xb)
    rotation = similarity.random_rotation(Xa.shape[1], seed=seed)
    in_random_basis = shared(Xa @ rotation, Xb @ rotation)
    pre = similarity.top_overlap(_layer(a.before, -1), _layer(b.before, -1), k)
    d = Xa.shape[1]
    row = {"model": a.model, "tasks": f"{a.task} and {b.task}", "k": k, "overlap": value,
           "overlap_lo": lo, "overlap_hi": hi, "overlap_pretrained": pre, "chance": k * k / d}
    threshold, rule = THRESHOLDS["overlap"]
    claim = Claim(seed="003", claim="the same rogue dimensions dominate after fine-tuning on "
                  "either task", model=a.model,
                  statistic=f"top-{k} variance dimensions of the last layer shared by the "
                  f"{a.task} and {b.task} fine-tunes", value=value, ci_low=lo, ci_high=hi,
                  threshold=threshold, direction="above", rule=rule,
                  published=PUBLISHED["overlap"], figure="overlap",
                  evidence=f"pretrained model on the same inputs: {pre} of {k}; chance "
                  f"{k * k / d:.2f}")
    return row, claim, rotated_claim(claim, in_random_basis)


def adequacy_gate(claims: pd.DataFrame, runs: pd.DataFrame, overlap: pd.DataFrame
                  ) -> pd.DataFrame:
    """Claims that rest on a fine-tune that did not learn its task are not a fair test.

    A fine-tuned model whose held-out accuracy interval reaches the majority baseline may not
    have learned the task at all: no claim about what fine-tuning does rests on it (its rows
    get ``applies`` False). The overlap claim rests on both fine-tunes of a model, and is no
    claim about fine-tuning when the pretrained model already shares as many dimensions.

    Parameters
    ----------
    claims : DataFrame
        The chapter's annotated claims.
    runs : DataFrame
        ``tables["runs"]`` (``model``, ``task``, ``accuracy_lo``, ``majority``).
    overlap : DataFrame
        ``tables["overlap"]`` (``model``, ``overlap``, ``overlap_pretrained``).
    """
    out = claims.copy()
    weak = {(r.model, r.task): f"the fine-tuned model's accuracy on {r.task} "
            f"({pct(r.accuracy, 1)}, 95% interval from {pct(r.accuracy_lo, 1)}) reaches the "
            f"majority baseline ({pct(r.majority, 1)}): it may not have learned the task, so no "
            "claim about fine-tuning rests on it"
            for r in runs.itertuples() if r.accuracy_lo <= r.majority}
    for i, row in out.iterrows():
        reasons = [why for (model, task), why in weak.items() if model == row["model"]
                   and (row["task"] == task
                        or row["claim"].startswith("the same rogue dimensions"))]
        if row["claim"].startswith("the same rogue dimensions"):
            same = overlap[(overlap["model"] == row["model"])
                           & (overlap["overlap"] <= overlap["overlap_pretrained"])]
            reasons += [f"the pretrained model already shares {int(r.overlap_pretrained)} of "
                        f"the top dimensions on the same inputs (fine-tuned: {int(r.overlap)}): "
                        "the overlap is not made by fine-tuning" for r in same.itertuples()]
        if reasons and row["applies"]:
            out.at[i, "applies"] = False
            out.at[i, "applies_reason"] = "; ".join(reasons)
    return out


def _runs_row(run: Run, s: Mapping[str, Any]) -> dict[str, Any]:
    settings = dict(run.info.get("settings", {}))
    log = run.info.get("log", {})
    acc, lo, hi = s["accuracy"]
    seed = {m: v["full"] / 100 for m, v in SEED003.get(run.task, {}).items()}  # shares
    return {"model": run.model, "kind": run.kind, "task": run.task, **settings,
            "train_seconds": log.get("seconds"), "examples_per_second":
            log.get("examples_per_second"), "final_loss": float(np.mean(log["loss"][-20:]))
            if log.get("loss") else math.nan, "n_fit": len(run.y_fit),
            "n_test": len(run.y_test), "accuracy": acc, "accuracy_lo": lo, "accuracy_hi": hi,
            "majority": s["majority"], "seed_gpt2": seed.get("GPT-2 (fine-tuned)"),
            "seed_bert": seed.get("BERT (fine-tuned)")}


@with_blas_threads
def analyse(runs: Sequence[Run], *, seed: int = 0, n_boot: int = 1000, n_boot_cka: int = 200,
            ablation_ks: Sequence[int] = (0, 1, 3, 10, 30, 100, 300),
            ablation_share: float = ABLATION_SHARE,
            keep: int = 3, overlap_k: int = 10, tsne_points: int = 400) -> ChapterResult:
    """Seed 003's claims on fine-tuned models, with intervals over the held-out examples.

    Parameters
    ----------
    runs : sequence of Run
        One per (model, task).
    seed : int
        Seeds every bootstrap and t-SNE.
    n_boot, n_boot_cka : int
        Bootstrap replicates of every interval, and of the CKA intervals (each costs a pass
        over every pair of layers' Gram matrices).
    ablation_ks : sequence of int
        The ablation curves' grid.
    ablation_share : float
        The share of the dimensions the top-against-bottom claim ablates
        (:data:`ABLATION_SHARE`).
    keep : int
        The dimensions kept in the "top dimensions alone" claim.
    overlap_k : int
        Top dimensions compared between a model's two fine-tunes.
    tsne_points : int
        Held-out examples in each t-SNE map (a seeded sample; 0: no maps).

    Raises
    ------
    UsageError
        A parameter out of its range (:class:`FinetuningParams`), before any run is read.

    Returns
    -------
    ChapterResult
        Tables ``runs``, ``layers``, ``cka``, ``ablation``, ``profile``, ``tsne``,
        ``overlap`` (model, task, ... first); the claims; a few sentences.
    """
    p = FinetuningParams(seed=seed, n_boot=n_boot, n_boot_cka=n_boot_cka,
                         ablation_ks=ablation_ks, ablation_share=ablation_share, keep=keep,
                         overlap_k=overlap_k, tsne_points=tsne_points)
    parts, claims, nulls, shuffled, rotated = [], [], [], [], []
    for run in runs:
        part = run_tables(run, seed=p.seed, n_boot=p.n_boot, n_boot_cka=p.n_boot_cka,
                          ablation_ks=p.ablation_ks, ablation_share=p.ablation_share,
                          keep=p.keep, tsne_points=p.tsne_points)
        parts.append(part)
        claims += run_claims(run, part["summary"])
        nulls += permuted_claims(run, part["summary"])
        shuffled += shuffled_claims(run, part["summary"], p.seed)
        rotated += rotated_claims(run, part["summary"])
    tables: dict[str, pd.DataFrame] = {"runs": pd.DataFrame(
        [_runs_row(r, p["summary"]) for r, p in zip(runs, parts, strict=True)])}
    for name in ("layers", "cka", "ablation", "profile", "tsne"):
        frames = [p[name].assign(model=r.model, task=r.task)
                  for r, p in zip(runs, parts, strict=True) if name in p]
        if frames:
            frame = pd.concat(frames, ignore_index=True)
            tables[name] = frame[["model", "task", *[c for c in frame.columns
                                                      if c not in ("model", "task")]]]
    gen = np.random.default_rng(p.seed)
    overlap = []
    by_model: dict[str, dict[str, Run]] = {}
    for run in runs:
        by_model.setdefault(run.model, {})[run.task] = run
    for tasks in by_model.values():
        if len(tasks) >= 2:
            a, b = list(tasks.values())[:2]
            row, claim, null = _overlap(a, b, p.overlap_k, p.n_boot, gen, p.seed)
            overlap.append(row)
            claims.append(claim)
            rotated.append(null)
    tables["overlap"] = pd.DataFrame(overlap, columns=["model", "tasks", "k", "overlap",
                                                       "overlap_lo", "overlap_hi",
                                                       "overlap_pretrained", "chance"])
    facts = {r.model: {"kind": r.kind} for r in runs}
    frame = adequacy_gate(calibration.annotate(claims_frame(claims), facts), tables["runs"],
                          tables["overlap"])
    frame = with_rotated(with_shuffled(with_permuted(frame, nulls), shuffled), rotated)
    return ChapterResult(tables=tables, claims=frame,
                         sentences=[*_sentences(tables["runs"], frame,
                                                {r.model: r.kind for r in runs},
                                                tables["overlap"]), *null_sentences(frame)])


def _sentences(runs: pd.DataFrame, claims: pd.DataFrame, kinds: Mapping[str, str],
               overlap: pd.DataFrame) -> list[str]:
    """The accuracy per task (with a warning where a model may be at chance), then each
    claim's verdicts per task (models named by :func:`claim_sentences`, a kind only when all
    its models agree), then the rogue-dimension overlaps beside the pretrained models'."""
    out = [f"{task}, held-out accuracy of the fine-tuned models: " + ", ".join(
        f"{r.model} {pct(r.accuracy, 1)} ({pct(r.accuracy_lo, 1)}-{pct(r.accuracy_hi, 1)})"
        for r in part.itertuples()) + "." + _near_chance(part)
        for task, part in runs.groupby("task", sort=False)]
    for task in pd.unique(runs["task"]):
        part = claims[claims["task"] == task]
        out += [f"{task}: {s}" for s in claim_sentences(part, kinds)]
    rest = claims[claims["task"] == ""]
    return out + claim_sentences(rest, kinds) + [_overlap_sentence(r) for r in
                                                 overlap.itertuples()]


def _near_chance(runs: pd.DataFrame) -> str:
    """A warning for the runs whose accuracy interval reaches the majority baseline."""
    weak = [r for r in runs.itertuples() if r.accuracy_lo <= r.majority]
    return "".join(
        f" The interval of {r.model} reaches the majority baseline ({pct(r.majority, 1)}): it "
        f"may not have learned {r.task}, so its {r.task} claims below describe a model near "
        "chance." for r in weak)


def _overlap_sentence(row: Any) -> str:
    """The rogue-dimension overlap of one model's two fine-tunes, beside its pretrained one."""
    k = int(row.k)

    def count(x: float) -> str:
        return f"{x:.0f}" if float(x).is_integer() else number(x)

    return (f"Rogue dimensions of {row.model} shared by its {row.tasks} fine-tunes (top {k} of "
            f"the last layer): {count(row.overlap)} of {k} ({count(row.overlap_lo)}-"
            f"{count(row.overlap_hi)}), against {count(row.overlap_pretrained)} of {k} for "
            f"the same model before fine-tuning ({number(row.chance)} expected by chance); an "
            "overlap the pretrained model already has was not made by fine-tuning.")


def prepare(models: Sequence[str], settings: Mapping[str, Mapping[str, Mapping[str, Any]]], *,
            tasks: Sequence[str] = ("sst2", "qnli"), n_fit: int = 256,
            progress: bool = True) -> list[Run]:
    """Fine-tune every model on every task (cached) and read the states :func:`analyse` needs.

    Parameters
    ----------
    models : sequence of str
        Model specs.
    settings : mapping
        ``settings[kind][task]``: keyword arguments of
        :class:`lmgeometry.training.settings.Settings` (the rest keep their defaults), for
        kind "encoder" or "decoder" and task "sst2" or "qnli".
    tasks : sequence of str
    n_fit : int
        Training examples of each run whose states the threshold and the ablation's variance
        order are fitted on (the first ``n_fit`` of the seeded training sample).
    progress : bool

    Returns
    -------
    list of Run
    """
    from lmgeometry.activations.heads import head_states
    from lmgeometry.io.models import pair_separator, pretrained_source
    from lmgeometry.training import finetune as ft
    from lmgeometry.training.settings import Settings

    runs = []
    for spec in models:
        kind = pretrained_source(spec)[2]
        for task in tasks:
            s = Settings(**dict(settings.get(kind, {}).get(task, {})))
            result = ft.finetune(spec, task, s, progress=progress)
            separator = pair_separator(spec) if task == "qnli" else ""
            sample = ft.task_data(task, s.train_size, s.seed, separator)
            fit = min(n_fit, len(sample.train_texts))
            before = head_states(spec, sample.test_texts, max_length=s.max_length,
                                 progress=progress)
            after = head_states(str(result.folder), sample.test_texts
                                + sample.train_texts[:fit], max_length=s.max_length,
                                label=spec, progress=progress)
            n = len(sample.test_texts)
            runs.append(Run(model=spec, kind=kind, task=TASK_NAMES[task], before=before.states,
                            after=after.states[:, :n], after_fit=after.states[:, n:],
                            y_test=sample.test_labels, y_fit=sample.train_labels[:fit],
                            head=ft.load_head(result.folder), info=result.info))
    return runs
