"""The named corpora: ``build(name, n, seed)`` dispatches on the builder name (used by the
CLI and chapters); :func:`check_name` checks a name without reading data.
"""

from __future__ import annotations

from lmgeometry.errors import CorpusError
from lmgeometry.io.corpus.base import Corpus
from lmgeometry.io.corpus.mnli import mnli_polysemy
from lmgeometry.io.corpus.semcor import semcor_targets
from lmgeometry.io.corpus.semeval_sts import sts

__all__ = [
    "build",
    "check_name",
    "CORPUS_NAMES",
]


CORPUS_NAMES = ("mnli_polysemy", "sts", "semcor_targets")
"""Names :func:`build` accepts."""


def build(name: str, n: int | None = None, seed: int = 0) -> Corpus:
    """Build a named corpus.

    Parameters
    ----------
    name : {"mnli_polysemy", "sts", "semcor_targets"}
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
    if name == "mnli_polysemy":
        return mnli_polysemy(n=n, seed=seed)
    if name == "sts":
        return sts(n=n, seed=seed)
    return semcor_targets(n_words=n, seed=seed)


def check_name(name: str) -> None:
    """Raise :class:`CorpusError` unless :func:`build` knows ``name`` (no data is read)."""
    if name not in CORPUS_NAMES:
        raise CorpusError(f"unknown corpus {name!r}; choose one of {', '.join(CORPUS_NAMES)} "
                          "(or make your own with corpus.sentences(list_of_sentences))")
