"""Rogue dimensions, layer-by-layer CKA and one-dimension classifiers (seed 003, GPTology).

Seed 003 fine-tuned GPT-2 and BERT on SST-2 and QNLI and reported that (1) layer-by-layer CKA
shows a block structure that fine-tuning turns into a "bow tie"; (2) a few *rogue dimensions*
(Timkey & van Schijndel 2021), coordinates with far more variance than the rest, dominate the
last layers of GPT-2; (3) a threshold on the single highest-variance dimension classifies
SST-2 almost as well as the whole fine-tuned model (91.3% vs 92.8%) for GPT-2 but not for BERT
(76.0% vs 92.2%); (4) zeroing the top-variance dimensions hurts the trained classifier while
zeroing the bottom ones barely does.

The measures live in :mod:`lmgeometry.measures.similarity` and
:mod:`lmgeometry.measures.probes`; this module applies them per layer to the chapter's
pretrained (not fine-tuned) models. Beyond the seed it compares layers *across* models on the
same words, with and without the first word of each sentence, whose hidden state decoders run
without BOS blow up (attention sinks, Xiao et al. 2023; massive activations, Sun et al. 2024).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lmgeometry.measures.probes import ThresholdClassifier, fit_logistic
from lmgeometry.measures.similarity import cosine_contributions, top_dimensions, variance_share
from lmgeometry.report.prose import layer_ranges, layers_phrase, span

__all__ = [
    "ablation_findings",
    "cross_cka_findings",
    "findings",
    "layer_report",
    "SEED003_SST2",
    "sentence_vectors",
    "summary",
]








def cross_cka_findings(table: pd.DataFrame, model_a: str, model_b: str, n_rows: int,
                       n_first: int, sink_ratio: float = 10.0, low_cka: float = 0.3,
                       rogue_share: float = 0.3) -> list[str]:
    """Sentences on a :func:`cross_model_cka` table, every number read from it.

    *Sink layers* are the layers of ``model_b`` whose first-word rows have a median norm more
    than ``sink_ratio`` times the others'. Layers whose best match stays below ``low_cka``
    without first words are split by whether one dimension holds more than ``rogue_share`` of
    the variance of the remaining rows.
    """
    t = table
    sink = t[t["first_word_norm_ratio"] > sink_ratio]
    rest = t[t["first_word_norm_ratio"] <= sink_ratio]
    out = [f"Cross-model CKA ({model_a} against {model_b}) is computed on {n_rows} words, "
           f"{n_first} of them the first word of their sentence."]
    if len(sink):
        r, w = sink["first_word_norm_ratio"], sink["best_cka_without_first"]
        out.append(
            f"In {model_b} {layers_phrase(sink['layer'])} the first word's hidden state has a "
            f"median norm {span(r.min(), r.max(), '.0f')} times that of the other words. There "
            f"the best-matching {model_a} layer reaches a CKA of "
            f"{span(sink['best_cka_all'].min(), sink['best_cka_all'].max(), '.2f')} on all "
            f"words and {span(w.min(), w.max(), '.2f')} without the first words."
        )
    else:
        out.append(f"In no {model_b} layer is the first word's median norm more than "
                   f"{sink_ratio:.0f} times the other words'.")
    if len(rest):
        diff = rest["best_cka_without_first"] - rest["best_cka_all"]
        i = diff.abs().idxmax()
        out.append(
            f"In the other layer{'' if len(rest) == 1 else 's'} ({layer_ranges(rest['layer'])}) "
            f"leaving out the first words changes the best match by at most {diff[i]:+.2f} "
            f"(layer {int(rest['layer'][i])})."
        )
    low = t[t["best_cka_without_first"] < low_cka]
    if len(low):
        share = low["top_dim_variance_share_without_first"]
        rogue_low, other_low = low[share > rogue_share], low[share <= rogue_share]
        text = (f"Without the first words the best match stays below {low_cka} in {model_b} "
                f"{layers_phrase(low['layer'])}")
        if len(rogue_low):
            s_ = rogue_low["top_dim_variance_share_without_first"]
            c_ = rogue_low["best_cka_without_first_and_top_dim"]
            dims = sorted(set(rogue_low["top_dim"].astype(int)))
            text += (f"; in {layers_phrase(rogue_low['layer'])} one dimension "
                     f"({', '.join(map(str, dims))}) holds {span(s_.min(), s_.max(), '.0%')} of "
                     f"the variance of the remaining rows, and dropping it as well raises the "
                     f"best match to {span(c_.min(), c_.max(), '.2f')}")
        if len(other_low):
            s_ = other_low["top_dim_variance_share_without_first"]
            text += (f"; in {layers_phrase(other_low['layer'])} no dimension holds more than "
                     f"{s_.max():.0%} of it")
        out.append(text + ".")
    return out


def sentence_vectors(words: pd.DataFrame, layer: np.ndarray, pooling: str = "last"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """One vector per sentence from a store's word rows.

    ``"last"``: the sentence's last word (seed 003's GPT-2 representation: the last token, the
    only one a decoder lets see the whole sentence); ``"mean"``: the mean of its words (how
    sentence-transformers encoders pool). Special tokens are not in the store, so BERT's
    [CLS] is not available; say so when comparing with the seed's BERT numbers.

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


