"""The public Python entry: the hidden states of your own sentences, in one call.

:func:`hidden_states` is what a user reaches for first (``lmgeometry.hidden_states``, a lazy
top-level name): it turns a model (a name, a folder, or a transformers model in memory with
its tokenizer) and a list of sentences into every token's hidden state at every layer, in
memory, through one forward pass per batch (:mod:`lmgeometry.activations.token_states`): no
disk write, no data files, no word table unless words are asked for. ``cache=True`` takes the
book's own path instead (:func:`lmgeometry.activations.store.activations`): word vectors
pooled from their token pieces, with the full word table (parts of speech and WordNet sense
counts), written to the activation store and read from it the next time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmgeometry.errors import UsageError

if TYPE_CHECKING:
    from lmgeometry.activations.store import Store
    from lmgeometry.activations.token_states import HiddenStates
    from lmgeometry.io.corpus import Corpus
    from lmgeometry.io.models import LoadedModel

__all__ = ["hidden_states"]

#: What ``model`` may be, for the error that refuses anything else.
_MODEL_FORMS = ("an offline alias or hub id ('minilm-l6', 'gpt2'), a saved model folder, "
                "a transformers model with its tokenizer ((model, tokenizer), "
                "(model, tokenizer, sentences), or model=... with tokenizer=...), or a "
                "LoadedModel")


def hidden_states(model: Any, sentences: Sequence[str] | Corpus | Any, *more: Any,
                  tokenizer: Any = None, name: str | None = None, cache: bool = False,
                  output: str = "numpy", dtype: str | None = None, words: bool = False,
                  pos: bool = False, senses: bool = False, pooling: str = "mean",
                  attention: bool = False, sublayers: bool = False,
                  prepend_bos: bool | None = None, too_long: str = "error",
                  batch_tokens: int | None = None, root: str | Path | None = None,
                  progress: bool = False, backend: str = "torch", edits: Sequence[Any] = (),
                  mask_keys: Sequence[int] = ()) -> HiddenStates | Store:
    """Every layer's hidden state of every token of ``sentences`` under ``model``.

    ``cache=False`` (the default): computed in memory, one row per token (special tokens
    flagged), every layer, numpy or torch; no disk write, no data file. Word vectors, parts of
    speech and WordNet sense counts (``words``, ``pos``, ``senses``: only ``senses`` reads the
    WordNet data), attention weights and sub-layer outputs come only when asked for.
    ``cache=True``: the book's path (word vectors with the full word table, which needs the
    WordNet data, written once to the activation store and read back by later calls). An
    in-memory model is used on its own device and dtype (float32 for ``cache=True``, where it
    is fingerprinted by its tensors), in eval mode for the call.

    Parameters
    ----------
    model : str, path, (PreTrainedModel, tokenizer), PreTrainedModel or LoadedModel
        An offline alias (``lmgeometry models``), a hub id, a saved model folder, a
        :class:`LoadedModel` (load once, call many times), or a transformers model in memory.
    sentences : sequence of str, or Corpus
        One string per sentence, kept as given (``hidden_states(model, tokenizer, sentences)``
        works too).
    tokenizer : PreTrainedTokenizerFast, optional
        An in-memory ``model``'s tokenizer.
    name : str, optional
        An in-memory model's name (default its class; in the store with its fingerprint).
    cache : bool
        False: in memory, token level (:class:`HiddenStates`). True: word level, through the
        activation store (:class:`Store`).
    output, dtype, words, pos, senses, pooling, attention, sublayers, batch_tokens, edits, \
    mask_keys
        The in-memory path's options (:func:`~lmgeometry.activations.token_states.token_states`):
        ``"numpy"`` (CPU) or ``"torch"`` (the model's device); the arrays' dtype (None:
        float32 for numpy, the model's own for torch); word vectors (spaCy's words, pooled as
        the store pools), their lemma, UPOS and tag, their WordNet sense counts; ``"mean"``,
        ``"first"`` or ``"last"`` piece of a word; every layer's attention weights per
        sentence (``result.attention(i)``); per block ``attn_out``, ``mlp_out``,
        ``resid_mid``, ``resid_post`` (``result.sublayers``); padded tokens per pass; ``Edit`` s.
    prepend_bos : bool or None
        None: the tokenizer's own template; True/False force a decoder's BOS token.
    too_long : {"error", "skip"}
        A sentence longer than the model's window raises, or is left out (``.skipped``).
    root, progress, backend
        The cached path's (:func:`lmgeometry.activations.store.activations`): store root,
        progress bar, ``"torch"`` or ``"onnxruntime"``; ``dtype`` is then the storage type.

    Returns
    -------
    HiddenStates or Store
        ``cache=False``: ``result.tokens`` (one row per token), ``result.layer(i)`` (``i = -1``:
        the last layer), ``result.states`` ``(n_layers, n_tokens, width)``; with ``words=True``
        ``result.words`` and ``result.word_layer(i)``. ``cache=True``: the store entry
        (``store.words``, ``store.layer(i)``: word rows).

    Raises
    ------
    UsageError
        A ``model`` of none of the accepted forms, an in-memory model without its fast
        tokenizer (or not float32 with ``cache=True``), an option of the other path, a bad
        ``output``, ``dtype`` or ``backend``.
    CorpusError, TypeError
        ``sentences`` empty, one string, not a list of strings, or with an empty sentence.
    ModelSpecError, ModelLoadError
        A name or folder that names no usable model.
    SentenceTooLongError
        A sentence exceeds the model's window (``too_long="error"``).
    DataUnavailable
        ``senses=True`` or ``cache=True`` without the WordNet data.

    Examples
    --------
    >>> import lmgeometry
    >>> states = lmgeometry.hidden_states("minilm-l6", ["A bank by the river.",
    ...                                                 "The bank raised its rates."])
    >>> states.n_layers, states.width
    (7, 384)
    >>> states.tokens["token"].tolist()[:4]
    ['[CLS]', 'a', 'bank', 'by']
    >>> bank = (states.tokens["token"] == "bank").to_numpy()
    >>> round(lmgeometry.self_similarity(states.layer(-1, rows=bank)), 2)
    0.89
    """
    tokenizer, sentences = _positional(sentences, more, tokenizer)
    texts = _check_sentences(sentences)
    common = {"pooling": pooling, "prepend_bos": prepend_bos, "too_long": too_long}
    fast = {"output": output, "dtype": dtype, "words": words, "pos": pos, "senses": senses,
            "attention": attention, "sublayers": sublayers, "batch_tokens": batch_tokens,
            "edits": list(edits), "mask_keys": list(mask_keys)}
    if cache:
        return _cached(model, sentences, texts, tokenizer, name, _cached_options(**fast),
                       root=root, progress=progress, backend=backend, **common)
    _memory_options(root=root, progress=progress, backend=backend)
    return _in_memory(model, sentences.sentences if texts is None else texts, tokenizer, name,
                      **fast, **common)


def _positional(sentences: Any, more: tuple[Any, ...], tokenizer: Any) -> tuple[Any, Any]:
    """``(tokenizer, sentences)`` of ``hidden_states(model, tokenizer, sentences)``."""
    if not more:
        return tokenizer, sentences
    if len(more) != 1 or tokenizer is not None:
        raise UsageError("hidden_states takes (model, sentences) or (model, tokenizer, "
                         f"sentences); got {2 + len(more)} positional arguments"
                         + (" and tokenizer=" if tokenizer is not None else ""))
    return sentences, more[0]


def _in_memory(model: Any, texts: list[str], tokenizer: Any, name: str | None,
               **options: Any) -> HiddenStates:
    """The fast path: :func:`lmgeometry.activations.token_states.token_states`."""
    from lmgeometry.activations.token_states import runner, token_states

    loaded, restore = _model(model, tokenizer, name, load=True)
    try:
        run = runner(*loaded, name=name) if isinstance(loaded, tuple) else runner(loaded)
        return token_states(run, texts, **options)
    finally:
        restore()


def _cached_options(*, output: str, dtype: str | None, **fast: Any) -> str:
    """The storage dtype of ``cache=True``; an option of the in-memory path is refused."""
    given = [k for k, v in fast.items() if v not in (False, None, [])]
    if output != "numpy":
        given.insert(0, "output")
    if given:
        raise UsageError(f"{', '.join(given)}: only with cache=False (in memory, token level); "
                         "cache=True stores word vectors with the full word table. Leave "
                         f"{' and '.join(given)} out, or pass cache=False")
    return "float16" if dtype is None else dtype


def _memory_options(**options: Any) -> None:
    """Refuse an option of the cached path without ``cache=True``."""
    given = [k for k, v in options.items() if v not in (None, False, "torch")]
    if given:
        raise UsageError(f"{', '.join(given)}: only with cache=True (the activation store); "
                         f"pass cache=True, or leave {' and '.join(given)} out")


def _cached(model: Any, sentences: Any, texts: list[str] | None, tokenizer: Any,
            name: str | None, dtype: str, **options: Any) -> Store:
    """The book's path: the corpus with its word table, through the activation store."""
    from lmgeometry.activations.entry import check_backend
    from lmgeometry.activations.store import activations
    from lmgeometry.io import corpus as corpora

    check_backend(options["backend"])
    loaded, restore = _model(model, tokenizer, name, load=False)
    try:
        if isinstance(loaded, tuple):
            loaded = _fingerprinted(*loaded, name)
        corpus = sentences if texts is None else corpora.sentences(texts)
        return activations(loaded, corpus, dtype=dtype, **options)
    finally:
        restore()


def _check_sentences(sentences: Any) -> list[str] | None:
    """``sentences`` as a list of texts (None for a :class:`Corpus`), checked here, before any
    model or spaCy work, so that the errors name :func:`hidden_states`."""
    from lmgeometry.io import corpus as corpora
    from lmgeometry.io.corpus.table import check_texts

    if isinstance(sentences, corpora.Corpus):
        return None
    where = "hidden_states(model, sentences)"
    if not isinstance(sentences, Sequence):  # a dict or a set would pass as its keys
        raise TypeError(f"{where}: sentences must be a list of strings, not a "
                        f"{type(sentences).__name__}; e.g. list(sentences)")
    return check_texts(sentences, where)


def _model(model: Any, tokenizer: Any, name: str | None, *, load: bool
           ) -> tuple[str | LoadedModel | tuple[Any, Any], Any]:
    """``model`` checked, and what restores an in-memory model's mode afterwards.

    A name or folder stays a spec for the store (which loads it only on a cache miss), or is
    loaded (``load=True``); a :class:`LoadedModel` is used as it is; an in-memory model
    becomes the pair ``(model, tokenizer)``, switched to eval mode until the restore.
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
        # the in-memory path caches nothing: no file is hashed, no checksum memo written
        return (models.load_model(spec, fingerprint=False) if load else spec), lambda: None
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
                         "tokenizer: hidden_states((model, tokenizer), sentences), "
                         "hidden_states(model, tokenizer, sentences) or "
                         "hidden_states(model, sentences, tokenizer=tokenizer); or save both "
                         "with save_pretrained(folder) and pass the folder")
    training = bool(model.training)
    model.eval()
    return (model, tokenizer), lambda: model.train(training)


def _fingerprinted(model: Any, tokenizer: Any, name: str | None) -> LoadedModel:
    """An in-memory model as the store takes it: fingerprinted by its tensors
    (:func:`lmgeometry.io.models.from_memory`)."""
    from lmgeometry.io import models

    return models.from_memory(model, tokenizer, name=name)


def _is_transformers_model(model: Any) -> bool:
    """Whether ``model`` is a transformers ``PreTrainedModel`` (imported only to check one)."""
    if not hasattr(model, "state_dict") or not hasattr(model, "config"):
        return False
    from transformers import PreTrainedModel

    return isinstance(model, PreTrainedModel)
