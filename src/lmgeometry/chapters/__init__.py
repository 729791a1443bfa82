"""One package per chapter of the book, named as its notebook, and what the chapters share.

Each chapter package exports ``analyse`` (the measures run over the chapter's activation stores),
its parameters and the names its page uses: ``from lmgeometry.chapters import geometry`` then
``geometry.analyse(...)``. Inside a package the modules are split by idea (the measures pass,
claims, views, generated sentences); each package's docstring lists them. The names shared by
every chapter are importable from here, each loaded from its module on first use (PEP 562), so
importing this package imports none of its chapters.

Packages (chapter: notebook)
----------------------------
* ``geometry`` -- 1: per-layer projections, clusters, the first word and position manifolds
* ``part_of_speech`` -- 2: POS probes and cluster purity per layer
* ``context`` -- 3 (``03_context_measures``): SelfSim, IntraSim, MEV, static embeddings
* ``drift`` -- 4 (``04_drift_and_centering``): the embedding matrix W and hidden-state isotropy
* ``senses`` -- 5: sense separability, WiC and polysemy
* ``rogue_dimensions`` -- 6: CKA, rogue dimensions and 1-D classifiers
* ``finetuning`` -- 7: the same measures before and after fine-tuning
* ``zoo`` -- 8 (``08_model_zoo``): every model on the same words
* ``sink`` -- 9 (``09_attention_sink``): massive activations and the attention sink
* ``pair`` -- 10 (``10_controlled_pair``): an encoder and a decoder trained here

Shared modules
--------------
* ``common`` -- per-layer tables over the models' stores, the decoder controls, BLAS threads
* ``calibration`` -- every claim beside the seed's own evidence; applicability checks
* ``nulls`` -- each claim run again on its null (an untrained twin of the model)
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

#: Each exported name and the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "ChapterResult": "lmgeometry.chapters.common",
    "per_layer": "lmgeometry.chapters.common",
    "with_blas_threads": "lmgeometry.chapters.common",
    "SEED_CLAIMS": "lmgeometry.chapters.calibration",
    "SeedClaim": "lmgeometry.chapters.calibration",
    "annotate": "lmgeometry.chapters.calibration",
    "ContextParams": "lmgeometry.chapters.context.params",
    "GeometryResult": "lmgeometry.chapters.geometry.analysis",
    "PartOfSpeechResult": "lmgeometry.chapters.part_of_speech.analysis",
    "SensesResult": "lmgeometry.chapters.senses.analysis",
    "ZooResult": "lmgeometry.chapters.zoo.analysis",
    "SinkResult": "lmgeometry.chapters.sink.analysis",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
