"""Special tokens of the "Geometry" chapter (seed 000): which rows are a decoder's first words,
position bins and token classes (:func:`special_plan`), and their measures per layer
(:func:`special_measures`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store
from lmgeometry.chapters.geometry.layers import _interval
from lmgeometry.measures.stats import GroupBootstrap
from lmgeometry.measures.tokens import token_measures

__all__ = [
    "POSITION_BINS",
    "MIN_CLASS_TOKENS",
    "PUNCTUATION",
    "SpecialPlan",
    "special_plan",
    "special_measures",
]


#: Input positions (after the first token) grouped as the seed's position figures group them:
#: the first token is compared with each group's mean.
POSITION_BINS: tuple[tuple[int, int], ...] = ((1, 1), (2, 3), (4, 7), (8, 15), (16, 31),
                                             (32, 1 << 30))


#: A part of speech with fewer tokens is not compared with [SEP] (its mean is too noisy).
MIN_CLASS_TOKENS = 50

#: The subject of the words spaCy tags PUNCT, compared with the other parts of speech as a
#: closing token is (seed 000: "the [SEP] and punctuation marks have the lowest ...").
PUNCTUATION = "punctuation (word class)"


@dataclass
class SpecialPlan:
    """The tokens of a store's sentences (words, then special tokens) and their groups.

    ``subjects`` maps a name ("[SEP] (last token)", "<bos> (first token)", "first word (first
    token)", :data:`PUNCTUATION`) to its token rows and the reference it is compared with:
    ``"classes"`` (the parts of speech of the words, punctuation left out, each with at least
    :data:`MIN_CLASS_TOKENS` tokens) for a last token and for the punctuation marks (when
    there are that many), ``"positions"`` (:data:`POSITION_BINS` of the words' input
    positions) for a first token. The name's part in brackets is the subject's role.
    """

    frame: pd.DataFrame
    n_words: int
    subjects: dict[str, tuple[np.ndarray, str]]
    references: dict[str, dict[str, np.ndarray]]
    boot: GroupBootstrap


def special_plan(store: Store, n_boot: int, seed: int) -> SpecialPlan:
    """Every token of ``store``'s sentences (its words, then its special tokens), the subjects
    of :func:`special_measures` and their reference groups, and a bootstrap over sentences."""
    words, special = store.words, store.special
    # a word's input position (special tokens counted); a table without the alignment
    # columns (a store written from arrays) counts words
    position = words.get("first_piece", words["word_index"]).to_numpy()
    frame = pd.concat([
        pd.DataFrame({"sentence_id": words["sentence_id"].to_numpy(),
                      "text": words["text"].to_numpy(), "upos": words["upos"].to_numpy(),
                      "position": position}),
        pd.DataFrame({"sentence_id": special["sentence_id"].to_numpy(),
                      "text": special["token"].to_numpy(), "upos": "SPECIAL",
                      "position": special["position"].to_numpy()}),
    ], ignore_index=True)
    n = len(words)
    subjects = {}
    at = n + np.arange(len(special))
    for role, mask in (("first", special["position"].to_numpy() == 0),
                       ("last", (special["position"] == special["n_tokens"] - 1).to_numpy())):
        for token in pd.unique(special["token"].to_numpy()[mask]):
            rows = at[mask & (special["token"].to_numpy() == token)]
            subjects[f"{token} ({role} token)"] = (rows, "positions" if role == "first"
                                                   else "classes")
    if not (special["position"].to_numpy() == 0).any():  # no BOS: the first word is first
        subjects["first word (first token)"] = (np.flatnonzero(position == 0), "positions")
    upos = words["upos"].to_numpy()
    if (upos == "PUNCT").sum() >= MIN_CLASS_TOKENS:  # seed 000 names them with [SEP]
        subjects[PUNCTUATION] = (np.flatnonzero(upos == "PUNCT"), "classes")
    counts = pd.Series(upos[upos != "PUNCT"]).value_counts()
    references = {
        "classes": {c: np.flatnonzero(upos == c) for c in counts.index[counts >= MIN_CLASS_TOKENS]},
        "positions": {(f"position {a}" if a == b else f"positions {a}+" if b >= 1 << 29
                       else f"positions {a}-{b}"): np.flatnonzero((position >= a)
                                                                  & (position <= b))
                      for a, b in POSITION_BINS},
    }
    references["positions"] = {k: v for k, v in references["positions"].items() if len(v)}
    boot = GroupBootstrap(frame["sentence_id"].to_numpy(), n_boot, seed)
    return SpecialPlan(frame, n, subjects, references, boot)


def special_measures(Xw: np.ndarray, Xs: np.ndarray, plan: SpecialPlan
                     ) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Seed 000's token measures of the special tokens in one layer, with intervals.

    Every token of a sentence, words and special tokens alike (seed 000's BERT tokens included
    [CLS] and [SEP]), gets its token intra-sentence similarity, the mean cosine to the other
    tokens of its sentence (:func:`lmgeometry.measures.tokens.token_measures`). Per
    subject (a special token, or a decoder's first word when its template adds no BOS):
    its mean token intra-sentence similarity, the lowest mean of its reference groups (parts
    of speech for a last token, input positions for a first token) and the difference, and
    the ratio of its mean norm to the mean norm of the other words (every word for a special
    token; every word but the first of each sentence for a decoder's first word; every word
    but the punctuation marks for them); each with a 95% interval over sentences.

    Parameters
    ----------
    Xw : (n_words, d) the layer's vectors of every word of the store, in store order
    Xs : (n_special, d) the layer's special tokens (:meth:`Store.special_layer`)
    plan : :func:`special_plan` of the store

    Returns
    -------
    rows : one dict per subject: ``token``, ``role`` ("first token", "last token" or "word
        class"), ``n``,
        ``intra``, ``reference`` (the lowest group), ``reference_intra``, ``difference``,
        ``norm_ratio``, each statistic with ``_lo``/``_hi``
    replicates : ``difference`` replicates per subject
    """
    T = np.vstack([np.asarray(Xw, np.float32), np.asarray(Xs, np.float32)])
    intra = token_measures(T, plan.frame)["token_intra"].to_numpy()
    norms = np.linalg.norm(T.astype(np.float64), axis=1)
    boot = plan.boot
    nan = (float("nan"), np.full(boot.n_boot, np.nan))

    def mean_intra(r: np.ndarray) -> tuple[float, np.ndarray]:
        # a token alone in its sentence (or a zero vector) has no intra-sentence similarity
        r = r[np.isfinite(intra[r])]
        return boot.ratio(intra[r], rows=r) if len(r) else nan

    rows, reps = [], {}
    for name, (subject, kind) in plan.subjects.items():
        value, rep = mean_intra(subject)
        groups = {g: mean_intra(r) for g, r in plan.references[kind].items()}
        groups = {g: v for g, v in groups.items() if np.isfinite(v[0])}
        lowest = min(groups, key=lambda g: groups[g][0]) if groups else ""
        ref_value, ref_reps = ((groups[lowest][0],
                                np.min(np.stack([g[1] for g in groups.values()]), axis=0))
                               if groups else nan)
        norm_value, norm_rep = boot.ratio(norms[subject], rows=subject)
        others = np.setdiff1d(np.arange(plan.n_words), subject)  # a first word is a word too
        other_value, other_rep = boot.ratio(norms[others], rows=others)
        row = {"token": name, "role": name.rpartition(" (")[2].rstrip(")"),
               "n": len(subject), "reference": lowest}
        for key, (v, r) in {"intra": (value, rep), "reference_intra": (ref_value, ref_reps),
                            "difference": (value - ref_value, rep - ref_reps),
                            "norm_ratio": (norm_value / other_value,
                                           norm_rep / other_rep)}.items():
            row.update(_interval(key, v, r))
        rows.append(row)
        reps[name] = rep - ref_reps
    return rows, reps
