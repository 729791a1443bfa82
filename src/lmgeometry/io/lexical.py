"""Lexical resources: SemCor 3.0 with WordNet 3.0 sense keys, NLTK's WordNet reader, sense
counts and labels, and the Brown corpus as sentences and words.

Each reads the mirror's verified files (:func:`lmgeometry.io.datafiles.fetch`); WordNet
sense glosses for figure labels come from :func:`sense_labels`.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import tarfile
import time
import warnings
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pandas as pd

from lmgeometry.io import paths

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

from lmgeometry.errors import DataError, DataUnavailable
from lmgeometry.io.datafiles import (
    _entries,
    _entry,
    _file_sha256,
    _publish,
    _save_memo,
    _temp_beside,
    fetch,
)

__all__ = [
    "brown_sentences",
    "brown_words",
    "load_semcor",
    "n_senses",
    "semcor_sense_counts",
    "sense_labels",
    "wordnet",
]

log = logging.getLogger(__name__)

# Bump when the SemCor table changes shape, so cached parquet files from older code are ignored.
_SEMCOR_FORMAT = 1


def _parse_naf(fh: IO[bytes], doc: str) -> list[tuple[int, str, str | None, str | None,
                                                       str | None]]:
    """(sentence number, text, lemma, pos, sense key) for every token of one NAF document."""
    root = ET.parse(fh).getroot()
    text_layer, term_layer = root.find("text"), root.find("terms")
    if text_layer is None or term_layer is None:
        raise ValueError(f"SemCor {doc}: no <text> or <terms> layer; not the expected NAF file")
    annotation: dict[str, tuple[str | None, str | None, str | None]] = {}
    for term in term_layer.iter("term"):
        targets = [t.get("id") for t in term.iterfind("span/target")]
        if len(targets) != 1 or targets[0] in annotation:
            raise ValueError(f"SemCor {doc}: term {term.get('id')} spans {targets}; the parser "
                             "expects exactly one token per term")
        refs = {r.get("reftype"): r.get("reference")
                for r in term.iterfind("externalReferences/externalRef")}
        lemma = term.get("lemma")
        # Only annotations the converter mapped to a WordNet 3.0 synset carry a valid 3.0
        # sense key; the others are WordNet 1.6 keys absent from 3.0.
        key = (f"{lemma.lower()}%{refs['lexical_key']}"
               if lemma and "synset" in refs and refs.get("lexical_key") else None)
        annotation[str(targets[0])] = (lemma, term.get("pos"), key)
    tokens = []
    for wf in text_layer.iter("wf"):
        lemma, pos, key = annotation.get(str(wf.get("id")), (None, None, None))
        tokens.append((int(wf.get("sent", "0")), wf.text or "", lemma, pos, key))
    return tokens


def _parse_semcor(tarball: Path) -> pd.DataFrame:
    docs: dict[str, list[tuple[int, str, str | None, str | None, str | None]]] = {}
    with tarfile.open(tarball, mode="r:xz") as tar:
        for member in tar:  # sequential: random access into an xz stream is slow
            if not (member.isfile() and member.name.endswith(".naf")):
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            doc = member.name.removeprefix("semcor3.0/").removesuffix(".naf")
            docs[doc] = _parse_naf(fh, doc)
    if not docs:
        raise ValueError(f"{tarball}: no .naf documents found")
    cols: dict[str, list[Any]] = {k: [] for k in ("doc", "sentence_id", "token_index", "text",
                                                  "lemma", "pos", "sense_key")}
    sentence_id = -1
    for doc in sorted(docs):
        previous = None
        for sent, text, lemma, pos, key in docs[doc]:
            if sent != previous:
                sentence_id += 1
                token_index = 0
                previous = sent
            cols["doc"].append(doc)
            cols["sentence_id"].append(sentence_id)
            cols["token_index"].append(token_index)
            cols["text"].append(text)
            cols["lemma"].append(lemma)
            cols["pos"].append(pos)
            cols["sense_key"].append(key)
            token_index += 1
    frame = pd.DataFrame(cols)
    return frame.astype({"doc": "category", "sentence_id": "int32", "token_index": "int32",
                         "pos": "category"})


def load_semcor() -> pd.DataFrame:
    """SemCor 3.0 (Miller et al., 1993) with WordNet 3.0 sense keys, one row per token.

    Parsed once from the NAF XML tarball (about 25 s on one core) into a parquet table in
    ``cache_dir("data")/derived``, keyed by the tarball's sha256 and written atomically; later
    calls read the table (under a second).

    Returns
    -------
    pandas.DataFrame
        778,587 rows from 352 documents (37,176 sentences), ordered by document, sentence and
        token:

        ``doc`` (category)
            e.g. ``"brown1/br-a01"``; ``brown1`` and ``brown2`` tag all open-class words,
            ``brownv`` only verbs.
        ``sentence_id`` (int32)
            global sentence number over the documents in name order.
        ``token_index`` (int32)
            position of the token in its sentence.
        ``text`` (str)
            the token as in SemCor; multiword expressions are one token joined by ``_``
            (``"Fulton_County_Grand_Jury"``).
        ``lemma``, ``pos`` (str or None)
            SemCor's lemma and Penn tag (``NN``, ``NNP``, ``VB``, ``JJ``, ``RB``, ``DT`` ...);
            None for punctuation, which has no term in the NAF file.
        ``sense_key`` (str or None)
            WordNet 3.0 sense key (``lemma%lex_sense``, e.g. ``"say%2:32:00::"``) for the
            224,716 annotations that map to WordNet 3.0; None otherwise. SemCor has 234,136
            sense annotations; the other 9,420 carry WordNet 1.6 keys (mostly ``n't``, ``such``,
            adjective satellites) that the NAF conversion could not map to a 3.0 synset.
    """
    e = _entry("semcor_naf")
    tarball = fetch(e.name)
    out_dir = paths.cache_dir("data", "derived")
    table = out_dir / f"semcor3.0_naf.{e.sha256[:16]}.v{_SEMCOR_FORMAT}.parquet"
    if table.is_file():
        try:
            return pd.read_parquet(table)
        except (OSError, ValueError) as exc:
            log.warning("cached SemCor table %s is unreadable (%s); parsing again", table, exc)
    start = time.perf_counter()
    frame = _parse_semcor(tarball)
    log.info("parsed SemCor (%d tokens) in %.1f s", len(frame), time.perf_counter() - start)
    tmp = _temp_beside(table)
    try:
        frame.to_parquet(tmp, index=False)
        _publish(tmp, table)
    finally:
        tmp.unlink(missing_ok=True)
    return frame


def semcor_sense_counts() -> pd.Series:
    """How often each WordNet 3.0 sense key is annotated in all of SemCor 3.0.

    The natural frequency of a word's senses in running text, e.g. to draw sense-tagged
    occurrences in their natural proportions (a sample drawn evenly over senses deflates the
    most-frequent-sense baseline).

    Returns
    -------
    pandas.Series
        Counts indexed by sense key (:func:`load_semcor`'s annotations).
    """
    keys = load_semcor()["sense_key"].dropna()
    return keys.value_counts().rename("count").rename_axis("sense_key")


_WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}

_wordnet_readers: dict[str, WordNetCorpusReader] = {}


def _project_wordnet() -> Path:
    """Copy the verified WordNet files into the project's NLTK data folder; return its root."""
    data_root = paths.cache_dir("nltk_data")
    target_dir = data_root / "corpora" / "wordnet"
    target_dir.mkdir(parents=True, exist_ok=True)
    entries = _entries("wordnet")
    changed = False
    for e in entries:
        target = target_dir / Path(e.path).name
        if target.is_file() and _file_sha256(target, save=False) == e.sha256:
            continue
        source = fetch(e.name)  # raises when neither mirror nor cache has it
        tmp = _temp_beside(target)
        try:
            shutil.copyfile(source, tmp)
            _publish(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        _file_sha256(target, save=False)
        changed = True
    if changed:
        _save_memo()
    return data_root


def wordnet() -> WordNetCorpusReader:
    """NLTK's WordNet 3.0 reader (Miller, 1995).

    Uses the mirror's ``wordnet3.0`` files, copied (verified) into
    ``paths.cache_dir("nltk_data")/corpora/wordnet/`` and that folder registered on
    ``nltk.data.path`` (NLTK 3.10 refuses corpus roots outside its data path, so the files are
    copied, not linked). Without a mirror, an already installed NLTK WordNet is used.

    Returns
    -------
    nltk.corpus.reader.wordnet.WordNetCorpusReader
        Cached per data folder; ``get_version()`` is ``"3.0"``. English only (the mirror
        copy has no Open Multilingual Wordnet). The first call in a process takes a few
        seconds (NLTK reads the index files).

    Raises
    ------
    DataError
        The mirror is set but lacks a WordNet file or holds a damaged one
        (:class:`DataFileMissing`, :class:`ChecksumMismatch`), or there is neither a mirror
        nor an installed NLTK WordNet 3.0 (:class:`DataUnavailable`).
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    data_root = paths.cache_dir("nltk_data")
    key = str(data_root)
    if key in _wordnet_readers:
        return _wordnet_readers[key]
    try:
        _project_wordnet()
    except DataError:
        if paths.data_mirror() is not None:
            raise  # a mirror that lacks or damages WordNet is an error, not a reason to fall back
        try:
            reader = nltk.corpus.wordnet
            reader.ensure_loaded()
        except LookupError:
            raise DataUnavailable(
                "WordNet 3.0 is not available: no data mirror is configured "
                "(LMGEOMETRY_DATA_MIRROR is unset; the mirror's wordnet3.0/ files have no public "
                "URL) and NLTK has no WordNet installed. Fix: set LMGEOMETRY_DATA_MIRROR to the "
                "data mirror, or run `python -m nltk.downloader wordnet` where a network is "
                "available."
            ) from None
    else:
        if key not in nltk.data.path:
            nltk.data.path.insert(0, key)
        with warnings.catch_warnings():  # no Open Multilingual Wordnet: English only
            warnings.filterwarnings("ignore", message="The multilingual functions")
            reader = WordNetCorpusReader(str(data_root / "corpora" / "wordnet"), None)
    version = reader.get_version()
    if version != "3.0":
        raise DataUnavailable(f"the WordNet found is version {version}, not 3.0 (the version "
                              "SemCor's sense keys use). Fix: set LMGEOMETRY_DATA_MIRROR to the "
                              "data mirror, whose wordnet3.0/ is used in preference.")
    _wordnet_readers[key] = reader
    return reader


@functools.cache
def _n_senses(lemma: str, wn_pos: str, cache_root: str) -> int:
    wn = wordnet()
    name = lemma.strip().lower().replace(" ", "_")
    return sum(1 for s in wn.synsets(name, pos=wn_pos)
               if any(lem.name().lower() == name for lem in s.lemmas()))


def n_senses(lemma: str, upos: str) -> int | None:
    """Number of WordNet 3.0 senses of a lemma for a universal POS tag.

    Counts the synsets that contain the lemma itself: an inflected form such as ``"geese"``
    has 0 (``wordnet().synsets`` would map it to ``"goose"``), and ``"better"`` as ADJ has its
    own 4 senses, not those of ``"good"``. Spaces are written as WordNet's underscores; case
    is ignored.

    Parameters
    ----------
    lemma : str
        e.g. ``"bank"``.
    upos : str
        Universal POS tag; ``NOUN``, ``VERB``, ``ADJ`` (head and satellite adjectives) and
        ``ADV`` map to WordNet's n, v, a, r.

    Returns
    -------
    int or None
        The sense count (0 when WordNet lacks the lemma), or None for any other POS tag.

    Examples
    --------
    >>> n_senses("bank", "NOUN")  # doctest: +SKIP
    10
    """
    wn_pos = _WORDNET_POS.get(upos)
    if wn_pos is None or not lemma.strip():
        return None
    # keyed by the cache root too, so a different cache (another WordNet copy) is not mixed in
    return _n_senses(lemma, wn_pos, os.environ.get(paths.CACHE_ENV, ""))


@functools.cache
def _brown_sentences(sha256: str) -> tuple[tuple[str, ...], ...]:
    path = fetch("brown_zip")
    sentences: list[tuple[str, ...]] = []
    with zipfile.ZipFile(path) as zf:
        names = sorted(n for n in zf.namelist() if re.fullmatch(r"brown/c[a-r]\d\d", n))
        if len(names) != 500:
            raise ValueError(f"{path}: {len(names)} Brown text files, expected 500")
        for name in names:
            # one sentence per non-blank line of word/tag tokens, split at the last slash as
            # NLTK's TaggedCorpusReader does
            for line in zf.read(name).decode("utf-8").splitlines():
                tokens = tuple(t[:t.rfind("/")] if "/" in t else t for t in line.split())
                if tokens:
                    sentences.append(tokens)
    return tuple(sentences)


@functools.cache
def _brown_words(sha256: str) -> tuple[str, ...]:
    return tuple(w for s in _brown_sentences(sha256) for w in s)


def brown_sentences() -> list[tuple[str, ...]]:
    """The Brown corpus as sentences of tokens, as ``nltk.corpus.brown.sents()``.

    Returns
    -------
    list of tuple of str
        57,340 sentences (one per line of the tagged files, ``ca01`` ... ``cr09``), tokens with
        their tags removed and case preserved; quotes are Brown's ``````/``''`` tokens.
    """
    return list(_brown_sentences(_entry("brown_zip").sha256))


def brown_words() -> list[str]:
    """The Brown corpus (Francis & Kucera, 1979) as a token list, as ``nltk.corpus.brown.words()``.

    Returns
    -------
    list of str
        1,161,192 tokens in file order (``ca01`` ... ``cr09``), case preserved, tags removed.
    """
    return list(_brown_words(_entry("brown_zip").sha256))


def sense_labels(keys: Sequence[str], width: int = 40) -> dict[str, str]:
    """Readable labels for WordNet 3.0 sense keys: ``synset name: gloss`` (gloss cut to width).

    Keys WordNet does not know keep the key itself as label.
    """

    wn = wordnet()
    out = {}
    for key in keys:
        try:
            synset = wn.lemma_from_key(key).synset()
            gloss = synset.definition()
            out[key] = f"{synset.name()}: {gloss[:width]}{'...' if len(gloss) > width else ''}"
        except Exception:  # nltk raises WordNetError (or ValueError) for an unknown key
            out[key] = key
    return out
