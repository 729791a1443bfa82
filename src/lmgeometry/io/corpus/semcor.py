"""SemCor 3.0 sentences whose target nouns and verbs carry WordNet 3.0 sense keys
(:func:`semcor_targets`).

Miller, G. A., Leacock, C., Tengi, R., Bunker, R. T. (1993). A semantic concordance. HLT.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError
from lmgeometry.io import lexical
from lmgeometry.io.corpus.base import DEFAULT_SIZES, Corpus, _check_n
from lmgeometry.io.corpus.spans import _map_spans, _warn_unmapped
from lmgeometry.io.corpus.table import _QUOTES, word_table

__all__ = [
    "SEMCOR_EXCLUDED_LEMMAS",
    "semcor_targets",
]


SEMCOR_EXCLUDED_LEMMAS = frozenset({"be", "have", "do"})
"""SemCor lemmas never chosen as targets: mostly auxiliaries, whose senses are grammatical."""


def semcor_targets(n_words: int | None = None, min_occurrences: int = 10, seed: int = 0,
                   max_per_word: int = 40) -> Corpus:
    """SemCor 3.0 sentences with sense-tagged polysemous target nouns and verbs.

    Target selection (deterministic): among SemCor annotations with a WordNet 3.0 sense key,
    single-word noun and verb lemmas (POS from the sense key; multiword lemmas and
    ``SEMCOR_EXCLUDED_LEMMAS`` excluded) count as *polysemous enough* when at least 2 of their
    senses occur ``min_occurrences`` times or more; these frequent senses are the lemma's
    *target senses*. The ``ceil(n_words / 2)`` nouns and ``floor(n_words / 2)`` verbs with the
    most occurrences in their target senses are the targets.

    Sampling (seeded): for each target, up to ``max_per_word`` of its target-sense
    occurrences, taken round-robin over its target senses (each sense's occurrences shuffled),
    so that every target sense is represented. The corpus is every SemCor sentence holding a
    sampled occurrence, in SemCor order. In those sentences *every* occurrence of a target
    lemma with a sense key is labelled (also rarer senses, and occurrences beyond the cap).

    Sentence text: SemCor's tokens joined by single spaces, multiword tokens' underscores
    written as spaces ("New_York" -> "New York") and Penn-Treebank quotes ``` `` ``` and
    ``''`` written as ``"``. SemCor tokens are mapped onto spaCy words through character
    offsets (see ``info["unmapped_targets"]`` for any that do not map to exactly one word;
    a warning says how many).

    Parameters
    ----------
    n_words : int, optional
        Number of target lemmas; default ``DEFAULT_SIZES["semcor_targets"]`` (30).
    min_occurrences : int
        Occurrences a sense needs to count as a target sense.
    seed : int
        Sampling seed.
    max_per_word : int
        Cap on sampled occurrences per target.

    Returns
    -------
    Corpus
        Name ``"semcor_targets"``. Word table columns added: ``sense_key`` (WordNet 3.0 sense
        key of a labelled target occurrence, None elsewhere) and ``target`` (``"lemma.n"`` or
        ``"lemma.v"``); ``is_target`` marks the labelled rows. ``info`` holds the target table
        (lemma, pos, target senses, occurrences), the SemCor source of each sentence
        (``doc``, SemCor ``sentence_id``) and the unmapped target tokens.

    Raises
    ------
    ValueError
        Bad parameters, or fewer than ``n_words`` lemmas pass the selection rule.
    """
    where = "semcor_targets"
    n_words = _check_n(DEFAULT_SIZES[where] if n_words is None else n_words, where)
    for label, v in (("min_occurrences", min_occurrences), ("max_per_word", max_per_word)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise CorpusError(f"{where}: {label} must be a positive integer, got {v!r}")
    sc = lexical.load_semcor()
    occ, picks, target_senses = _semcor_target_lemmas(sc, n_words, min_occurrences, where)
    target_keys = set(map(tuple, picks[["lemma", "pos"]].to_numpy().tolist()))
    sampled_rows = _round_robin_sample(occ, picks, target_senses, max_per_word,
                                       np.random.default_rng(seed))
    semcor_sids = np.unique(sc.loc[sampled_rows, "sentence_id"].to_numpy())
    toks, texts, spans = _semcor_sentences(sc, semcor_sids, occ, target_keys)

    words = word_table(texts)
    mapped = _map_spans(words, spans.reset_index(drop=True))
    ok_map = mapped[mapped["row"] >= 0]
    sense_col = np.full(len(words), None, dtype=object)
    target_col = np.full(len(words), None, dtype=object)
    sense_col[ok_map["row"].to_numpy()] = ok_map["sense_key"].to_numpy()
    target_col[ok_map["row"].to_numpy()] = ok_map["target"].to_numpy()
    words["sense_key"] = sense_col
    words["target"] = target_col
    words["is_target"] = words["sense_key"].notna()
    unmapped = mapped[mapped["row"] < 0]
    _warn_unmapped(where, unmapped, len(mapped))
    sources = (toks.drop_duplicates("sentence_id")[["doc", "sentence_id"]]
               .astype({"doc": str}).rename(columns={"sentence_id": "semcor_sentence_id"}))
    return Corpus(
        name=where,
        sentences=texts,
        words=words,
        params={"n_words": n_words, "min_occurrences": int(min_occurrences),
                "seed": int(seed), "max_per_word": int(max_per_word)},
        info={"targets": picks.to_dict(orient="records"),
              "sources": sources.to_dict(orient="records"),
              "labelled_occurrences": len(ok_map),
              "unmapped_targets": unmapped.drop(columns=["row"]).to_dict(orient="records")},
    )


def _semcor_target_lemmas(sc: pd.DataFrame, n_words: int, min_occurrences: int, where: str
                          ) -> tuple[pd.DataFrame, pd.DataFrame, set[str]]:
    """Keyed noun/verb occurrences, the chosen target lemmas and their target senses."""
    keyed = sc[sc["sense_key"].notna()]
    key_lemma = keyed["sense_key"].str.split("%", n=1).str[0]
    ss_type = keyed["sense_key"].str.split("%", n=1).str[1].str[0]
    ok = (ss_type.isin(["1", "2"]) & ~key_lemma.str.contains("_", regex=False)
          & ~keyed["text"].str.contains("_", regex=False)
          & ~key_lemma.isin(SEMCOR_EXCLUDED_LEMMAS))
    occ = pd.DataFrame({"row": keyed.index[ok], "lemma": key_lemma[ok].to_numpy(),
                        "pos": ss_type[ok].map({"1": "n", "2": "v"}).to_numpy(),
                        "sense_key": keyed.loc[ok, "sense_key"].to_numpy()})
    sense_counts = occ.groupby(["lemma", "pos", "sense_key"]).size().rename("count")
    frequent = sense_counts[sense_counts >= min_occurrences].reset_index()
    per_lemma = (frequent.groupby(["lemma", "pos"])
                 .agg(target_senses=("sense_key", "size"), occurrences=("count", "sum"))
                 .reset_index())
    per_lemma = per_lemma[per_lemma["target_senses"] >= 2]
    per_lemma = per_lemma.sort_values(["occurrences", "lemma"], ascending=[False, True])
    n_noun = (n_words + 1) // 2
    picks = pd.concat([per_lemma[per_lemma["pos"] == "n"].head(n_noun),
                       per_lemma[per_lemma["pos"] == "v"].head(n_words - n_noun)])
    if len(picks) < n_words:
        raise CorpusError(
            f"{where}: only {len(picks)} lemmas ({(picks['pos'] == 'n').sum()} nouns, "
            f"{(picks['pos'] == 'v').sum()} verbs) have >= 2 senses with >= {min_occurrences} "
            f"occurrences; pass n_words <= {len(picks)} (--n of `lmgeometry extract --corpus "
            "semcor_targets` counts target lemmas), or a smaller min_occurrences to "
            "corpus.semcor_targets in Python")
    picks = picks.sort_values(["pos", "lemma"]).reset_index(drop=True)
    target_keys = set(map(tuple, picks[["lemma", "pos"]].to_numpy().tolist()))
    target_senses = set(frequent.loc[
        [k in target_keys for k in zip(frequent["lemma"], frequent["pos"], strict=True)],
        "sense_key"])
    return occ, picks, target_senses


def _round_robin_sample(occ: pd.DataFrame, picks: pd.DataFrame, target_senses: set[str],
                        max_per_word: int, rng: np.random.Generator) -> list[int]:
    """Up to ``max_per_word`` occurrences per target, taken round-robin over its senses."""
    sampled_rows: list[int] = []
    for lemma, pos in picks[["lemma", "pos"]].itertuples(index=False):
        mine = occ[(occ["lemma"] == lemma) & (occ["pos"] == pos)
                   & occ["sense_key"].isin(target_senses)]
        queues = [list(rng.permutation(g["row"].to_numpy()))
                  for _, g in mine.groupby("sense_key", sort=True)]
        taken: list[int] = []
        while len(taken) < max_per_word and any(queues):
            for q in queues:
                if q and len(taken) < max_per_word:
                    taken.append(int(q.pop()))
        sampled_rows.extend(taken)
    return sampled_rows


def _semcor_sentences(sc: pd.DataFrame, semcor_sids: np.ndarray, occ: pd.DataFrame,
                      target_keys: set[tuple[str, str]]
                      ) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
    """Sentence texts of the chosen sentences and the character spans of their targets."""
    toks = sc[sc["sentence_id"].isin(semcor_sids)]
    toks = toks[toks["text"].str.len() > 0]
    new_sid = {int(s): j for j, s in enumerate(semcor_sids)}
    texts: list[str] = []
    span_sid, span_start, span_end = [], [], []
    for sid, g in toks.groupby("sentence_id", sort=True):
        parts, pos_ = [], 0
        for tok in g["text"].tolist():
            t = _QUOTES.get(tok, tok.replace("_", " "))
            if parts:
                pos_ += 1
            span_sid.append(new_sid[int(sid)])
            span_start.append(pos_)
            span_end.append(pos_ + len(t))
            parts.append(t)
            pos_ += len(t)
        texts.append(" ".join(parts))
    spans_all = pd.DataFrame({"sentence_id": span_sid, "start": span_start, "end": span_end},
                             index=toks.index)
    is_tgt = toks["sense_key"].notna() & toks.index.isin(occ["row"])
    tgt_occ = occ.set_index("row").loc[toks.index[is_tgt]]
    tgt_occ = tgt_occ[[k in target_keys for k in
                       zip(tgt_occ["lemma"], tgt_occ["pos"], strict=True)]]
    spans = spans_all.loc[tgt_occ.index].copy()
    spans["lemma"] = tgt_occ["lemma"].to_numpy()
    spans["target"] = (tgt_occ["lemma"] + "." + tgt_occ["pos"]).to_numpy()
    spans["sense_key"] = tgt_occ["sense_key"].to_numpy()
    spans["semcor_text"] = toks.loc[tgt_occ.index, "text"].to_numpy()
    return toks, texts, spans
