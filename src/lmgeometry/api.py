"""The public Python entry: the stored hidden states of your own sentences, in one call.

:func:`hidden_states` is what a user reaches for first (``lmgeometry.hidden_states``, a lazy
top-level name): it turns a model (a name, a folder, or a transformers model in memory with
its tokenizer) and a list of sentences into an activation-store entry, through the same
:func:`lmgeometry.activations.store.activations` the book uses, so the vectors are the book's
(word vectors pooled from their token pieces, every layer) and are cached the same way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmgeometry.errors import UsageError

if TYPE_CHECKING:
    from lmgeometry.activations.store import Store
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.models import LoadedModel

__all__ = ["hidden_states"]

#: What ``model`` may be, for the error that refuses anything else.
_MODEL_FORMS = ("an offline alias or hub id ('minilm-l6', 'gpt2'), a saved model folder, "
                "a transformers model with its tokenizer ((model, tokenizer), or model=... "
                "with tokenizer=...), or a LoadedModel")


def hidden_states(model: Any, sentences: Sequence[str] | Corpus, *, tokenizer: Any = None,
                  name: str | None = None, pooling: str = "mean",
                  prepend_bos: bool | None = None, too_long: str = "error",
                  dtype: str = "float16", root: str | Path | None = None,
                  progress: bool = False, backend: str = "torch") -> Store:
    """Every layer's hidden state of every word of ``sentences`` under ``model``, cached.

    The sentences become a corpus with its word table (spaCy: one row per word, with
    ``sentence_id``, ``text``, ``upos``, ...; :func:`lmgeometry.io.corpus.sentences`) and go
    through :func:`lmgeometry.activations.store.activations`: each word's vector is the mean of
    its token pieces' vectors (``pooling``), at every layer (layer 0 is the embedding output),
    and the special tokens ([CLS], [SEP], BOS) are kept apart. The result is the store entry,
    read from the cache when the same model, sentences and options were extracted before.

    A transformers model held in memory (``(model, tokenizer)``, or ``model`` with
    ``tokenizer=``) is cached too: it is fingerprinted by a sha256 over its weights (every
    ``state_dict`` tensor), its config and its tokenizer
    (:func:`lmgeometry.io.models.memory_fingerprint`), as a folder is by its files, so the same
    model gives the same entry in a later process and a changed weight gives a new one. It is
    used where it is, on its own device; a model in training mode is switched to eval mode for
    the extraction and back afterwards; it must hold float32 weights (``model.float()``).

    Parameters
    ----------
    model : str, path, (PreTrainedModel, tokenizer), PreTrainedModel or LoadedModel
        An offline alias (``"minilm-l6"``, ``"smollm2-135m"``, ...; ``lmgeometry models``), a
        Hugging Face hub id, a saved model folder, or a transformers model in memory with its
        fast tokenizer.
    sentences : sequence of str, or Corpus
        One string per sentence, kept as given (or a corpus already built with
        :mod:`lmgeometry.io.corpus`).
    tokenizer : PreTrainedTokenizerFast, optional
        The tokenizer of an in-memory ``model`` (a name or folder brings its own).
    name : str, optional
        How the store names an in-memory model (default ``"<Class> <fingerprint[:12]>"``).
    pooling : {"mean", "first", "last"}
        How a word's token pieces become one vector.
    prepend_bos : bool or None
        None: the tokenizer's own template; True/False force a decoder's BOS token.
    too_long : {"error", "skip"}
        A sentence longer than the model's window raises, or is left out (``Store.skipped``).
    dtype : {"float16", "float32"}
        Storage dtype (``Store.layer`` returns float32 either way).
    root : str or pathlib.Path, optional
        Store root; default the cache's (``$LMGEOMETRY_CACHE/activations``).
    progress : bool
        Show a progress bar while extracting.
    backend : {"torch", "onnxruntime"}
        Forward passes on torch eager (the default) or onnxruntime (``activations``).

    Returns
    -------
    Store
        ``store.words``: one row per word (``sentence_id``, ``word_index``, ``text``, ...),
        in the order of the rows of ``store.layer(i)``, a ``(n_words, width)`` float32 array
        (``i = -1``: the last layer); ``store.n_layers`` layers (blocks + 1);
        ``store.special`` and ``store.special_layer(i)`` for the special tokens.

    Raises
    ------
    UsageError
        ``model`` is none of the accepted forms, an in-memory model lacks its fast tokenizer or
        is not float32, or a tokenizer is given with a name or folder; a bad ``backend``.
    CorpusError
        ``sentences`` is empty or holds an empty sentence.
    TypeError
        ``sentences`` is one string instead of a list, not a list, or holds something other
        than a string.
    ModelSpecError, ModelLoadError
        A name or folder that names no usable model.
    SentenceTooLongError
        A sentence exceeds the model's window (``too_long="error"``).

    Examples
    --------
    >>> import lmgeometry
    >>> store = lmgeometry.hidden_states("minilm-l6", ["A bank by the river.",
    ...                                                "The bank raised its rates."])
    >>> store.n_layers, store.width
    (7, 384)
    >>> store.words["text"].tolist()[:3]
    ['A', 'bank', 'by']
    >>> bank = (store.words["text"] == "bank").to_numpy()
    >>> round(lmgeometry.self_similarity(store.layer(-1, rows=bank)), 2)
    0.89
    """
    from lmgeometry.activations.entry import check_backend
    from lmgeometry.activations.store import activations
    from lmgeometry.io import corpus as corpora

    check_backend(backend)
    texts = _check_sentences(sentences)
    loaded, restore = _model(model, tokenizer, name)
    try:
        corpus = sentences if texts is None else corpora.sentences(texts)
        return activations(loaded, corpus, pooling=pooling, prepend_bos=prepend_bos,
                           too_long=too_long, dtype=dtype, root=root, progress=progress,
                           backend=backend)
    finally:
        restore()


def _check_sentences(sentences: Any) -> list[str] | None:
    """``sentences`` as a list of texts (None for a :class:`Corpus`), checked here, before any
    model or spaCy work, so that the errors name :func:`hidden_states`."""
    from lmgeometry.io import corpus as corpora
    from lmgeometry.io.corpus.table import _check_texts

    if isinstance(sentences, corpora.Corpus):
        return None
    where = "hidden_states(model, sentences)"
    if not isinstance(sentences, Sequence):  # a dict or a set would pass as its keys
        raise TypeError(f"{where}: sentences must be a list of strings, not a "
                        f"{type(sentences).__name__}; e.g. list(sentences)")
    return _check_texts(sentences, where)


def _model(model: Any, tokenizer: Any, name: str | None) -> tuple[str | LoadedModel, Any]:
    """``model`` as :func:`activations` takes it, and what restores an in-memory model's mode.

    A name or folder stays a spec (the store loads it only on a cache miss); an in-memory
    model becomes a :class:`LoadedModel` (:func:`lmgeometry.io.models.from_memory`).
    """
    from lmgeometry.io import models

    if isinstance(model, tuple):
        if len(model) != 2:
            raise UsageError(f"hidden_states: model is a tuple of {len(model)}; pass an "
                             "in-memory model as a pair (model, tokenizer)")
        if tokenizer is not None:
            raise UsageError("hidden_states: the tokenizer is given twice; pass "
                             "(model, tokenizer), or model with tokenizer=..., not both")
        model, tokenizer = model
    if isinstance(model, str | os.PathLike):
        spec = os.fspath(model)
        if tokenizer is not None:
            raise UsageError(f"tokenizer= is for a model in memory; {spec!r} brings its own "
                             "tokenizer: leave tokenizer out")
        if name is not None:
            raise UsageError("name= is for a model in memory; a name or folder is its own name")
        models.check_spec(spec)
        return spec, lambda: None
    if isinstance(model, models.LoadedModel):
        if tokenizer is not None or name is not None:
            raise UsageError("a LoadedModel brings its own tokenizer and name: leave "
                             "tokenizer= and name= out")
        return model, lambda: None
    if not _is_transformers_model(model):
        raise UsageError(f"hidden_states: model is a {type(model).__name__}; pass "
                         f"{_MODEL_FORMS}")
    if tokenizer is None:
        raise UsageError(f"hidden_states: the in-memory {type(model).__name__} needs its "
                         "tokenizer: hidden_states((model, tokenizer), sentences) or "
                         "hidden_states(model, sentences, tokenizer=tokenizer); or save both "
                         "with save_pretrained(folder) and pass the folder")
    training = bool(model.training)
    model.eval()
    try:
        loaded = models.from_memory(model, tokenizer, name=name)
    except BaseException:
        model.train(training)
        raise
    return loaded, lambda: model.train(training)


def _is_transformers_model(model: Any) -> bool:
    """Whether ``model`` is a transformers ``PreTrainedModel`` (imported only to check one)."""
    if not hasattr(model, "state_dict") or not hasattr(model, "config"):
        return False
    from transformers import PreTrainedModel

    return isinstance(model, PreTrainedModel)
