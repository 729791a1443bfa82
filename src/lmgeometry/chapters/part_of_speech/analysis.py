"""Chapter "Part of speech" (seed 000): how decodable, and how clustered, a word's POS is.

Seed 000 coloured its projections by part of speech and judged by eye that BERT's clusters
"represent POS tags", especially in the middle layers. :func:`analyse` measures it for every
layer of each model, reading each layer once: the held-out accuracy of a linear probe for the
universal POS tag (UPOS, trained and tested on different sentences) against the majority tag
and against the classic context-free baseline that gives each word its most frequent training
tag, and the purity of k-means clusters against the purity the same clusters reach with
shuffled tags. Intervals are a cluster bootstrap over sentences
(:class:`lmgeometry.measures.stats.GroupBootstrap`, shared by every layer of a model); the
"best layer" is a plateau: the layers whose interval overlaps the best layer's. At layer 0,
the probe's best layer and the last, the same probe is also trained on Hewitt & Liang's
(2019) control task (:func:`control_task_measures`): its selectivity says how much of the
probe's accuracy word identity alone cannot buy.

Every claim on a probe or on the clusters also gets its null (:mod:`.nulls`): the same
statistic, at the same layers, with the tags permuted (:func:`permuted_probe_measures`, and
``purity_adjusted_permuted`` of :func:`layer_measures`); the claim that the best layer lies in
the middle third reads no tag of its own: its null is the same statistic with the layers in
random orders (:func:`.nulls.shuffled_claim`: where does the best layer fall when depth
carries no order?). With ``null_stores`` the untrained twins fill every row's null instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lmgeometry.activations.store import Store
from lmgeometry.chapters import calibration
from lmgeometry.chapters.common import (
    ChapterResult,
    check_wholes,
    control_rows,
    controls_for,
    with_blas_threads,
)
from lmgeometry.chapters.nulls import (
    null_sentences,
    permuted_claim,
    shuffled_claim,
    with_nulls,
    with_permuted,
    with_shuffled,
)
from lmgeometry.claims import Claim, claims_frame
from lmgeometry.measures.clusters import pca_project, purity_credit, unit_kmeans
from lmgeometry.measures.permutation import permute_within
from lmgeometry.measures.probes import control_task_labels, linear_probe, sentence_split
from lmgeometry.measures.similarity import subsample
from lmgeometry.measures.stats import GroupBootstrap, percentile_interval, plateau
from lmgeometry.report.claims import claim_sentences
from lmgeometry.report.prose import layers_phrase, span

__all__ = [
    "FIGURES",
    "MIDDLE_HALF_WIDTH",
    "PUBLISHED",
    "PURITY_ADJUSTED",
    "PartOfSpeechParams",
    "PartOfSpeechResult",
    "analyse",
    "control_task_measures",
    "layer_measures",
    "permuted_probe_measures",
    "plateau",
    "probe_check",
    "word_baseline",
]

#: "The middle layers": depth (layer / last layer) between 1/3 and 2/3, i.e. within 1/6 of 0.5.
#: The third is closed: a layer at depth exactly 1/3 or 2/3 is in it (the 1e-9 absorbs the
#: rounding of ``|depth - 0.5|``, which would otherwise put such layers on either side).
MIDDLE_HALF_WIDTH = 1 / 6 + 1e-9

#: Clusters "represent" the tags when their purity is at least half-way from chance to 1.
PURITY_ADJUSTED = 0.5

#: Shuffles of the tags that give the chance purity of a clustering.
N_SHUFFLES = 5

#: Figure labels of the claims' evidence.
FIGURES = {"probe": "probe-lines", "purity": "purity-lines", "selectivity": "selectivity-lines"}

#: The seed's finding (one text for every model, so that the scorecard has one row a claim).
PUBLISHED = ("BERT: POS tags are well represented, especially in the middle layers (coloured "
             "PCA views, by eye); not claimed for GPT-2, whose tags lie along the position "
             "manifold")


@dataclass(frozen=True)
class PartOfSpeechParams:
    """Every parameter of chapter 2's analysis (the keyword arguments of
    :func:`analyse`, documented there), checked once; the model pass reads its fields and
    checks nothing again."""

    seed: int = 0
    probe_words: int = 6000
    point_budget: int = 1000
    n_boot: int = 1000

    def __post_init__(self) -> None:
        check_wholes(self, {"seed": 0, "probe_words": 1, "point_budget": 1, "n_boot": 0})


@dataclass
class PartOfSpeechResult(ChapterResult):
    """:class:`ChapterResult` with the figures' arrays: per model, the drawn words and, per
    layer, their (n, 3) PCA coordinates (``views[model] = (words, coords)``; not saved)."""

    views: dict[str, tuple[pd.DataFrame, list[np.ndarray]]] = field(default_factory=dict)


def word_baseline(train_words: pd.Series, train_tags: np.ndarray, test_words: pd.Series,
                  ) -> np.ndarray:
    """The context-free tagger: each test word gets its most frequent training tag.

    Words are lower-cased; words unseen in training get the most frequent training tag. This
    is the classic baseline of POS tagging (about 90% on English newswire, Charniak et al.
    1993, "Equations for part-of-speech tagging"): a probe that beats it reads the tag from
    more than the word's identity.
    """
    frame = pd.DataFrame({"word": train_words.str.lower().to_numpy(), "tag": train_tags})
    counts = frame.groupby(["word", "tag"]).size().rename("n").reset_index()
    best = counts.sort_values(["n", "tag"], ascending=[False, True]).drop_duplicates("word")
    lookup = dict(zip(best["word"], best["tag"], strict=True))
    values, counts = np.unique(np.asarray(train_tags), return_counts=True)
    majority = values[np.argmax(counts)]  # as the probe's majority baseline: ties sort first
    return np.array([lookup.get(w, majority) for w in test_words.str.lower()], dtype=object)


def _add(row: dict, reps: dict, name: str, value: float, rep: np.ndarray) -> None:
    lo, hi = percentile_interval(rep, value)
    row.update({name: value, f"{name}_lo": lo, f"{name}_hi": hi})
    reps[name] = rep


def layer_measures(X: np.ndarray, words: pd.DataFrame, split: tuple[np.ndarray, np.ndarray],
                   baseline: np.ndarray, boot: GroupBootstrap, *, seed: int = 0
                   ) -> tuple[dict, dict]:
    """The probe and the clusters of one layer under one control, with 95% intervals.

    Parameters
    ----------
    X, words : the control's vectors and words; ``words.index`` holds their rows in ``boot``
    split : train and test rows (positions in ``words``), whole sentences on each side
    baseline : :func:`word_baseline`'s tag for each test row
    boot : the model's sentence bootstrap over the sampled words

    Returns
    -------
    row : dict
        ``probe_accuracy``, ``majority_baseline``, ``word_baseline``, ``probe_gain``
        (accuracy minus the majority baseline), ``probe_vs_word`` (minus the word baseline),
        ``cluster_purity`` (k-means, k = number of tags, unit rows), ``purity_chance`` (the
        same clusters' purity for shuffled tags, mean of :data:`N_SHUFFLES`),
        ``purity_adjusted`` (``(purity - chance) / (1 - chance)``), its null
        ``purity_adjusted_permuted`` (the same clusters against the tags permuted once,
        :func:`permute_within`, adjusted by the same chance), each with ``_lo``/``_hi``
        (bootstrap over sentences, the probe and clusters held fixed), ``n_train``,
        ``n_test``, ``converged``.
    replicates : dict
        The bootstrap replicates of each statistic.
    """
    tags = words["upos"].to_numpy()
    rows = np.asarray(words.index)
    probe = linear_probe(X, tags, words["sentence_id"].to_numpy(), split=split, seed=seed)
    test = rows[probe.test]
    row, reps = {}, {}
    measures = {"probe_accuracy": probe.correct,
                "majority_baseline": tags[probe.test] == probe.majority,
                "word_baseline": tags[probe.test] == baseline}
    for name, hits in measures.items():
        _add(row, reps, name, *boot.ratio(hits, rows=test))
    for name, other in (("probe_gain", "majority_baseline"), ("probe_vs_word", "word_baseline")):
        _add(row, reps, name, row["probe_accuracy"] - row[other],
             reps["probe_accuracy"] - reps[other])
    clusters = unit_kmeans(X, len(np.unique(tags)), seed=seed)
    rng = np.random.default_rng(seed)
    chance = np.mean([purity_credit(rng.permutation(tags), clusters)
                      for _ in range(N_SHUFFLES)], axis=0)
    _add(row, reps, "cluster_purity", *boot.ratio(purity_credit(tags, clusters), rows=rows))
    _add(row, reps, "purity_chance", *boot.ratio(chance, rows=rows))
    shuffled, shuffled_reps = boot.ratio(purity_credit(permute_within(tags, seed=seed), clusters),
                                         rows=rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, value, rep in (("purity_adjusted", row["cluster_purity"],
                                  reps["cluster_purity"]),
                                 ("purity_adjusted_permuted", shuffled, shuffled_reps)):
            _add(row, reps, name, (value - row["purity_chance"]) / (1 - row["purity_chance"]),
                 (rep - reps["purity_chance"]) / (1 - reps["purity_chance"]))
    row.update(n_train=probe.n_train, n_test=probe.n_test, converged=probe.converged)
    return row, reps


def permuted_probe_measures(X: np.ndarray, words: pd.DataFrame,
                            split: tuple[np.ndarray, np.ndarray], baseline: np.ndarray,
                            boot: GroupBootstrap, *, seed: int = 0) -> tuple[dict, dict]:
    """The probe's null: :func:`layer_measures`' probe (same features, split, regularisation
    and seed) trained and scored on the tags permuted within the training and within the
    held-out rows (:func:`permute_within`: each side keeps its tag counts, so the majority
    baseline is the real one).

    The word baseline reads no vector and keeps the real tags: the null asks what the probe
    reaches against it when the vectors say nothing of the tag. A probe with hundreds of
    dimensions fits some of the noise, so its permuted accuracy sits at or below the majority
    baseline (the book's models: 9-15% against 20%), and ``probe_vs_word_permuted`` at or below
    the majority baseline minus the word baseline.

    Parameters
    ----------
    X, words, split, baseline, boot : as for :func:`layer_measures`

    Returns
    -------
    row : dict
        ``probe_accuracy_permuted`` and ``probe_vs_word_permuted`` (minus the word baseline on
        the real tags), each with ``_lo``/``_hi`` (the same bootstrap over sentences).
    replicates : dict
        Their bootstrap replicates.
    """
    tags = words["upos"].to_numpy()
    side = np.full(len(tags), 2)
    side[split[0]], side[split[1]] = 0, 1
    probe = linear_probe(X, permute_within(tags, side, seed=seed), words["sentence_id"].to_numpy(),
                         split=split, seed=seed)
    test = np.asarray(words.index)[probe.test]
    row, reps = {}, {}
    _add(row, reps, "probe_accuracy_permuted", *boot.ratio(probe.correct, rows=test))
    word, word_reps = boot.ratio(tags[probe.test] == baseline, rows=test)
    _add(row, reps, "probe_vs_word_permuted", row["probe_accuracy_permuted"] - word,
         reps["probe_accuracy_permuted"] - word_reps)
    return row, reps


def _model_pass(store: Store, p: PartOfSpeechParams
                ) -> tuple[pd.DataFrame, pd.DataFrame, list[np.ndarray], pd.DataFrame]:
    """:func:`layer_measures` of every layer and control of one store, each layer read once.

    Returns the per-layer table, the drawn words, their per-layer PCA coordinates and the
    control task's table (:func:`_control_task_pass`).
    """
    seed = p.seed
    rows = subsample(store.n_words, p.probe_words, seed)
    words = store.words.iloc[rows].reset_index(drop=True)
    drawn = subsample(len(rows), p.point_budget, seed)
    boot = GroupBootstrap(words["sentence_id"].to_numpy(), p.n_boot, seed)
    train, test = sentence_split(words["sentence_id"].to_numpy(), seed=seed)
    plans = {}
    for control in controls_for(store):
        keep = np.isin(rows, control_rows(store, control))
        part = words[keep]
        position = np.cumsum(keep) - 1  # row in the sample -> row in the control's words
        split = (position[train[keep[train]]], position[test[keep[test]]])
        baseline = word_baseline(part["text"].iloc[split[0]], part["upos"].to_numpy()[split[0]],
                                 part["text"].iloc[split[1]])
        plans[control] = (np.flatnonzero(keep), part, split, baseline)
    table, coords, pos_reps = [], [], {}
    for layer in range(store.n_layers):
        X = store.layer(layer, rows)
        coords.append(pca_project(X[drawn], n_components=3, seed=seed)[0])
        for control, (keep, part, split, baseline) in plans.items():
            with threadpool_limits(limits=1):  # small problems: threads only contend
                row, reps = layer_measures(X[keep], part, split, baseline, boot, seed=seed)
            pos_reps[control, layer] = reps["probe_accuracy"]
            table.append({"layer": layer, "depth": store.depth(layer), "control": control,
                          **row})
    table = pd.DataFrame(table)
    control_task = _control_task_pass(store, rows, plans, table, pos_reps, boot, seed=seed)
    return table, words.iloc[drawn].reset_index(drop=True), coords, control_task


def control_task_measures(X: np.ndarray, words: pd.DataFrame,
                          split: tuple[np.ndarray, np.ndarray], control_tags: np.ndarray,
                          pos: tuple[float, np.ndarray], boot: GroupBootstrap, *, seed: int = 0
                          ) -> tuple[dict, dict]:
    """The POS probe's selectivity on one layer (Hewitt & Liang 2019, section 3).

    .. math:: \\mathrm{selectivity} = \\mathrm{acc}(\\text{POS})
              - \\mathrm{acc}(\\text{control task})

    The control probe is :func:`layer_measures`' probe (same features, regularisation, split
    and seed) trained on ``control_tags`` (:func:`control_task_labels`), whose only source is
    the word's identity: its held-out accuracy is what memorising word types buys.

    Parameters
    ----------
    X, words, split, boot : as for :func:`layer_measures`
    control_tags : the control tag of each row of ``words``
    pos : the layer's POS probe accuracy and its bootstrap replicates (``layer_measures``)

    Returns
    -------
    row : dict
        ``control_task_accuracy`` and ``selectivity``, each with ``_lo``/``_hi`` (bootstrap
        over held-out sentences, paired with the POS probe's), and ``control_converged``.
    replicates : dict
        Their bootstrap replicates.
    """
    probe = linear_probe(X, control_tags, words["sentence_id"].to_numpy(), split=split,
                         seed=seed)
    row, reps = {}, {}
    _add(row, reps, "control_task_accuracy",
         *boot.ratio(probe.correct, rows=np.asarray(words.index)[probe.test]))
    _add(row, reps, "selectivity", pos[0] - row["control_task_accuracy"],
         pos[1] - reps["control_task_accuracy"])
    row["control_converged"] = probe.converged
    return row, reps


def _control_task_pass(store: Store, rows: np.ndarray, plans: dict, layers: pd.DataFrame,
                       pos_reps: dict, boot: GroupBootstrap, *, seed: int) -> pd.DataFrame:
    """:func:`control_task_measures` at layer 0, the probe's best layer and the last, per
    control, each of those layers read once more; ``selectivity_gain`` is the selectivity
    minus layer 0's, with its paired bootstrap interval. The same layers' probe null
    (:func:`permuted_probe_measures`) gives ``probe_vs_word_permuted`` and
    ``selectivity_permuted`` (the permuted probe's accuracy minus the same control task's),
    and ``selectivity_gain_permuted``."""
    last = store.n_layers - 1
    picks = {}
    for control, sub in layers.groupby("control", sort=False):
        best = int(sub.loc[sub["probe_accuracy"].idxmax(), "layer"])  # as _plateau_claims
        picks[control] = {0: "layer 0", best: "best", last: "last"} | {best: "best"}
    out = []
    for layer in sorted(set().union(*picks.values())):
        X = store.layer(layer, rows)
        for control, (keep, part, split, baseline) in plans.items():
            if layer not in picks[control]:
                continue
            tags = control_task_labels(part["text"].str.lower(), part["upos"], seed=seed,
                                       fit_rows=split[0])
            pos = layers.set_index(["control", "layer"]).loc[(control, layer), "probe_accuracy"]
            with threadpool_limits(limits=1):
                row, reps = control_task_measures(X[keep], part, split, tags,
                                                  (pos, pos_reps[control, layer]), boot,
                                                  seed=seed)
                null, null_reps = permuted_probe_measures(X[keep], part, split, baseline, boot,
                                                          seed=seed)
            _add(null, null_reps, "selectivity_permuted",
                 null["probe_accuracy_permuted"] - row["control_task_accuracy"],
                 null_reps["probe_accuracy_permuted"] - reps["control_task_accuracy"])
            out.append({"layer": layer, "depth": store.depth(layer), "control": control,
                        "which": picks[control][layer], "probe_accuracy": pos, **row, **null,
                        "_reps": reps["selectivity"],
                        "_reps_permuted": null_reps["selectivity_permuted"]})
    return _with_gain(pd.DataFrame(out))


def _with_gain(table: pd.DataFrame) -> pd.DataFrame:
    """``selectivity_gain`` and its null ``selectivity_gain_permuted`` (each minus the same
    control's layer 0) with their paired intervals."""
    table = pd.concat([sub.sort_values("layer") for _, sub in table.groupby("control", sort=False)],
                      ignore_index=True)
    for suffix in ("", "_permuted"):
        name = f"selectivity_gain{suffix}"
        for column in (name, f"{name}_lo", f"{name}_hi"):
            table[column] = np.nan
        for _, sub in table.groupby("control", sort=False):
            zero = sub.loc[sub["layer"] == 0].iloc[0]
            for i, r in sub.iterrows():
                row: dict = {}
                _add(row, {}, name, r[f"selectivity{suffix}"] - zero[f"selectivity{suffix}"],
                     r[f"_reps{suffix}"] - zero[f"_reps{suffix}"])
                for column, value in row.items():
                    table.at[i, column] = value
    return table.drop(columns=["_reps", "_reps_permuted"])


def _plateau_claims(part: pd.DataFrame, measure: str, suffix: str = "") -> list[Claim]:
    """The claim on the best layer's value and the claim that it lies in the middle layers.

    With ``suffix="_permuted"``, the claims' nulls: the value columns with that suffix (the
    tags permuted) at the same best layer, and no middle-layer claim (it reads no tag)."""
    part = part.sort_values("layer").reset_index(drop=True)
    on = plateau(part[measure], part[f"{measure}_lo"], part[f"{measure}_hi"])
    best = part.loc[part[measure].idxmax()]
    distance = (part["depth"] - 0.5).abs()
    base = {"seed": "000", "model": str(best["model"]), "control": str(best["control"]),
            "published": PUBLISHED}
    where = (f"best layer {int(best['layer'])}; plateau {layers_phrase(part.loc[on, 'layer'])} "
             f"(depth {span(part.loc[on, 'depth'].min(), part.loc[on, 'depth'].max())})")
    if measure == "probe_accuracy":
        first = Claim(
            claim="POS tags are well represented (a linear probe beats each word's most "
                  "frequent tag)",
            statistic="probe accuracy minus the most-frequent-tag-per-word baseline, at the "
                      "best layer",
            value=best[f"probe_vs_word{suffix}"], ci_low=best[f"probe_vs_word{suffix}_lo"],
            ci_high=best[f"probe_vs_word{suffix}_hi"], threshold=0.0, direction="above",
            rule="the context-free tagger that gives each word its most frequent training "
                 "tag is POS tagging's classic baseline (Charniak et al. 1993); beating it "
                 "means the vectors carry the tag beyond the word's identity",
            figure=FIGURES["probe"],
            evidence=f"accuracy {best['probe_accuracy']:.1%}, majority baseline "
                     f"{best['majority_baseline']:.1%}, word baseline "
                     f"{best['word_baseline']:.1%}; {where}", **base)
        noun = "probe"
    else:
        first = Claim(
            claim="POS tags form clusters",
            statistic="k-means purity as a share of the way from chance (shuffled tags) to 1, "
                      "at the purest layer",
            value=best[f"purity_adjusted{suffix}"], ci_low=best[f"purity_adjusted{suffix}_lo"],
            ci_high=best[f"purity_adjusted{suffix}_hi"], threshold=PURITY_ADJUSTED,
            direction="above",
            rule="clusters represent the tags when they are at least half-way from chance "
                 "purity to pure clusters",
            figure=FIGURES["purity"],
            evidence=f"purity {best['cluster_purity']:.2f}, chance "
                     f"{best['purity_chance']:.2f}; {where}", **base)
        noun = "clusters"
    if suffix:
        return [first, _against_layer0(first, part, best, suffix)]
    middle = Claim(
        claim=f"POS is best represented in the middle layers ({noun})",
        statistic=f"distance of the best layer's depth from 0.5 ({noun}); interval over the "
                  f"plateau of layers whose interval overlaps the best's",
        value=distance[part[measure].idxmax()], ci_low=distance[on].min(),
        ci_high=distance[on].max(), threshold=MIDDLE_HALF_WIDTH, direction="below",
        rule="the middle layers are the middle third of the depth (within 1/6 of 0.5); the "
             "best layer is known only up to its plateau",
        figure=FIGURES["probe" if noun == "probe" else "purity"], evidence=where, **base)
    return [first, middle, _against_layer0(first, part, best)]


def _middle_null(part: pd.DataFrame, measure: str, middle: Claim, seed: int) -> Claim:
    """The middle-layer claim's null: the best layer's distance from depth 0.5 with the
    layers' values in random orders (:func:`.nulls.shuffled_claim`), each depth kept."""
    part = part.sort_values("layer").reset_index(drop=True)
    values = part[measure].to_numpy(dtype=float)
    distance = (part["depth"] - 0.5).abs().to_numpy(dtype=float)

    def best_distance(order: np.ndarray) -> float:
        return float(distance[int(np.argmax(np.nan_to_num(values[order], nan=-np.inf)))])

    return shuffled_claim(middle, best_distance, len(part), seed)


#: The statistic behind each first claim of :func:`_plateau_claims`, per measure.
_GAIN = {"POS tags are well represented (a linear probe beats each word's most frequent tag)":
         "probe_vs_word", "POS tags form clusters": "purity_adjusted"}


def _against_layer0(claim: Claim, part: pd.DataFrame, best: pd.Series, suffix: str = ""
                    ) -> Claim:
    """The claim's statistic at its best layer minus the same at layer 0 (the embedding
    output, before any context): what the context adds beyond the word's input vector.

    The interval is the difference of the two layers' interval bounds (best layer's lower
    minus layer 0's upper, and the reverse): wider than a joint 95% interval, so a verdict
    errs towards "inconclusive". ``suffix`` reads the statistic's null columns instead.
    """
    column = _GAIN[claim.claim] + suffix
    zero = part.loc[part["layer"] == 0].iloc[0]
    control = "against layer 0" if claim.control == "none" else f"{claim.control}, against layer 0"
    value = float(best[column] - zero[column])
    return dataclasses.replace(
        claim, control=control, value=value,
        ci_low=min(value, float(best[f"{column}_lo"] - zero[f"{column}_hi"])),
        ci_high=max(value, float(best[f"{column}_hi"] - zero[f"{column}_lo"])),
        threshold=0.0, direction="above",
        statistic=f"{claim.statistic}, minus the same at layer 0 (the embedding output)",
        rule="layer 0 already tells much of a word's tag from its piece embeddings (and, in a "
             "decoder, its position); a claim that the layers represent the tag beyond the "
             "word's identity needs the best layer above layer 0. The interval subtracts the "
             "two layers' interval bounds (conservative)",
        evidence=f"layer 0: {zero[column]:.3f}; {claim.evidence}")


#: The probe's claim, which the control task checks.
_PROBE_CLAIM = next(claim for claim, column in _GAIN.items() if column == "probe_vs_word")


def _control_task_claims(table: pd.DataFrame, suffix: str = "") -> list[Claim]:
    """Per control of one model: the probe's claim, checked with the control task.

    The statistic is the selectivity at the probe's best layer minus the selectivity at layer
    0 (``selectivity_gain``; its interval is the paired bootstrap over held-out sentences);
    ``suffix="_permuted"`` reads its null (``selectivity_gain_permuted``).
    """
    out = []
    for control, sub in table.groupby("control", sort=False):
        best = sub.loc[sub["which"] == "best"].iloc[0]
        zero, last = (sub.loc[sub["layer"] == n].iloc[0] for n in (0, sub["layer"].max()))
        out.append(Claim(
            seed="000", claim=_PROBE_CLAIM, model=str(best["model"]),
            control="control task" if control == "none" else f"{control}, control task",
            statistic="selectivity (POS probe accuracy minus the same probe's accuracy on a "
                      "control task of random tags per word type) at the probe's best layer, "
                      "minus the same at layer 0 (the embedding output)",
            value=best[f"selectivity_gain{suffix}"], ci_low=best[f"selectivity_gain{suffix}_lo"],
            ci_high=best[f"selectivity_gain{suffix}_hi"], threshold=0.0, direction="above",
            rule="Hewitt & Liang (2019): a probe's accuracy mixes what the vectors encode with "
                 "what the probe memorises; on the control task (each word type one random tag "
                 "from the training tag distribution) only memorised word identity scores, so "
                 "selectivity is the accuracy word identity cannot buy. Layer 0 is the word's "
                 "input vector: the layers carry the tag beyond the word's identity when the "
                 "best layer is more selective than layer 0. Unlike Hewitt & Liang: the "
                 "chapter's linear probe (L2, 100 L-BFGS iterations; they favour MLP probes), "
                 "Universal POS tags on a few thousand MNLI words (not the PTB's 45), "
                 "lower-cased types, fitted at layer 0, the best layer and the last only",
            published=PUBLISHED, figure=FIGURES["selectivity"],
            evidence="; ".join(f"{name}layer {int(r['layer'])}: selectivity "
                               f"{r['selectivity']:.3f} (POS {r['probe_accuracy']:.1%}, control "
                               f"task {r['control_task_accuracy']:.1%})"
                               for name, r in (("best ", best), ("", zero), ("last ", last)))))
    return out


def _permuted_claims(layers: pd.DataFrame, control_task: pd.DataFrame) -> list[Claim]:
    """One model's null rows (the tags permuted, :func:`permuted_claim`) of the probe's and
    the clusters' claims, per control: the best layer's null and the null's gain over layer 0
    (the probe's at the layers the control task reads again), and the control task's."""
    columns = [f"probe_vs_word_permuted{s}" for s in ("", "_lo", "_hi")]
    out = []
    for control, sub in layers.groupby("control", sort=False):
        probe = control_task.loc[control_task["control"] == control, ["layer", *columns]]
        sub = sub.merge(probe, on="layer", how="left")
        for measure in ("probe_accuracy", "purity_adjusted"):
            out += _plateau_claims(sub, measure, "_permuted")
    out += _control_task_claims(control_task, "_permuted")
    return [permuted_claim(c, (c.value, c.ci_low, c.ci_high)) for c in out]


def _plateau_sentence(layers: pd.DataFrame) -> str:
    """Each model's probe plateau, from the per-layer table (control "none")."""
    parts = []
    for model, part in layers[layers["control"] == "none"].groupby("model", sort=False):
        part = part.reset_index(drop=True)
        on = plateau(part["probe_accuracy"], part["probe_accuracy_lo"],
                     part["probe_accuracy_hi"])
        parts.append(f"{model} {layers_phrase(part.loc[on, 'layer'])} (depth "
                     f"{span(part.loc[on, 'depth'].min(), part.loc[on, 'depth'].max())})")
    return ("The probe's best layers (the plateau of layers whose 95% interval overlaps the "
            f"best layer's), over all words: {'; '.join(parts)}.")


@with_blas_threads
def analyse(stores: Mapping[str, Store], *, seed: int = 0, probe_words: int = 6000,
            point_budget: int = 1000, n_boot: int = 1000,
            null_stores: Mapping[str, Store] | None = None) -> PartOfSpeechResult:
    """Seed 000's part-of-speech measures and claims for every model, each layer read once.

    Parameters
    ----------
    stores : mapping of model spec -> :class:`Store`
        The same corpus for every model (so every model gets the same words and split).
    seed : int
        Seeds the word sample, the sentence split, the probes, k-means and the bootstrap.
    probe_words : int
        Words sampled (the same in every layer); a quarter of the sentences are held out.
    point_budget : int
        Of those, the words the figures draw.
    n_boot : int
        Bootstrap replicates.
    null_stores : mapping of model spec -> :class:`Store`, optional
        The models' untrained twins on the same corpus (:func:`.nulls.null_stores`): every
        claim is also computed on them with the same parameters, and each row carries its
        twin's (:func:`.nulls.with_nulls`). Without them (the default), each probe and
        cluster row carries its null with the tags permuted (:func:`.nulls.with_permuted`);
        with them, the twins fill every row's null (one null a row: the twin asks what
        training did, the harder test, and the permuted tags cost nothing to compute again).

    Raises
    ------
    UsageError
        A parameter that is not a whole number in its range (:class:`PartOfSpeechParams`).

    Returns
    -------
    PartOfSpeechResult
        ``tables["layers"]``: one row per (model, layer, control) with :func:`layer_measures`'
        columns; ``tables["selectivity"]``: per model and control, layer 0, the probe's best
        layer and the last (``which``) with :func:`control_task_measures`' columns and
        ``selectivity_gain`` (minus layer 0's); ``claims``: per model and control, the probe's
        and the clusters' claims (each: the best layer's value, and whether the plateau is in
        the middle third), and the probe's claim checked with the control task;
        ``sentences``; ``views``: the figures' arrays.
    """
    params = PartOfSpeechParams(seed=seed, probe_words=probe_words, point_budget=point_budget,
                                n_boot=n_boot)
    tables, claims, views, kinds, selectivity, nulls, shuffled = [], [], {}, {}, [], [], []
    for spec, store in stores.items():
        part, words, coords, control_task = _model_pass(store, params)
        control_task.insert(0, "model", spec)
        selectivity.append(control_task)
        views[spec] = (words, coords)
        kinds[spec] = str(store.meta.get("model", {}).get("kind", ""))
        part.insert(0, "model", spec)
        tables.append(part)
        for _, sub in part.groupby("control", sort=False):
            for measure in ("probe_accuracy", "purity_adjusted"):
                first, middle, against = _plateau_claims(sub, measure)
                claims += [first, middle, against]
                shuffled.append(_middle_null(sub, measure, middle, seed))
        claims += _control_task_claims(control_task)
        nulls += _permuted_claims(part, control_task)
    layers = pd.concat(tables, ignore_index=True)
    frame = calibration.annotate(claims_frame(claims), calibration.store_facts(stores.values()))
    frame = with_shuffled(with_permuted(frame, nulls), shuffled)
    if null_stores:
        frame = with_nulls(frame, analyse(null_stores, seed=seed, probe_words=probe_words,
                                          point_budget=point_budget, n_boot=n_boot).claims)
    return PartOfSpeechResult(
        tables={"layers": layers, "selectivity": pd.concat(selectivity, ignore_index=True)},
        claims=frame,
        sentences=[_plateau_sentence(layers), *claim_sentences(frame, kinds),
                   *null_sentences(frame)], views=views)


def probe_check(layers: pd.DataFrame) -> pd.DataFrame:
    """Per model, without a control: its layers and whether the probe beats the majority
    baseline in every layer (the whole interval of ``probe_gain`` above 0).

    Returns
    -------
    DataFrame
        ``model``, ``layers``, ``above`` (bool), models in their order in ``layers``.
    """
    rows = [{"model": spec, "layers": len(part), "above": bool((part["probe_gain_lo"] > 0).all())}
            for spec, part in layers[layers["control"] == "none"].groupby("model", sort=False)]
    return pd.DataFrame(rows, columns=["model", "layers", "above"])