def layer_report(train_layers: Sequence[np.ndarray], y_train: np.ndarray,
                 test_layers: Sequence[np.ndarray], y_test: np.ndarray, seed: int = 0
                 ) -> pd.DataFrame:
    """Per layer: rogue-dimension statistics and 1-D versus full-representation accuracy.

    For each layer's sentence vectors: the principal rogue dimension (highest training
    variance), its share of the variance and of the mean cosine; the dimension contributing
    most to the mean cosine (Timkey & van Schijndel's sense of "rogue": a large shared mean
    rather than a large variance) and its share; the accuracy on the test sentences of a
    :class:`ThresholdClassifier` on each of the two dimensions and of a logistic head on all
    dimensions; and the majority-class baseline.
    """
    majority = float(max(np.mean(y_test), 1 - np.mean(y_test)))
    rows = []
    for layer, (Xtr, Xte) in enumerate(zip(train_layers, test_layers, strict=True)):
        dim = int(top_dimensions(Xtr, 1)[0])
        contributions = cosine_contributions(Xtr)
        total = contributions.sum()
        cos_dim = int(np.argmax(contributions))
        head = fit_logistic(np.asarray(Xtr, dtype=np.float64), y_train, seed=seed)
        threshold = ThresholdClassifier().fit(Xtr[:, dim], y_train)
        cos_threshold = ThresholdClassifier().fit(Xtr[:, cos_dim], y_train)
        rows.append({
            "layer": layer,
            "rogue_dim": dim,
            "variance_share_top1": variance_share(Xtr, 1),
            "variance_share_top3": variance_share(Xtr, 3),
            "mean_cosine": float(total),
            "cosine_share_top1": float(contributions[dim] / total) if total else float("nan"),
            "cosine_dim": cos_dim,
            "cosine_share_cosine_dim": (float(contributions[cos_dim] / total) if total
                                        else float("nan")),
            "threshold_accuracy": threshold.score(Xte[:, dim], y_test),
            "threshold_accuracy_cosine_dim": cos_threshold.score(Xte[:, cos_dim], y_test),
            "probe_accuracy": head.accuracy(np.asarray(Xte, dtype=np.float64), y_test),
            "majority_baseline": majority,
        })
    return pd.DataFrame(rows)


SEED003_SST2 = {"GPT-2 (fine-tuned)": {"threshold": 91.3, "full": 92.8},
                "BERT (fine-tuned)": {"threshold": 76.03, "full": 92.22}}
"""Seed 003's SST-2 validation accuracies (%) of the principal-rogue-dimension threshold and
of the full fine-tuned model."""


