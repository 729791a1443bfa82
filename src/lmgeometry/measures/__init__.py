"""Pure measures: arrays in, numbers out (no file or model I/O, no prose, no plotting).

The main names below are importable from here (``from lmgeometry.measures import
self_similarity``); each is loaded from its module on first use (PEP 562), so importing this
package imports none of its modules. Package code imports from the modules themselves.

Modules
-------
* ``unit_rows`` -- a layer's rows normalised once, streamed in chunks, summed by group
* ``cosines`` -- SelfSim of a word and IntraSim of a sentence (Ethayarajh 2019, eqs. 1-2)
* ``mev`` -- maximum explainable variance (Ethayarajh 2019, eq. 3) and top eigenpairs
* ``baselines`` -- anisotropy baselines: random pairs of word vectors (Ethayarajh 2019, 3.4)
* ``contextual`` -- SelfSim, IntraSim and MEV of a whole layer, raw and adjusted, with presets
* ``static`` -- static embeddings from contextual ones: each word's PC1 or mean vector, from
  all or k of its contexts
* ``tokens`` -- seed 000's token-level similarities and nearest neighbours
* ``isotropy`` -- partition-function isotropy I(W) and Table 1 statistics (Biš et al. 2021)
* ``centering`` -- centring, scaled centring and removing the top PCs of W
* ``isoscore`` -- IsoScore of a point cloud (Rudman et al. 2022)
* ``mean_cosines`` -- mean cosines from sums of unit rows, by group and frequency bin
* ``shift`` -- the mean cosine a cloud's mean vector alone predicts
* ``spectra`` -- singular values, 2-D projections and row norms of W
* ``similarity`` -- norms, linear CKA, rogue dimensions and their replicates
* ``massive`` -- massive activations: dimensions far above the median
* ``clusters`` -- projections, cluster detection and separation, variance explained
* ``probes`` -- linear probes, 1-D thresholds, logistic heads, ablations, control tasks
* ``permutation`` -- labels permuted within groups: the null of a statistic that reads labels
* ``senses`` -- 1-NN sense separability and silhouettes of one word's senses
* ``wic`` -- the Word-in-Context task by a similarity threshold
* ``polysemy`` -- self-similarity regressed on sense and context counts
* ``transforms`` -- a layer's vectors as the sense measures see them
* ``word_lookup`` -- a static embedding and how a benchmark's words find their vectors
* ``word_similarity``, ``analogies``, ``categorisation``, ``semeval2012`` -- word benchmarks
* ``wordbench`` -- the word benchmarks run together under one protocol
* ``reference_tables`` -- the seeds' published numbers on word benchmarks
* ``stats`` -- bootstrap, jackknife and Wilson intervals, Spearman trends, the verdict rule
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

#: Each exported name and the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "UnitRows": "lmgeometry.measures.unit_rows",
    "self_similarity": "lmgeometry.measures.cosines",
    "intra_sentence_similarity": "lmgeometry.measures.cosines",
    "mean_pairwise_cosine": "lmgeometry.measures.cosines",
    "max_explainable_variance": "lmgeometry.measures.mev",
    "anisotropy_baseline": "lmgeometry.measures.baselines",
    "Estimators": "lmgeometry.measures.contextual",
    "PRESETS": "lmgeometry.measures.contextual",
    "context_measures": "lmgeometry.measures.contextual",
    "context_tables": "lmgeometry.measures.contextual",
    "word_measures": "lmgeometry.measures.contextual",
    "static_embeddings": "lmgeometry.measures.static",
    "token_measures": "lmgeometry.measures.tokens",
    "isotropy_partition": "lmgeometry.measures.isotropy",
    "embedding_statistics": "lmgeometry.measures.isotropy",
    "center": "lmgeometry.measures.centering",
    "remove_top_pcs": "lmgeometry.measures.centering",
    "mean_cosine": "lmgeometry.measures.mean_cosines",
    "shift_cosine": "lmgeometry.measures.shift",
    "singular_values": "lmgeometry.measures.spectra",
    "linear_cka": "lmgeometry.measures.similarity",
    "cka_matrix": "lmgeometry.measures.similarity",
    "norm_ratio": "lmgeometry.measures.similarity",
    "top_dimensions": "lmgeometry.measures.similarity",
    "variance_share": "lmgeometry.measures.similarity",
    "magnitude_ratio": "lmgeometry.measures.massive",
    "massive_dimensions": "lmgeometry.measures.massive",
    "detect_clusters": "lmgeometry.measures.clusters",
    "variance_explained_by": "lmgeometry.measures.clusters",
    "linear_probe": "lmgeometry.measures.probes",
    "permute_within": "lmgeometry.measures.permutation",
    "sense_separability": "lmgeometry.measures.senses",
    "evaluate_wic": "lmgeometry.measures.wic",
    "polysemy_regression": "lmgeometry.measures.polysemy",
    "score_all": "lmgeometry.measures.wordbench",
    "GroupBootstrap": "lmgeometry.measures.stats",
    "bootstrap_ci": "lmgeometry.measures.stats",
    "verdict": "lmgeometry.measures.stats",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
