"""One module per chapter of the book: the measures run over the chapter's activation stores.

Each chapter module has one entry point, ``analyse``, so the chapters are reached by module
(``from lmgeometry.chapters import geometry``); the names shared by every chapter are importable
from here, each loaded from its module on first use (PEP 562), so importing this package
imports none of its modules. Package code imports from the modules themselves.

Modules
-------
* ``common`` -- per-layer tables over the models' stores, the decoder controls, BLAS threads
* ``calibration`` -- every claim beside the seed's own evidence; applicability checks
* ``geometry`` (+ ``geometry_layers``, ``geometry_special``) -- chapter 1: clusters, positions
* ``part_of_speech`` -- chapter 2: POS probes and cluster purity per layer
* ``context_measures`` (+ ``context_params``, ``context_layers``, ``context_claims``,
  ``context_static``, ``context_sentences``) -- chapter 3: SelfSim, IntraSim, MEV and static
  embeddings
* ``drift`` (+ ``drift_tokens``, ``drift_matrix``, ``drift_words``, ``drift_verdicts``) --
  chapter 4: the embedding matrix W and hidden-state isotropy
* ``senses`` (+ ``senses_semcor``, ``senses_wic``, ``senses_polysemy``) -- chapter 5: senses
* ``rogue_dimensions`` -- chapter 6: CKA, rogue dimensions and 1-D classifiers
* ``finetuning`` -- chapter 7: the same measures before and after fine-tuning
* ``model_zoo`` -- chapter 8: every model on the same words
* ``sink`` -- chapter 9: massive activations and the attention sink, by intervention
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

#: Each exported name and the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "ChapterResult": "lmgeometry.chapters.common",
    "CONTROLS": "lmgeometry.chapters.common",
    "per_layer": "lmgeometry.chapters.common",
    "with_blas_threads": "lmgeometry.chapters.common",
    "SEED_CLAIMS": "lmgeometry.chapters.calibration",
    "SeedClaim": "lmgeometry.chapters.calibration",
    "annotate": "lmgeometry.chapters.calibration",
    "ContextParams": "lmgeometry.chapters.context_params",
    "GeometryResult": "lmgeometry.chapters.geometry",
    "PartOfSpeechResult": "lmgeometry.chapters.part_of_speech",
    "SensesResult": "lmgeometry.chapters.senses",
    "ZooResult": "lmgeometry.chapters.model_zoo",
    "SinkResult": "lmgeometry.chapters.sink",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
