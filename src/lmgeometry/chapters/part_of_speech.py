"""Chapter "Part of speech" (seed 000): how decodable is a word's POS from each layer.

Seed 000 coloured projections by part of speech and judged by eye that BERT's clusters
"represent POS tags". :func:`probe_by_layer` measures it with the sentence-split linear probe
and cluster purity of :mod:`lmgeometry.measures.probes`.
"""

from __future__ import annotations

import pandas as pd

from lmgeometry.measures.clusters import cluster_purity
from lmgeometry.measures.probes import linear_probe
from lmgeometry.measures.similarity import subsample

__all__ = [
    "findings",
    "probe_by_layer",
]


def probe_by_layer(store, spec: str, n_words: int, seed: int = 0) -> pd.DataFrame:
    """UPOS :func:`linear_probe` and :func:`cluster_purity` on every layer of a store.

    ``store`` is a :class:`lmgeometry.activations.store.Store`; at most ``n_words`` words are
    sampled (seeded, the same in every layer) and split by sentence. One row per layer: ``model``,
    ``layer``, ``depth`` (layer / last layer), ``probe_accuracy``, ``majority_baseline``,
    ``cluster_purity``, ``n_train``, ``n_test``.
    """

    rows = subsample(len(store.words), n_words, seed)
    words = store.words.iloc[rows]
    upos = words["upos"].to_numpy()
    sentence = words["sentence_id"].to_numpy()
    last = max(store.n_layers - 1, 1)
    table = []
    for layer in range(store.n_layers):
        X = store.layer(layer, rows)
        probe = linear_probe(X, upos, sentence, seed=seed)
        table.append(
            {
                "model": spec,
                "layer": layer,
                "depth": layer / last,
                "probe_accuracy": probe.accuracy,
                "majority_baseline": probe.majority_baseline,
                "cluster_purity": cluster_purity(X, upos, seed=seed),
                "n_train": probe.n_train,
                "n_test": probe.n_test,
            }
        )
    return pd.DataFrame(table)


def findings(table: pd.DataFrame) -> list[str]:
    """Sentences stating what the per-layer probe table shows, generated from the numbers.

    ``table`` has columns model, layer, probe_accuracy, majority_baseline, cluster_purity.
    Layer 0 is (nearly) the word's context-free embedding, so its accuracy is what the word's
    identity alone gives; the gain of the best layer over it is what context adds.
    """
    out = []
    for model, part in table.groupby("model", sort=False):
        best = part.loc[part["probe_accuracy"].idxmax()]
        first, last = part.iloc[0], part.iloc[-1]
        purest = part.loc[part["cluster_purity"].idxmax()]
        above = (part["probe_accuracy"] > part["majority_baseline"]).all()
        gain = best["probe_accuracy"] - first["probe_accuracy"]
        out.append(
            f"**{model}**: the UPOS probe is most accurate at layer {int(best['layer'])} of "
            f"{int(part['layer'].max())} ({best['probe_accuracy']:.1%}, against a majority "
            f"baseline of {best['majority_baseline']:.1%}); it scores "
            f"{first['probe_accuracy']:.1%} at layer 0, where a vector carries little beyond "
            f"the word itself, so context adds {100 * gain:.1f} points at best, and "
            f"{last['probe_accuracy']:.1%} at the last layer. It "
            f"{'beats' if above else 'does not beat'} the baseline in every layer. "
            f"Unsupervised k-means clusters are purest at layer {int(purest['layer'])} "
            f"(purity {purest['cluster_purity']:.2f}; a single cluster would score the "
            f"majority share, about {purest['majority_baseline']:.2f}) and least pure at layer "
            f"{int(part.loc[part['cluster_purity'].idxmin(), 'layer'])} "
            f"({part['cluster_purity'].min():.2f})."
        )
    return out
