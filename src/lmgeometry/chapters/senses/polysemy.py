"""Chapter "Senses", its polysemy pass (seed 001): self-similarity against sense and context
counts, per layer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters.common import control_rows, controls_for
from lmgeometry.chapters.senses.semcor import _interval_columns
from lmgeometry.measures.contextual import word_measures
from lmgeometry.measures.permutation import permute_within
from lmgeometry.measures.polysemy import standardised_coefficients

__all__ = [
    "CONTEXTS_PERMUTED",
    "polysemy_pass",
]

#: The key of :func:`polysemy_pass`'s replicates of the regression over WordNet words with
#: each word's count of contexts shuffled across the words (the contexts claim's null).
CONTEXTS_PERMUTED = "WordNet words, contexts permuted"


def _sense_counts(words: pd.DataFrame) -> pd.Series:
    """Each lower-cased word's WordNet sense count: the most frequent ``n_senses`` of its
    occurrences (spaCy's lemma and POS decide it); NaN without a WordNet entry (a closed-class
    POS, or a lemma WordNet lacks)."""
    key = words["text"].str.lower()
    known = words.assign(word=key).dropna(subset=["n_senses"])
    known = known[known["n_senses"].astype(float) >= 1]
    return known.groupby("word")["n_senses"].agg(lambda s: s.mode().iloc[0]).astype(float)


def polysemy_pass(store: Store, *, seed: int = 0, min_contexts: int = 5, n_boot: int = 1000
                  ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Self-similarity regressed on sense and context counts, per layer 1..L and control.

    SelfSim uses the ``corrected`` preset of :mod:`lmgeometry.measures.contextual` over the
    words in at least ``min_contexts`` distinct sentences. Two fits per layer: over the words
    with a WordNet entry (``sample = "WordNet words"``; the others are counted in
    ``n_without_entry``), and over all of them with a missing entry counted as one sense
    (``"all words, no entry = 1 sense"``, as seed 001 treats stopwords). Coefficients are
    standardised (:func:`lmgeometry.measures.polysemy.standardised_coefficients`), with a
    bootstrap over words shared by every layer.

    Returns
    -------
    table : ``model, layer, depth, control, sample, n_words, n_without_entry, r2`` and
        ``beta_senses``, ``beta_contexts`` with ``_lo/_hi``
    words : per layer (control "none"), ``word, selfsim, n_senses, n_sentences`` (WordNet
        words), for the figures
    replicates : ``(control, sample) -> (beta, replicates)`` for the claims, and
        ``(control, CONTEXTS_PERMUTED)``: the WordNet words' fit with the counts of contexts
        permuted across the words (:func:`lmgeometry.measures.permutation.permute_within`;
        the senses kept), the contexts claim's null
    """
    words = store.words
    senses_of = _sense_counts(words)
    per_control: dict[str, list[pd.DataFrame]] = {c: [] for c in controls_for(store)}
    keep = {c: control_rows(store, c) for c in per_control}
    for layer in range(1, store.n_layers):
        X = store.layer(layer)
        for control, rows in keep.items():
            t = word_measures(X[rows], words.iloc[rows], "corrected", seed,
                              min_contexts=min_contexts, measures=("selfsim",))
            per_control[control].append(t[["word", "n_sentences", "selfsim"]]
                                        .assign(layer=layer))
    frames, reps, figure = [], {}, None
    for control, tables in per_control.items():
        long = pd.concat(tables, ignore_index=True)
        wide = long.pivot(index="word", columns="layer", values="selfsim").dropna()
        contexts = long.groupby("word")["n_sentences"].first().reindex(wide.index)
        n_senses = wide.index.to_series().map(senses_of)
        if control == "none":
            figure = long.assign(n_senses=long["word"].map(senses_of)).dropna(
                subset=["n_senses"])
        for sample, use in (("WordNet words", n_senses.notna().to_numpy()),
                            ("all words, no entry = 1 sense", np.ones(len(wide), bool))):
            X = np.column_stack([np.log(n_senses.fillna(1.0).to_numpy()[use]),
                                 np.log(contexts.to_numpy()[use].astype(float))])
            beta, rep, r2 = standardised_coefficients(X, wide.to_numpy()[use], n_boot, seed)
            reps[(control, sample)] = (beta, rep)
            if sample == "WordNet words":  # the contexts claim's null: the counts shuffled
                shuffled = np.column_stack([X[:, 0], permute_within(X[:, 1], seed=(seed, 5))])
                reps[(control, CONTEXTS_PERMUTED)] = standardised_coefficients(
                    shuffled, wide.to_numpy()[use], n_boot, seed)[:2]
            cols = _interval_columns(
                {"s": (beta[0], rep[:, 0]), "c": (beta[1], rep[:, 1])},
                {"s": "beta_senses", "c": "beta_contexts"})
            layers = wide.columns.to_numpy()
            frames.append(pd.DataFrame({
                "model": store.label, "layer": layers,
                "depth": [store.depth(int(i)) for i in layers], "control": control,
                "sample": sample, "n_words": int(use.sum()),
                "n_without_entry": int(n_senses.isna().sum()), "r2": r2, **cols}))
    return pd.concat(frames, ignore_index=True), figure, reps
