"""Sentence-level task data as tables: MultiNLI, STS 2012-2016, STS-B, SST-2, QNLI, WiC.

Loaders return fresh :class:`pandas.DataFrame` objects with the row counts stated in the mirror's
``SOURCES.md``. Text fields have surrounding whitespace stripped; nothing else is changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.io.datafiles import _check_choice, _entries, _read_rows, _score, fetch

__all__ = [
    "load_mnli",
    "load_qnli",
    "load_sst2",
    "load_sts",
    "load_stsb",
    "load_wic",
]

_SPLITS = ("train", "dev", "test")


_STS_YEARS = (2012, 2013, 2014, 2015, 2016)


def _split_rows(name: str, split: str, what: str, **read: Any) -> Iterator[list[str]]:
    """The rows of the data file ``name`` (with ``{split}`` filled in) of one split.

    ``split`` is checked and the file fetched now (one of :data:`_SPLITS`; the error names
    ``what``); the rows are read as they are iterated, by
    :func:`~lmgeometry.io.datafiles._read_rows` with the options ``read``.
    """
    _check_choice(split, _SPLITS, f"{what} split")
    return _read_rows(fetch(name.format(split=split)), **read)


def load_mnli() -> pd.DataFrame:
    """MultiNLI dev-matched pairs (Williams et al., 2018).

    Returns
    -------
    pandas.DataFrame
        9,815 rows: ``premise``, ``hypothesis`` (str) and ``label`` (``"entailment"``,
        ``"neutral"`` or ``"contradiction"``). The source file has no genre column.
    """
    path = fetch("mnli_dev_matched")
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            item = json.loads(line)
            try:
                rows.append((item["premise"].strip(), item["hypothesis"].strip(), item["label"]))
            except KeyError as exc:
                raise ValueError(f"{path}, line {line_no}: no field {exc}") from None
    return pd.DataFrame(rows, columns=["premise", "hypothesis", "label"])


def load_sts(years: Iterable[int] | None = None) -> pd.DataFrame:
    """SemEval STS 2012-2016 per-year English pairs (Agirre et al., 2012-2016).

    Parameters
    ----------
    years : iterable of int, optional
        Any of 2012-2016; default all. 2012's MSRvid is not included (it is in STS-B).

    Returns
    -------
    pandas.DataFrame
        26,775 rows for all years: ``year`` (int16), ``source`` (the file's data set, e.g.
        ``"MSRpar"``, ``"headlines"``), ``split`` (``"train"``/``"test"`` as the file is named),
        ``score`` (float in [0, 5]; NaN for the pairs released without a gold score, which is
        most pairs of 2015 and 2016), ``sentence1``, ``sentence2``. Rows keep file order; files
        are in year then file-name order.
    """
    chosen = tuple(_STS_YEARS if years is None else sorted(set(years)))
    for year in chosen:
        if year not in _STS_YEARS:
            raise ValueError(f"no STS files for year {year!r}; choose among {_STS_YEARS}")
    frames = []
    for year in chosen:
        for e in sorted(_entries(f"sts{year}"), key=lambda e: e.path):
            source, split = Path(e.path).name.removesuffix(".tsv").rsplit(".", 1)
            rows = [(_score(s), a.strip(), b.strip())
                    for s, a, b in _read_rows(fetch(e.name), n_fields=3)]
            frame = pd.DataFrame(rows, columns=["score", "sentence1", "sentence2"])
            frame.insert(0, "split", split)
            frame.insert(0, "source", source)
            frame.insert(0, "year", np.int16(year))
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["year"] = out["year"].astype("int16")
    return out


def load_stsb(split: str) -> pd.DataFrame:
    """STS Benchmark (Cer et al., 2017).

    Parameters
    ----------
    split : {"train", "dev", "test"}
        The file ``stsbenchmark/sts-<split>.csv`` of the mirror.

    Returns
    -------
    pandas.DataFrame
        5,749 / 1,500 / 1,379 rows: ``genre`` (``main-news``, ``main-captions``,
        ``main-forum(s)``), ``source`` (original data set, e.g. ``"MSRvid"``), ``year`` (str as
        in the file, e.g. ``"2012test"``), ``id`` (str), ``score`` (float in [0, 5]),
        ``sentence1``, ``sentence2``. Trailing licence fields of some rows are dropped.
    """
    rows = [(g, f, y, i, float(s), a.strip(), b.strip())
            for g, f, y, i, s, a, b, *_licence
            in _split_rows("stsb_{split}", split, "STS-B", n_fields=(7, 9))]
    return pd.DataFrame(rows, columns=["genre", "source", "year", "id", "score",
                                       "sentence1", "sentence2"])


def load_sst2(split: str) -> pd.DataFrame:
    """GLUE SST-2 (Socher et al., 2013; Wang et al., 2019).

    Parameters
    ----------
    split : {"train", "dev", "test"}
        The file ``glue_sst2/<split>.tsv`` of the mirror (the test split has no labels).

    Returns
    -------
    pandas.DataFrame
        67,349 / 872 / 1,821 rows: ``sentence`` (lower-cased, PTB-tokenised as released) and
        ``label`` (nullable Int8: 1 positive, 0 negative, <NA> for the unlabeled test split).
    """
    rows = list(_split_rows("sst2_{split}", split, "SST-2", n_fields=2, skip_header=True))
    if split == "test":  # index <TAB> sentence
        sentences = [s.strip() for _, s in rows]
        labels = pd.array([pd.NA] * len(rows), dtype="Int8")
    else:  # sentence <TAB> label
        sentences = [s.strip() for s, _ in rows]
        labels = pd.array([int(lab) for _, lab in rows], dtype="Int8")
    return pd.DataFrame({"sentence": sentences, "label": labels})


def load_qnli() -> pd.DataFrame:
    """GLUE QNLI dev split (Rajpurkar et al., 2016; Wang et al., 2019).

    Returns
    -------
    pandas.DataFrame
        5,463 rows: ``question``, ``sentence`` and ``label`` (``"entailment"`` or
        ``"not_entailment"``). The train split is not available in the mirror.
    """
    rows = [(q.strip(), s.strip(), lab)
            for _, q, s, lab in _read_rows(fetch("qnli_dev"), n_fields=4, skip_header=True)]
    return pd.DataFrame(rows, columns=["question", "sentence", "label"])


def load_wic(split: str) -> pd.DataFrame:
    """Word-in-Context (Pilehvar & Camacho-Collados, 2019).

    Parameters
    ----------
    split : {"train", "dev", "test"}
        The files ``wic/<split>/<split>.data.txt`` and ``.gold.txt`` of the mirror.

    Returns
    -------
    pandas.DataFrame
        5,428 / 638 / 1,400 rows: ``word`` (target lemma), ``pos`` (``"N"`` or ``"V"``),
        ``index1``, ``index2`` (int: position of the target in the whitespace-tokenised
        sentences), ``sentence1``, ``sentence2`` (tokenised as released) and ``label`` (bool:
        same sense), from the separate ``*.gold.txt`` file.
    """
    data = list(_split_rows("wic_{split}_data", split, "WiC", n_fields=5))
    gold_path = fetch(f"wic_{split}_gold")
    gold = [g.strip() for g in gold_path.read_text(encoding="utf-8").splitlines() if g.strip()]
    if len(gold) != len(data):
        raise ValueError(f"WiC {split}: {len(data)} instances but {len(gold)} gold labels in "
                         f"{gold_path}")
    bad = sorted(set(gold) - {"T", "F"})
    if bad:
        raise ValueError(f"{gold_path}: labels must be T or F, found {bad}")
    rows = []
    for (word, pos, indices, s1, s2), label in zip(data, gold, strict=True):
        i1, i2 = (int(i) for i in indices.split("-"))
        rows.append((word, pos, i1, i2, s1.strip(), s2.strip(), label == "T"))
    out = pd.DataFrame(rows, columns=["word", "pos", "index1", "index2", "sentence1",
                                      "sentence2", "label"])
    return out.astype({"index1": "int32", "index2": "int32", "label": bool})
