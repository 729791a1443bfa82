"""Where things come from: paths, data files (manifest and loaders), corpora, models.

The main names below are importable from here (``from lmgeometry.io import load_model``);
each is loaded from its module on first use (PEP 562), so importing this package imports none
of its modules. Package code imports from the modules themselves.

Modules
-------
* ``paths`` -- the cache root, the data mirror, path arguments, folders written atomically
* ``datafiles`` (+ ``manifest.json``) -- the hashed manifest, fetching, checks, data errors
* ``datasets`` -- sentence-level task tables: MNLI, STS 2012-16, STS-B, SST-2, QNLI, WiC
* ``benchmarks`` -- word benchmarks: similarity, analogy, categorisation, SemEval-2012
* ``lexical`` -- SemCor 3.0, WordNet 3.0, Brown sentences and words
* ``vectors`` -- GloVe 6B-50d and wordfreq frequencies
* ``tokenizer`` -- GPT-2's released tokenizer, checked against its known ids
* ``released`` -- Ethayarajh (2019)'s released per-layer numbers
* ``data`` -- every public name of the data modules above, under one name
* ``corpus`` -- sentences -> :class:`Corpus` (the spaCy word table) and every corpus builder
* ``models`` -- ``load_model(spec)`` for offline aliases, hub ids and local folders
* ``model_source`` -- a spec resolved once (``resolve_model`` -> ``ResolvedModel``: source,
  folder, revision, fingerprint) and where it loads from; the hub's switches
* ``model_facts`` -- what a config and its modules say about the architecture
* ``loaded_model`` -- :class:`LoadedModel` and the checks every loaded model passes
* ``memory_model`` -- a transformers model in memory as a :class:`LoadedModel`
* ``_offline`` -- the offline aliases (models shipped in PyPI packages) and their conversion
* ``files`` -- plain JSON from numpy and pandas values; readable sizes
* ``checksums`` -- content checks of cached files, paid once per file and machine
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

#: Each exported name and the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "cache_root": "lmgeometry.io.paths",
    "data_mirror": "lmgeometry.io.paths",
    "DataError": "lmgeometry.io.datafiles",
    "fetch": "lmgeometry.io.datafiles",
    "manifest": "lmgeometry.io.datafiles",
    "verify_all": "lmgeometry.io.datafiles",
    "load_mnli": "lmgeometry.io.datasets",
    "load_qnli": "lmgeometry.io.datasets",
    "load_sst2": "lmgeometry.io.datasets",
    "load_sts": "lmgeometry.io.datasets",
    "load_stsb": "lmgeometry.io.datasets",
    "load_wic": "lmgeometry.io.datasets",
    "BENCHMARKS": "lmgeometry.io.benchmarks",
    "load_benchmark": "lmgeometry.io.benchmarks",
    "load_benchmarks": "lmgeometry.io.benchmarks",
    "load_semcor": "lmgeometry.io.lexical",
    "wordnet": "lmgeometry.io.lexical",
    "glove_vectors": "lmgeometry.io.vectors",
    "gpt2_tokenizer": "lmgeometry.io.tokenizer",
    "load_ethayarajh2019": "lmgeometry.io.released",
    "Corpus": "lmgeometry.io.corpus.base",
    "word_table": "lmgeometry.io.corpus.table",
    "LoadedModel": "lmgeometry.io.loaded_model",
    "load_model": "lmgeometry.io.models",
    "models_table": "lmgeometry.io.models",
    "resolve_fingerprint": "lmgeometry.io.models",
    "resolve_model": "lmgeometry.io.model_source",
    "ResolvedModel": "lmgeometry.io.model_source",
    "from_memory": "lmgeometry.io.memory_model",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
