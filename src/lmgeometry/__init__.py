"""lmgeometry: measure how language models lay out their embedding spaces.

The tree is the path a reader follows, ``model id -> activations -> measure -> figure``:

* :mod:`lmgeometry.io` -- data files, corpora (sentences -> word table), models
  (``io.models.load_model``);
* :mod:`lmgeometry.activations` -- hidden states of every word at every layer, cached on disk
  (``activations.store.activations``);
* :mod:`lmgeometry.measures` -- pure measures: arrays in, numbers out;
* :mod:`lmgeometry.claims` -- a seed's claim, its verdict on each model and its outcome;
* :mod:`lmgeometry.chapters` -- one package per chapter of the book;
* :mod:`lmgeometry.report` -- plots, figures, results files and the book pipeline.

The names a user needs first are importable from here (:data:`__all__`):
:func:`~lmgeometry.api.hidden_states`, the main measures, :func:`~lmgeometry.report.export.save`
and :func:`~lmgeometry.report.export.export_results`. They are loaded on first use (PEP 562),
so ``import lmgeometry`` imports neither torch, transformers nor pandas::

    import lmgeometry

    states = lmgeometry.hidden_states("minilm-l6", ["A bank by the river.", "The bank rose."])
    bank = (states.tokens["token"] == "bank").to_numpy()
    lmgeometry.self_similarity(states.layer(-1, rows=bank))
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

__version__ = "0.1.0"

#: Each top-level name and the module that defines it (imported on first access). The modules
#: are named by strings, not imported: the package's modules import the root (for
#: ``__version__``), so the root imports none of them (:mod:`lmgeometry._lazy` imports none).
_EXPORTS: dict[str, str] = {
    # hidden states, models, corpora and the store
    "hidden_states": "lmgeometry.api",
    "load_model": "lmgeometry.io.models",
    "open_store": "lmgeometry.activations.store",
    # interventions on a forward pass (hidden_states(..., edits=[Edit(...)], mask_keys=[0]))
    "Edit": "lmgeometry.activations.edits",
    # activations of other libraries (TransformerLens, nnsight) into the measures
    "layer_states": "lmgeometry.measures.arrays",
    # contextuality (Ethayarajh 2019)
    "self_similarity": "lmgeometry.measures.cosines",
    "intra_sentence_similarity": "lmgeometry.measures.cosines",
    "max_explainable_variance": "lmgeometry.measures.mev",
    "anisotropy_baseline": "lmgeometry.measures.baselines",
    "mean_pairwise_cosine": "lmgeometry.measures.cosines",
    "word_measures": "lmgeometry.measures.contextual",
    # isotropy (Bis et al. 2021; IsoScore)
    "isotropy_partition": "lmgeometry.measures.isotropy",
    "isoscore": "lmgeometry.measures.isoscore",
    "mean_cosine": "lmgeometry.measures.mean_cosines",
    "center": "lmgeometry.measures.centering",
    "remove_top_pcs": "lmgeometry.measures.centering",
    # similarity of representations, rogue and massive dimensions
    "linear_cka": "lmgeometry.measures.similarity",
    "cka_matrix": "lmgeometry.measures.similarity",
    "norm_ratio": "lmgeometry.measures.similarity",
    "top_dimensions": "lmgeometry.measures.similarity",
    "variance_share": "lmgeometry.measures.similarity",
    "magnitude_ratio": "lmgeometry.measures.massive",
    "massive_dimensions": "lmgeometry.measures.massive",
    # figures and results out of the book
    "save": "lmgeometry.report.export",
    "export_results": "lmgeometry.report.export",
    "results_tables": "lmgeometry.report.export",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
