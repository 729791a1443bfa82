"""Word-in-Context sentence pairs as corpora: one split (:func:`wic_pairs`) or all three in one
corpus (:func:`wic_corpus`), with the word-table rows of each pair's target.

Pilehvar, M. T., Camacho-Collados, J. (2019). WiC: the Word-in-Context dataset. NAACL.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.io import datasets
from lmgeometry.io.corpus.base import Corpus, sentences
from lmgeometry.io.corpus.spans import _map_spans, _warn_unmapped
from lmgeometry.io.corpus.table import word_table

__all__ = [
    "wic_corpus",
    "wic_pairs",
]


def wic_pairs(split: str) -> tuple[Corpus, pd.DataFrame]:
    """Word-in-Context pairs as a corpus, and where each pair's target word is in it.

    Sentence ``2 i`` is example 1 of pair ``i`` and sentence ``2 i + 1`` its example 2, kept
    as released (tokenised, single spaces; duplicates are not merged, so each sentence belongs
    to one pair). WiC gives the target's position in the whitespace-tokenised sentence; its
    character span is mapped onto the spaCy words (a span over several spaCy words maps to the
    one whose lemma or text is the target lemma, if exactly one is).

    Parameters
    ----------
    split : {"train", "dev", "test"}

    Returns
    -------
    corpus : Corpus
        Name ``"wic"``, ``params={"split": split}``; mapped target rows have ``is_target``
        and ``target`` (the WiC lemma). ``info["unmapped_targets"]`` lists the others.
    pairs : pandas.DataFrame
        One row per pair: ``word``, ``pos`` (``"N"``/``"V"``), ``label`` (bool: same sense),
        ``sentence_id1``, ``sentence_id2``, ``row1``, ``row2`` (positional rows of the target
        in ``corpus.words``; ``<NA>`` when unmapped) and ``mapped`` (both rows found).
    """
    where = f"wic_pairs({split!r})"
    frame = datasets.load_wic(split)
    texts: list[str] = []
    span_rows = []
    for i, r in enumerate(frame.itertuples(index=False)):
        for side, (sentence, index) in enumerate(((r.sentence1, r.index1),
                                                  (r.sentence2, r.index2))):
            sid = 2 * i + side
            texts.append(sentence)
            tokens = list(re.finditer(r"\S+", sentence))
            if not 0 <= index < len(tokens):
                raise ValueError(f"{where}: pair {i} gives target index {index} but sentence "
                                 f"{side + 1} has {len(tokens)} tokens: {sentence!r}")
            m = tokens[index]
            span_rows.append((sid, m.start(), m.end(), r.word))
    spans = pd.DataFrame(span_rows, columns=["sentence_id", "start", "end", "lemma"])
    words = word_table(texts)
    mapped = _map_spans(words, spans)
    target_col = np.full(len(words), None, dtype=object)
    ok = mapped[mapped["row"] >= 0]
    target_col[ok["row"].to_numpy()] = ok["lemma"].to_numpy()
    words["target"] = target_col
    words["is_target"] = words["target"].notna()
    unmapped = mapped[mapped["row"] < 0]
    _warn_unmapped(where, unmapped, len(mapped))
    rows = pd.array(np.where(mapped["row"] >= 0, mapped["row"], -1), dtype="Int64")
    rows[mapped["row"].to_numpy() < 0] = pd.NA
    pairs = pd.DataFrame({
        "word": frame["word"], "pos": frame["pos"], "label": frame["label"].astype(bool),
        "sentence_id1": np.arange(0, 2 * len(frame), 2, dtype=np.int32),
        "sentence_id2": np.arange(1, 2 * len(frame), 2, dtype=np.int32),
        "row1": rows[0::2], "row2": rows[1::2],
    })
    pairs["mapped"] = pairs["row1"].notna() & pairs["row2"].notna()
    corpus = Corpus(name="wic", sentences=texts, words=words, params={"split": split},
                    info={"pairs": len(frame), "mapped_pairs": int(pairs["mapped"].sum()),
                          "unmapped_targets": unmapped.drop(columns=["row"])
                          .to_dict(orient="records")})
    return corpus, pairs


def wic_corpus(n_train: int = 400, n_test: int = 400, seed: int = 0) -> tuple[Any, pd.DataFrame]:
    """WiC pairs of all three splits in one corpus (one extraction per model).

    A seeded sample of ``n_train`` training and ``n_test`` test pairs (None: all) and the
    whole dev split (638 pairs), keeping only pairs whose two targets map onto a spaCy word.
    Sentences are re-parsed as one corpus; each target keeps its word index, so ``row1`` and
    ``row2`` are re-pointed at the new word table.

    Returns
    -------
    corpus : Corpus
    pairs : DataFrame
        ``split``, ``word``, ``pos``, ``label``, ``row1``, ``row2`` (rows of ``corpus.words``).
    """

    texts: list[str] = []
    frames = []
    for split, n in (("train", n_train), ("dev", None), ("test", n_test)):
        c, pairs = wic_pairs(split)
        pairs = pairs[pairs["mapped"]].reset_index(drop=True)
        if n is not None and n < len(pairs):
            pairs = pairs.sample(n=n, random_state=seed).sort_index().reset_index(drop=True)
        wi = c.words["word_index"].to_numpy()
        for k in (1, 2):
            pairs[f"word_index{k}"] = wi[pairs[f"row{k}"].to_numpy(dtype=np.int64)]
            pairs[f"sentence{k}"] = len(texts) + 2 * np.arange(len(pairs)) + (k - 1)
        for s1, s2 in zip(pairs["sentence_id1"], pairs["sentence_id2"], strict=True):
            texts += [c.sentences[int(s1)], c.sentences[int(s2)]]
        frames.append(pairs.assign(split=split))
    corpus = sentences(texts, name=f"wic-train{n_train}-test{n_test}-seed{seed}")
    words = corpus.words
    row_of = pd.Series(np.arange(len(words)),
                       index=pd.MultiIndex.from_arrays([words["sentence_id"].to_numpy(),
                                                        words["word_index"].to_numpy()]))
    pairs = pd.concat(frames, ignore_index=True)
    for k in (1, 2):
        keys = pd.MultiIndex.from_arrays([pairs[f"sentence{k}"].to_numpy(),
                                          pairs[f"word_index{k}"].to_numpy()])
        pairs[f"row{k}"] = row_of.reindex(keys).to_numpy()
    if pairs[["row1", "row2"]].isna().any().any():
        raise RuntimeError("a WiC target did not keep its word index when re-parsed")
    pairs[["row1", "row2"]] = pairs[["row1", "row2"]].astype(np.int64)
    return corpus, pairs[["split", "word", "pos", "label", "row1", "row2"]]
