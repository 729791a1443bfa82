"""The named corpora: ``build(name, n, seed)`` dispatches on the builder name (used by the
CLI and chapters); :func:`check_name` checks a name without reading data. A name that is not a
builder's but an existing file is a file of your own sentences, one a line
(:func:`sentences_file`; ``lmgeometry extract --sentences FILE``).
"""

from __future__ import annotations

from pathlib import Path

from lmgeometry.errors import CorpusError
from lmgeometry.io.corpus.base import Corpus, sentences
from lmgeometry.io.corpus.mnli import mnli_polysemy
from lmgeometry.io.corpus.semcor import semcor_targets
from lmgeometry.io.corpus.semeval_sts import sts

__all__ = [
    "build",
    "check_name",
    "CORPUS_NAMES",
    "sentences_file",
]


CORPUS_NAMES = ("mnli_polysemy", "sts", "semcor_targets")
"""Names :func:`build` accepts."""


def build(name: str, n: int | None = None, seed: int = 0) -> Corpus:
    """Build a named corpus.

    Parameters
    ----------
    name : {"mnli_polysemy", "sts", "semcor_targets"} or a file path
        A builder, or a text file of your own sentences (:func:`sentences_file`).
    n : int, optional
        Size: sentences for ``mnli_polysemy`` and ``sts``, target lemmas (``n_words``) for
        ``semcor_targets``; default :data:`DEFAULT_SIZES`.
    seed : int
        Sampling seed.

    Returns
    -------
    Corpus

    Raises
    ------
    CorpusError
        Unknown name (the message lists the choices) or a size the data cannot give.
    """
    check_name(name)
    if name not in CORPUS_NAMES:
        if n is not None:
            raise CorpusError(f"--n (n={n}) sizes the named corpora; the sentence file {name} "
                              "is used whole: leave --n out")
        return sentences_file(name)
    if name == "mnli_polysemy":
        return mnli_polysemy(n=n, seed=seed)
    if name == "sts":
        return sts(n=n, seed=seed)
    return semcor_targets(n_words=n, seed=seed)


def check_name(name: str) -> None:
    """Raise :class:`CorpusError` unless :func:`build` knows ``name`` (no data is read): a
    builder's name or an existing file."""
    if name not in CORPUS_NAMES and not Path(name).expanduser().is_file():
        raise CorpusError(f"unknown corpus {name!r}; choose one of {', '.join(CORPUS_NAMES)}, "
                          "or give a file of your own sentences, one a line (--sentences FILE; "
                          "in Python corpus.sentences(list_of_sentences))")


def sentences_file(path: str | Path) -> Corpus:
    """A corpus of your own sentences from a UTF-8 text file, one sentence a line.

    Each line is a sentence as written (its line break removed); blank lines separate nothing
    and are skipped. The corpus is :func:`lmgeometry.io.corpus.sentences` of those lines, so
    the same sentences give the same store entry whether they come from this file or from
    ``lmgeometry.hidden_states(..., cache=True)``.

    Raises
    ------
    CorpusError
        A file that cannot be read as UTF-8 text, or that holds no sentence.
    """
    file = Path(path).expanduser()
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"cannot read the sentence file {file}: {exc}; give a UTF-8 text "
                          "file, one sentence a line") from None
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise CorpusError(f"the sentence file {file} holds no sentence; write one sentence a "
                          "line")
    return sentences(texts)