def summary(report: pd.DataFrame) -> pd.DataFrame:
    """Coarse per-model summary of :func:`layer_report` rows (with a ``model`` column).

    Rounded to whole percentages and booleans so it is stable across machines (the chapter's
    nbval-checked output).
    """
    rows = {}
    for model, r in report.groupby("model", sort=False):
        rows[model] = {
            "layers": len(r),
            "best probe accuracy (%)": round(100 * float(r["probe_accuracy"].max())),
            "best 1-D threshold beats majority": bool(
                (r["threshold_accuracy"] > r["majority_baseline"] + 0.05).any()),
            "last layer: top dimension > half the variance": bool(
                r["variance_share_top1"].iloc[-1] > 0.5),
        }
    return pd.DataFrame(rows).T


def findings(report: pd.DataFrame, model: str, ablation: pd.DataFrame | None = None
             ) -> list[str]:
    """Sentences on one model's :func:`layer_report` and :func:`ablation_curve`, from numbers."""
    last = report.iloc[-1]
    best = report.loc[report["threshold_accuracy"].idxmax()]
    gap = last["probe_accuracy"] - last["threshold_accuracy"]
    top_cos = report.loc[report["cosine_share_cosine_dim"].idxmax()]
    dominated = report[report["variance_share_top1"] > 0.5]["layer"].tolist()
    out = [
        f"**{model}**: in the last layer the principal rogue dimension ({int(last['rogue_dim'])}) "
        f"holds {last['variance_share_top1']:.1%} of the variance and "
        f"{last['cosine_share_top1']:.1%} of the mean cosine ({last['mean_cosine']:.2f}); a "
        f"threshold on it reaches {last['threshold_accuracy']:.1%} on SST-2 dev against "
        f"{last['probe_accuracy']:.1%} for a linear head on all dimensions ({gap * 100:.1f} "
        f"points apart; majority baseline {last['majority_baseline']:.1%}). The best "
        f"single-dimension threshold over layers is {best['threshold_accuracy']:.1%} "
        f"(layer {int(best['layer'])}).",
        f"The largest share of the mean cosine held by one dimension is "
        f"{top_cos['cosine_share_cosine_dim']:.0%} (dimension {int(top_cos['cosine_dim'])}, "
        f"layer {int(top_cos['layer'])}); a threshold on that dimension reaches "
        f"{top_cos['threshold_accuracy_cosine_dim']:.1%}.",
        (f"One dimension holds more than half the variance in layers {dominated}."
         if dominated else "No layer has a dimension holding more than half the variance."),
    ]
    if ablation is not None and len(ablation):
        out.extend(ablation_findings(ablation))
    return out


def ablation_findings(ablation: pd.DataFrame) -> list[str]:
    """Sentences on :func:`ablation_curve` rows (one mode or both), from the numbers."""
    labels = {"zero": "Zero ablation (seed 003's: head fitted on raw vectors, raw coordinates "
                      "set to 0)",
              "mean": "Mean ablation (coordinates set to their training mean)"}
    out = []
    for mode, part in ablation.groupby("mode", sort=False):
        a = part.set_index(["removed", "k"])["accuracy"]
        k = int(max(part["k"]))
        one = (f"; ablating only the top one, to {a[('top', 1)]:.1%}"
               if ("top", 1) in a.index else "")
        note = ("" if bool(part["head_converged"].all())
                else " (the head's optimiser did not converge)")
        out.append(
            f"{labels[str(mode)]}: ablating the {k} highest-variance dimensions of the last "
            f"layer takes the trained head from {a[('top', 0)]:.1%} to {a[('top', k)]:.1%}"
            f"{one}; ablating the {k} lowest, to {a[('bottom', k)]:.1%}{note}."
        )
    if set(ablation["mode"]) >= {"zero", "mean"}:
        wide = ablation.pivot_table(index=["removed", "k"], columns="mode", values="accuracy")
        gap = (wide["zero"] - wide["mean"]).abs()
        removed, k = gap.idxmax()
        side = "highest" if removed == "top" else "lowest"
        out.append(
            f"The two ablations differ most when the {k} {side}-variance dimensions are "
            f"ablated: {wide.loc[(removed, k), 'zero']:.1%} zeroed against "
            f"{wide.loc[(removed, k), 'mean']:.1%} mean-ablated." if gap.max() > 0 else
            "The two ablations give the same accuracy at every k."
        )
    return out
