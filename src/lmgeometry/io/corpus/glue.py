"""GLUE's SST-2 and QNLI as labelled corpora (seed 003's probe and fine-tuning data): the
seeded samples the fine-tuning runs share, and each QNLI pair joined into one input.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError
from lmgeometry.io import datasets
from lmgeometry.io.corpus.base import Corpus, sentences
from lmgeometry.io.corpus.table import WORD_COLUMNS, word_table

__all__ = [
    "pair_text",
    "qnli_corpus",
    "qnli_pairs",
    "sst2_corpus",
    "sst2_train_sample",
]


def sst2_train_sample(n: int, seed: int = 0, min_words: int = 4) -> pd.DataFrame:
    """A seeded sample of ``n`` rows of GLUE's SST-2 train split with at least ``min_words`` words.

    GLUE's SST-2 train split holds every labelled phrase of the treebank, many of them a word
    or two long; only rows with at least ``min_words`` whitespace-separated tokens are
    sampled (``DataFrame.sample(n, random_state=seed)``). :func:`sst2_corpus` and the
    fine-tuning runs (:mod:`lmgeometry.training.finetune`) draw the same rows for the same
    ``n`` and seed.

    Returns
    -------
    pandas.DataFrame
        ``sentence`` and ``label`` (1 positive, 0 negative), in sampled order.

    Raises
    ------
    CorpusError
        ``n`` is not in 1 .. the number of such rows.
    """
    train = datasets.load_sst2("train")
    train = train[train["sentence"].str.split().str.len() >= min_words]
    if not 0 < n <= len(train):
        raise CorpusError(f"the SST-2 sample size must be in 1..{len(train)} (SST-2 train rows "
                          f"with at least {min_words} words), not {n}")
    return train.sample(n=n, random_state=seed)


def sst2_corpus(n_train: int = 2000, seed: int = 0, min_words: int = 4
                ) -> tuple[Corpus, np.ndarray, np.ndarray]:
    """SST-2 sentences with their labels: a seeded sample of train plus the whole dev split.

    The training sentences are :func:`sst2_train_sample` (rows with at least ``min_words``
    words). The dev split (872 full sentences) is kept whole, as seed 003 evaluates on it.

    Returns
    -------
    corpus : Corpus
        Train sentences first, then dev (``sentence_id`` order).
    labels : ndarray of int, one per sentence (1 positive, 0 negative)
    is_dev : ndarray of bool, one per sentence
    """

    train = sst2_train_sample(n_train, seed, min_words)
    dev = datasets.load_sst2("dev")
    texts = train["sentence"].tolist() + dev["sentence"].tolist()
    corpus = sentences(texts, name=f"sst2-train{n_train}-seed{seed}+dev")
    labels = np.concatenate([train["label"].to_numpy(int), dev["label"].to_numpy(int)])
    is_dev = np.arange(len(texts)) >= n_train
    return corpus, labels, is_dev


def qnli_pairs(seed: int = 0) -> pd.DataFrame:
    """GLUE's QNLI dev pairs (the only QNLI split in the mirror) in one seeded order.

    ``numpy.random.default_rng(seed).permutation`` of the 5,463 pairs of
    :func:`data.load_qnli`; :func:`qnli_corpus` takes its training and held-out pairs from the
    front of this order, and the fine-tuning runs split the same order
    (:data:`lmgeometry.training.finetune.QNLI_HELD_OUT`).

    Returns
    -------
    pandas.DataFrame
        ``pair_id`` (row of the dev file), ``question``, ``sentence``, ``label`` (int: 1
        entailment, 0 not entailment), in permuted order with a fresh index.
    """
    pairs = datasets.load_qnli()
    order = np.random.default_rng(seed).permutation(len(pairs))
    out = pairs.iloc[order].reset_index(drop=True)
    return out.assign(pair_id=order, label=(out["label"] == "entailment").to_numpy(int))[
        ["pair_id", "question", "sentence", "label"]]


def pair_text(question: str, sentence: str, separator: str = "") -> str:
    """A sentence pair as one input text: ``question + " " + separator + " " + sentence``.

    With an empty ``separator``, ``question + " " + sentence`` (a decoder's running text).
    :func:`lmgeometry.io.models.pair_separator` gives an encoder's own separator token(s).
    """
    return question + (f" {separator} " if separator else " ") + sentence


def qnli_corpus(n_train: int = 1000, n_test: int = 500, seed: int = 0, separator: str = ""
                ) -> tuple[Corpus, np.ndarray, np.ndarray]:
    """QNLI pairs, each joined into one input, split once into training and held-out pairs.

    The mirror holds only GLUE's QNLI dev split (5,463 pairs, :func:`data.load_qnli`), so both
    sides come from it: one seeded permutation of its pairs (:func:`qnli_pairs`), the first
    ``n_train`` for training, the next ``n_test`` held out. No pair is on both sides.

    Each pair becomes one text (:func:`pair_text`), ``question + " " + separator + " " +
    sentence`` (or ``question + " " + sentence`` when ``separator`` is empty). An encoder's
    own pair template puts its separator token(s) there (BERT's ``[SEP]``, MPNet's ``</s></s>``:
    :func:`lmgeometry.io.models.pair_separator`); written into the text, a tokenizer reads them
    as the same special tokens. A decoder reads the two as running text, as GPT-2's tokenizer
    joins a pair. The separator gets no row in the word table, so it is in the model's input
    but pooled into no word. Questions and sentences are parsed separately (spaCy, cached) and
    their words put one after the other; column ``segment`` is 0 for the question's words and 1
    for the sentence's, and ``word_index`` runs over both.

    Parameters
    ----------
    n_train, n_test : int
        Pairs on each side.
    seed : int
        Seed of the permutation.
    separator : str
        Text between the question and the sentence (see above).

    Returns
    -------
    corpus : Corpus
        Training pairs first, then held-out pairs (``sentence_id`` order).
    labels : ndarray of int, one per pair (1 entailment, 0 not entailment)
    is_test : ndarray of bool, one per pair
    """
    pairs = qnli_pairs(seed)
    if n_train < 1 or n_test < 1 or n_train + n_test > len(pairs):
        raise ValueError(f"n_train and n_test must be positive and sum to at most {len(pairs)} "
                         f"(QNLI dev pairs), not {n_train} and {n_test}")
    pairs = pairs.iloc[: n_train + n_test]
    joint = pair_text("", "", separator)
    questions, answers = pairs["question"].tolist(), pairs["sentence"].tolist()
    q_words, s_words = word_table(questions), word_table(answers)
    shift = np.array([len(q) + len(joint) for q in questions], dtype=np.int64)
    n_q = q_words.groupby("sentence_id").size().reindex(range(len(pairs)), fill_value=0)
    s_words = s_words.assign(
        start=s_words["start"] + shift[s_words["sentence_id"]],
        end=s_words["end"] + shift[s_words["sentence_id"]],
        word_index=s_words["word_index"] + n_q.to_numpy()[s_words["sentence_id"]])
    last_q = q_words["sentence_id"].ne(q_words["sentence_id"].shift(-1))
    q_words.loc[last_q, "whitespace"] = " "
    words = pd.concat([q_words.assign(segment=np.int8(0)), s_words.assign(segment=np.int8(1))])
    words = words.sort_values(["sentence_id", "word_index"], kind="stable")
    words = words.reset_index(drop=True).astype(WORD_COLUMNS)
    texts = [pair_text(q, a, separator) for q, a in zip(questions, answers, strict=True)]
    params = {"n_train": n_train, "n_test": n_test, "seed": seed, "separator": separator}
    corpus = Corpus(name="qnli", sentences=texts, words=words, params=params,
                    info={"source": "GLUE QNLI dev split (the mirror has no train split)"})
    return corpus, pairs["label"].to_numpy(int), np.arange(len(pairs)) >= n_train
