"""Word benchmarks as tables: similarity, analogy, categorisation and SemEval-2012 relations.

Loaded by name with :func:`load_benchmark` (:data:`BENCHMARKS` lists them); the rating
scale of each similarity benchmark is :data:`SIMILARITY_SCALES`. Text fields have
surrounding whitespace stripped; nothing else is changed.
"""

from __future__ import annotations

import csv
import re
import zipfile
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.io.datafiles import _check_choice, _entries, _read_rows, fetch

__all__ = [
    "ANALOGY_BENCHMARKS",
    "BENCHMARKS",
    "CATEGORISATION_BENCHMARKS",
    "load_analogies",
    "load_benchmark",
    "load_benchmarks",
    "load_categorisation",
    "load_semeval2012",
    "load_word_similarity",
    "SIMILARITY_BENCHMARKS",
    "SIMILARITY_SCALES",
]

#: Rating scale (low, high) of each word-similarity benchmark, as its authors define it.
SIMILARITY_SCALES: dict[str, tuple[float, float]] = {
    "simlex999": (0.0, 10.0),
    "men": (0.0, 50.0),
    "ws353": (0.0, 10.0),
    "ws353_sim": (0.0, 10.0),
    "ws353_rel": (0.0, 10.0),
    "rw": (0.0, 10.0),
}


_WORDSIM_FILES = {"men": "men", "ws353": "ws353", "ws353_sim": "ws353_sim",
                  "ws353_rel": "ws353_rel", "rw": "rw"}


def load_word_similarity(name: str) -> pd.DataFrame:
    """A word-similarity benchmark: pairs of words with a human rating.

    Parameters
    ----------
    name : {"simlex999", "men", "ws353", "ws353_sim", "ws353_rel", "rw"}
        SimLex-999 (Hill et al., 2015; the original release zip), MEN (Bruni et al., 2014;
        natural form), WordSim-353 all and its similarity/relatedness subsets (Finkelstein et
        al., 2002; Agirre et al., 2009), Stanford Rare Words (Luong et al., 2013).

    Returns
    -------
    pandas.DataFrame
        999 / 3,000 / 353 / 203 / 252 / 2,034 rows: ``word1``, ``word2``, ``score`` (float, on
        the scale in :data:`SIMILARITY_SCALES`); SimLex-999 adds ``pos`` (``"A"``, ``"N"``,
        ``"V"``).
    """
    _check_choice(name, SIMILARITY_SCALES, "word-similarity benchmark")
    if name == "simlex999":
        path = fetch("simlex999_zip")
        with zipfile.ZipFile(path) as zf:
            text = zf.read("SimLex-999/SimLex-999.txt").decode("utf-8")
        rows = list(_read_rows(path, n_fields=10, skip_header=True, text=text))
        return pd.DataFrame({"word1": [r[0] for r in rows], "word2": [r[1] for r in rows],
                             "score": [float(r[3]) for r in rows], "pos": [r[2] for r in rows]})
    rows = [(a.strip(), b.strip(), float(s))
            for a, b, s in _read_rows(fetch(_WORDSIM_FILES[name]), n_fields=3)]
    return pd.DataFrame(rows, columns=["word1", "word2", "score"])


def _read_vecto(name: str, columns: list[str]) -> list[list[str]]:
    path = fetch(name)
    rows = list(_read_rows(path, n_fields=len(columns) + 1, delimiter=",",
                           quoting=csv.QUOTE_MINIMAL))
    if rows[0][1:] != columns:
        raise ValueError(f"{path}: header {rows[0]!r}, expected an index column then {columns}")
    return [r[1:] for r in rows[1:]]


def load_analogies(name: str) -> pd.DataFrame:
    """Word-analogy questions a : b :: c : d.

    Parameters
    ----------
    name : {"google", "msr"}
        Google (Mikolov et al., 2013a; 14 categories) or MSR syntactic analogies (Mikolov,
        Yih & Zweig, 2013; 16 categories), from vecto's word-benchmarks.

    Returns
    -------
    pandas.DataFrame
        19,544 / 8,000 rows: ``a``, ``b``, ``c``, ``d`` (the answer) and ``category`` (e.g.
        ``"capital-common-countries"``, ``"gram3-comparative"``, ``"JJ_JJR"``).
    """
    _check_choice(name, ("google", "msr"), "analogy set")
    rows = _read_vecto(f"{name}_analogies", ["type", "word1", "word2", "word3", "target"])
    return pd.DataFrame([(a, b, c, d, t) for t, a, b, c, d in rows],
                        columns=["a", "b", "c", "d", "category"])


def load_categorisation(name: str) -> pd.DataFrame:
    """Concept-categorisation benchmark: words and their gold category.

    Parameters
    ----------
    name : {"bless", "ap"}
        BLESS (Baroni & Lenci, 2011) or Almuhareb-Poesio (2004), from vecto's word-benchmarks.

    Returns
    -------
    pandas.DataFrame
        200 / 402 rows (17 / 21 categories): ``word`` and ``category``. The source files hold
        one empty-word row per category as a separator; these rows are dropped (SOURCES.md's
        201 / 403 "words" count that empty string).
    """
    _check_choice(name, ("bless", "ap"), "categorisation set")
    rows = _read_vecto(f"{name}_categories", ["category", "word"])
    return pd.DataFrame([(w.strip(), c) for c, w in rows if w.strip()],
                        columns=["word", "category"])


_GOLD_LINE = re.compile(r'^\s*(-?\d+(?:\.\d+)?)\s+"([^"]+)"\s*$')

