"""Hidden states: word/piece alignment, batched extraction and the on-disk activation store.

The main names below are importable from here (``from lmgeometry.activations import
activations``); each is loaded from its module on first use (PEP 562), so importing this
package imports none of its modules. Package code imports from the modules themselves.

Modules
-------
* ``align`` -- which token pieces make up each word (fast-tokenizer offsets vs the word table)
* ``extract`` -- tokenise, batch by length, run the model, pool pieces into word vectors
* ``store`` -- an entry of the on-disk store: keyed, built (locally or with Ray), verified
* ``reader`` -- reading an entry: :class:`Store`, its layers as memory maps or float32
* ``entry`` -- writing one entry's arrays, tables and ``meta.json``
* ``integrity`` -- an entry's files against its ``meta.json``; checksums on demand
* ``distributed`` -- ``--engine ray``: shards of a corpus extracted by a pool of workers
* ``maintenance`` -- what the store holds, and what can go
* ``heads`` -- every layer's hidden state at the token a classification head reads
* ``interventions`` -- token-level states, attention to the first position, LM loss
* ``lm_loss`` -- a decoder's language-model loss with and without its BOS token
"""

from __future__ import annotations

from lmgeometry._lazy import lazy_exports as _lazy_exports

#: Each exported name and the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "align_sentence": "lmgeometry.activations.align",
    "extract_words": "lmgeometry.activations.extract",
    "activations": "lmgeometry.activations.store",
    "verify_entries": "lmgeometry.activations.store",
    "Store": "lmgeometry.activations.reader",
    "LayerView": "lmgeometry.activations.reader",
    "open_store": "lmgeometry.activations.reader",
    "list_entries": "lmgeometry.activations.maintenance",
    "head_states": "lmgeometry.activations.heads",
    "HeadStates": "lmgeometry.activations.heads",
    "run_tokens": "lmgeometry.activations.interventions",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, globals())