_PAIR = re.compile(r"([^\s.:,]+)\s*:\s*([^\s.:,]+)")


def load_semeval2012() -> pd.DataFrame:
    """SemEval-2012 Task 2, degrees of relational similarity (Jurgens et al., 2012).

    For each of the 79 relation categories the frame holds the paradigm pairs shown to the
    annotators and the rated pairs with their gold prototypicality score.

    Returns
    -------
    pandas.DataFrame
        3,464 rows (246 paradigm pairs, 3,218 rated pairs), one per (category, role, pair):

        ``category`` (str)
            category id, e.g. ``"1a"``, ``"10b"``.
        ``relation`` (str)
            the parent relation class, e.g. ``"CLASS-INCLUSION"``.
        ``subcategory`` (str)
            e.g. ``"Taxonomic"``.
        ``definition`` (str)
            the relation in words, e.g. ``"Y is a kind/type/instance of X"``.
        ``split`` (str)
            ``"train"`` for the 10 training categories, ``"test"`` for the 69 others.
        ``role`` (str)
            ``"paradigm"`` (from ``subcategories-paradigms.txt``) or ``"rated"`` (the Phase-1
            pairs rated in Phase 2; paradigm pairs can reappear among them).
        ``word1``, ``word2`` (str)
            the pair X:Y.
        ``score`` (float)
            gold MaxDiff score of a rated pair, percentage of "most illustrative" minus
            percentage of "least illustrative" choices, in [-100, 100]; NaN for paradigms.
    """
    definitions: dict[str, tuple[str, str, str]] = {}
    for num, letter, relation, subcategory, definition in _read_rows(
            fetch("semeval2012_definitions"), n_fields=5, delimiter=",",
            quoting=csv.QUOTE_NONE):
        definitions[num.strip() + letter.strip()] = (relation.strip(), subcategory.strip(),
                                                     definition.strip())
    rows: list[tuple[Any, ...]] = []
    split_of = {}
    for e in _entries("semeval2012"):
        if e.name.startswith("semeval2012_gold_"):
            category = e.name.removeprefix("semeval2012_gold_")
            split_of[category] = "train" if "/Training/" in e.path else "test"
    missing = set(definitions) ^ set(split_of)
    if missing:
        raise ValueError(f"SemEval-2012 categories without both a definition and gold ratings: "
                         f"{sorted(missing)}")
    order = sorted(definitions, key=lambda c: (int(c[:-1]), c[-1]))

    paradigm_path = fetch("semeval2012_paradigms")
    paradigms: dict[str, list[tuple[str, str]]] = {}
    for line in paradigm_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            fields = [f.strip() for f in line.split(",")]
            # The 5th field on are the pairs; a few lines separate them with "." or a space,
            # and one writes "bulwark: flimsy".
            paradigms[fields[0] + fields[1]] = _PAIR.findall(" ".join(fields[4:]))
    for category in order:
        head = (category, *definitions[category], split_of[category])
        if not paradigms.get(category):
            raise ValueError(f"{paradigm_path}: no paradigm pairs for category {category}")
        for pair in paradigms[category]:
            rows.append((*head, "paradigm", *pair, np.nan))
        gold_path = fetch(f"semeval2012_gold_{category}")
        for line_no, line in enumerate(gold_path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            match = _GOLD_LINE.match(line)
            if match is None or match.group(2).count(":") != 1:
                raise ValueError(f"{gold_path}, line {line_no}: expected 'score \"x:y\"', "
                                 f"got {line!r}")
            word1, word2 = match.group(2).split(":")
            rows.append((*head, "rated", word1, word2, float(match.group(1))))
    return pd.DataFrame(rows, columns=["category", "relation", "subcategory", "definition",
                                       "split", "role", "word1", "word2", "score"])


#: Word-similarity benchmarks (pairs rated by people), by name.
SIMILARITY_BENCHMARKS: tuple[str, ...] = (
    "simlex999", "men", "ws353", "ws353_sim", "ws353_rel", "rw",
)
#: Word-analogy benchmarks (a : b :: c : d).
ANALOGY_BENCHMARKS: tuple[str, ...] = ("google", "msr")
#: Concept-categorisation benchmarks (words and their gold category).
CATEGORISATION_BENCHMARKS: tuple[str, ...] = ("bless", "ap")
#: Every word benchmark, in the order the chapters report them.
BENCHMARKS: tuple[str, ...] = (
    SIMILARITY_BENCHMARKS + ANALOGY_BENCHMARKS + ("semeval2012",) + CATEGORISATION_BENCHMARKS
)


def load_benchmark(name: str) -> pd.DataFrame:
    """One word benchmark's frame by name (one of :data:`BENCHMARKS`).

    Dispatches to :func:`load_word_similarity`, :func:`load_analogies`,
    :func:`load_categorisation` or :func:`load_semeval2012`.
    """
    if name in SIMILARITY_BENCHMARKS:
        return load_word_similarity(name)
    if name in ANALOGY_BENCHMARKS:
        return load_analogies(name)
    if name in CATEGORISATION_BENCHMARKS:
        return load_categorisation(name)
    if name == "semeval2012":
        return load_semeval2012()
    raise ValueError(f"unknown benchmark {name!r}; known: {BENCHMARKS}")


def load_benchmarks(names: Iterable[str] = BENCHMARKS) -> dict[str, pd.DataFrame]:
    """Several word benchmarks' frames by name (:func:`load_benchmark`), in the given order."""
    return {name: load_benchmark(name) for name in names}
