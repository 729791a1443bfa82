"""Short Brown and STS windows that give each word of the word benchmarks up to ``k``
contexts (:func:`benchmark_contexts`: static embeddings, seed 001's Table 1); the pool they
are drawn from (:func:`context_pool`) and Brown's tokens as text (:func:`detokenize`).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError
from lmgeometry.io import lexical
from lmgeometry.io.benchmarks import load_benchmarks
from lmgeometry.io.corpus.base import Corpus
from lmgeometry.io.corpus.semeval_sts import sts_pool
from lmgeometry.io.corpus.table import _QUOTES, word_table

__all__ = [
    "benchmark_contexts",
    "BENCHMARK_WORD_COLUMNS",
    "CONTEXT_BENCHMARKS",
    "context_pool",
    "detokenize",
]


#: Columns of a word benchmark's frame that hold words (the others hold scores or labels).
BENCHMARK_WORD_COLUMNS: tuple[str, ...] = ("word1", "word2", "a", "b", "c", "d", "word")


#: The word benchmarks :func:`benchmark_contexts` covers by default: the similarity benchmarks
#: with disjoint item sets (WS353's similarity and relatedness splits are subsets of WS353).
CONTEXT_BENCHMARKS: tuple[str, ...] = ("simlex999", "men", "ws353", "rw")


_WORD_RE = re.compile(r"[A-Za-z0-9]+")


_NO_SPACE_BEFORE = frozenset({",", ".", ";", ":", "!", "?", ")", "]", "''", "%"})


_NO_SPACE_AFTER = frozenset({"(", "[", "``", "$"})


def detokenize(tokens: Sequence[str]) -> str:
    """A tokenised sentence (Brown's tokens) as plain text.

    Brown's ``````/``''`` quotes become ``"``; no space is put before ``, . ; : ! ? ) ] %`` or
    a closing quote, nor after ``( [ $`` or an opening quote; other tokens are joined by one
    space.
    """
    out: list[str] = []
    glue = True
    for t in tokens:
        text = _QUOTES.get(t, t)
        if out and not glue and t not in _NO_SPACE_BEFORE:
            out.append(" ")
        out.append(text)
        glue = t in _NO_SPACE_AFTER
    return "".join(out)


def context_pool() -> tuple[list[str], list[str]]:
    """The sentences :func:`benchmark_contexts` samples from, and the source of each.

    Every sentence of the Brown corpus (57,340, :func:`lmgeometry.io.lexical.brown_sentences`,
    :func:`detokenize` d) followed by every unique STS 2012-2016 sentence (:func:`sts_pool`)
    that is not already a Brown sentence. Sources are ``"brown"`` or ``"sts"``.
    """
    brown = [detokenize(s) for s in lexical.brown_sentences()]
    seen = set(brown)
    sts_texts = [s for s in sts_pool() if s not in seen]
    return brown + sts_texts, ["brown"] * len(brown) + ["sts"] * len(sts_texts)


def _plural_forms(word: str) -> list[str]:
    """Regular plural (third-person) forms of a word: +s, +es, and y -> ies after a consonant."""
    forms = [word + "s", word + "es"]
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        forms.append(word[:-1] + "ies")
    return forms


def _pool_hits(pool: Sequence[str], vocabulary: set[str]
               ) -> list[tuple[int, list[tuple[int, int]], list[tuple[int, int, str]]]]:
    """Per pool sentence that holds a word of ``vocabulary`` (lower-cased runs of letters and
    digits): its whitespace words as character spans, and each hit as (whitespace-word index,
    character offset, lower-cased form); the first hit of a form per whitespace word."""
    out = []
    for si, text in enumerate(pool):
        low = text.lower()
        if vocabulary.isdisjoint(_WORD_RE.findall(low)):
            continue
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        hits = []
        for wi, (a, b) in enumerate(spans):
            for m in _WORD_RE.finditer(low, a, b):
                if m.group() in vocabulary:
                    hits.append((wi, m.start(), m.group()))
        out.append((si, spans, hits))
    return out


def _coverable_targets(frames: Mapping[str, pd.DataFrame], n_sentences: Mapping[str, int],
                       min_contexts: int) -> tuple[set[str], dict[str, dict[str, int]]]:
    """The benchmark words worth contexts: the words of every item whose words all occur in at
    least ``min_contexts`` pool sentences; and per benchmark its item count and that of such
    items."""
    targets: set[str] = set()
    per_benchmark = {}
    for name, frame in frames.items():
        cols = [c for c in BENCHMARK_WORD_COLUMNS if c in frame.columns]
        items = frame[cols].astype(str).apply(lambda c: c.str.lower())
        ok = np.ones(len(items), dtype=bool)
        for c in cols:
            ok &= items[c].map(lambda w: n_sentences.get(w, 0) >= min_contexts).to_numpy()
        for c in cols:
            targets.update(items.loc[ok, c])
        per_benchmark[name] = {"items": len(items), "coverable_items": int(ok.sum())}
    return targets, per_benchmark


@dataclass
class _Window:
    """A candidate context: words ``a`` to ``b - 1`` of pool sentence ``si`` and the targets it
    gives a context to (word -> its hit)."""

    si: int
    a: int
    b: int
    targets: dict[str, tuple[int, int, str]]


def _candidate_windows(hits: list, forms: Mapping[str, str], exact: set[str], window: int,
                       margin: int) -> list[_Window]:
    """Windows of ``window`` whitespace words either side of every hit, clipped to the
    sentence; a target counts in a window when it has at least ``margin`` words before it
    inside the window and ``margin`` after it (or the sentence ends there). An exact-form hit
    is never used for another word's plural."""
    out = []
    for si, spans, sentence_hits in hits:
        n = len(spans)
        usable = [(wi, off, form, forms[form]) for wi, off, form in sentence_hits
                  if form in forms and not (form != forms[form] and form in exact)]
        seen: set[tuple[int, int]] = set()
        for centre, *_ in usable:
            a, b = max(0, centre - window), min(n, centre + window + 1)
            if (a, b) in seen:
                continue
            seen.add((a, b))
            inside: dict[str, tuple[int, int, str]] = {}
            for wi, off, form, word in usable:
                if a <= wi < b and wi - a >= margin and b - 1 - wi >= min(margin, n - 1 - wi):
                    inside.setdefault(word, (wi, off, form))
            if inside:
                out.append(_Window(si, a, b, inside))
    return out


def _greedy_windows(cands: list[_Window], rank: np.ndarray, need: dict[str, int],
                    used: set[tuple[int, str]]) -> list[_Window]:
    """Lazy greedy cover: repeatedly take the window with the most still-needed targets per
    word of length (a sentence gives a word one context at most: ``used`` holds the pairs
    (sentence, word) already taken or ruled out); ties go to the lower ``rank``. Each taken
    window keeps only the targets it was counted for. ``need`` and ``used`` are updated."""

    def wanted(c: _Window) -> list[str]:
        return [w for w in c.targets if need.get(w, 0) > 0 and (c.si, w) not in used]

    def gain(i: int) -> float:
        return len(wanted(cands[i])) / (cands[i].b - cands[i].a)

    heap = [(-g, int(rank[i]), i) for i in range(len(cands)) if (g := gain(i)) > 0]
    heapq.heapify(heap)
    chosen = []
    while heap:
        neg, r, i = heapq.heappop(heap)
        g = gain(i)
        if g <= 0:
            continue
        if g < -neg - 1e-12:  # stale: gains only fall, so re-queue with the current one
            heapq.heappush(heap, (-g, r, i))
            continue
        c = cands[i]
        keep = wanted(c)
        for w in keep:
            need[w] -= 1
            used.add((c.si, w))
        chosen.append(_Window(c.si, c.a, c.b, {w: c.targets[w] for w in keep}))
    return chosen


#: Rounds of :func:`benchmark_contexts`: a target whose row the word table does not match
#: (spaCy splits "can't" as "ca n't") gets a context from another sentence in the next round.
_CONTEXT_ROUNDS = 3


def _matched_targets(words: pd.DataFrame, flags: pd.DataFrame) -> np.ndarray:
    """Row of ``words`` that each flag (``sentence_id``, ``start``, ``form``) names, or -1
    where no row of that form starts there."""
    key = pd.MultiIndex.from_frame(words[["sentence_id", "start"]].astype(np.int64))
    pos = key.get_indexer(pd.MultiIndex.from_frame(flags[["sentence_id", "start"]]
                                                   .astype(np.int64)))
    text = words["text"].str.lower().to_numpy()
    ok = (pos >= 0) & (text[np.maximum(pos, 0)] == flags["form"].to_numpy())
    return np.where(ok, pos, -1)


def _take_contexts(cands: list[_Window], targets: set[str], k: int, seed: int,
                   texts: Sequence[str], spans_of: Mapping[int, list]
                   ) -> tuple[list[_Window], pd.DataFrame, int]:
    """Greedy rounds until every target has ``k`` matched contexts or no window adds one.

    Returns the windows (in pool order), the word table of their texts with ``target`` set on
    the matched target rows, and the number of flags the word table could not match."""
    rank = np.random.default_rng([seed, 11]).permutation(len(cands))
    need = {w: k for w in targets}
    used: set[tuple[int, str]] = set()
    chosen: list[_Window] = []
    tables: list[pd.DataFrame] = []
    unmatched = 0
    for _ in range(_CONTEXT_ROUNDS):
        taken = sorted(_greedy_windows(cands, rank, need, used), key=lambda c: (c.si, c.a))
        if not taken:
            break
        starts = [spans_of[c.si][c.a][0] for c in taken]
        part = word_table([texts[c.si][s0:spans_of[c.si][c.b - 1][1]]
                           for c, s0 in zip(taken, starts, strict=True)])
        flags = pd.DataFrame([(i, off - s0, w, form)
                              for i, (c, s0) in enumerate(zip(taken, starts, strict=True))
                              for w, (_, off, form) in c.targets.items()],
                             columns=["sentence_id", "start", "target", "form"])
        pos = _matched_targets(part, flags)
        target = pd.Series([None] * len(part), dtype=object)
        target.iloc[pos[pos >= 0]] = flags.loc[pos >= 0, "target"].to_numpy()
        tables.append(part.assign(target=target, sentence_id=part["sentence_id"] + len(chosen)))
        chosen += taken
        missed = flags[pos < 0]
        unmatched += len(missed)
        for w in missed["target"]:
            need[w] += 1  # its (sentence, word) pair stays used: another sentence next round
        if missed.empty:
            break
    if not chosen:
        return chosen, pd.DataFrame(), unmatched
    order = sorted(range(len(chosen)), key=lambda i: (chosen[i].si, chosen[i].a))
    new_id = np.empty(len(order), dtype=np.int64)
    new_id[order] = np.arange(len(order))
    words = pd.concat(tables, ignore_index=True)
    words["sentence_id"] = new_id[words["sentence_id"].to_numpy()].astype(np.int32)
    words = words.sort_values(["sentence_id", "word_index"], kind="stable")
    words = words.reset_index(drop=True)
    words["is_target"] = words["target"].notna().to_numpy()
    return [chosen[i] for i in order], words, unmatched


def _forms_and_targets(hits: list, frames: Mapping[str, pd.DataFrame], words_of: set[str],
                       plural_of: Mapping[str, str], k: int, min_contexts: int
                       ) -> tuple[dict[str, str], set[str], dict[str, dict[str, int]]]:
    """Form -> benchmark word (a word's plurals only when its own form is in fewer than ``k``
    sentences, and never a form that is itself a benchmark word), the targets
    (:func:`_coverable_targets`) and the per-benchmark item counts."""
    per_form: dict[str, int] = {}
    for _, _, sentence_hits in hits:
        for form in {h[2] for h in sentence_hits}:
            per_form[form] = per_form.get(form, 0) + 1
    forms = {w: w for w in words_of}
    forms.update({p: w for p, w in plural_of.items()
                  if per_form.get(w, 0) < k and p not in words_of})
    n_sentences: dict[str, int] = {}
    for _, _, sentence_hits in hits:
        for word in {forms[h[2]] for h in sentence_hits if h[2] in forms}:
            n_sentences[word] = n_sentences.get(word, 0) + 1
    targets, per_benchmark = _coverable_targets(frames, n_sentences, min_contexts)
    return {f: w for f, w in forms.items() if w in targets}, targets, per_benchmark


def benchmark_contexts(k: int = 5, window: int = 5, seed: int = 0, *,
                       benchmarks: Iterable[str] = CONTEXT_BENCHMARKS, min_contexts: int = 5,
                       margin: int = 2, plurals: bool = True, min_words: int = 4,
                       pool: tuple[Sequence[str], Sequence[str]] | None = None,
                       frames: Mapping[str, pd.DataFrame] | None = None) -> Corpus:
    """Short contexts that give each word of the word benchmarks up to ``k`` distinct contexts.

    Ethayarajh (2019) made a PC1 static embedding for every word in at least 5 STS sentences;
    a CPU budget cannot run all of STS, and STS alone lacks many benchmark words. This builder
    samples contexts for the benchmark words from a larger pool (:func:`context_pool`: the
    Brown corpus and every STS sentence):

    1. A word's *forms* are the word itself (lower-cased, matched against lower-cased runs of
       letters and digits) and, when it occurs in fewer than ``k`` pool sentences and
       ``plurals`` is set, its regular plurals (:func:`_plural_forms`; MEN lists lemmas).
    2. The *targets* are the words of every benchmark item (pair, question, word) whose words
       all occur in at least ``min_contexts`` pool sentences: an item with a rarer word could
       never be scored, so no context is spent on it.
    3. Candidate contexts are windows of at most ``window`` whitespace-separated words either
       side of a target occurrence, clipped to its sentence (long sentences are trimmed to a
       window; none is passed whole). A window counts for every target in it with at least
       ``margin`` words before it and ``margin`` after it (or its sentence's end): a target
       is never a context's first word (a decoder's attention sink) and always has some left
       context, the only context a decoder sees.
    4. Windows are taken greedily, the most still-needed targets per word of length first, ties
       in a random order drawn from ``seed``, until every target has ``k`` contexts or no window
       adds one. A pool sentence gives a word one context at most, so a word's contexts are
       distinct sentences.

    Deterministic for a seed. The word table flags the rows a window was taken for:
    ``is_target`` and ``target`` (the benchmark word; the row's text may be a plural form).

    Parameters
    ----------
    k : int
        Contexts wanted per target word (at least ``min_contexts``).
    window : int
        Words either side of a target.
    seed : int
        Tie-breaking order of the greedy choice.
    benchmarks : iterable of str
        Benchmark names (:data:`lmgeometry.io.benchmarks.BENCHMARKS`).
    min_contexts : int
        Pool sentences an item's words need for the item to be targeted.
    margin : int
        Context words a target needs before it (and after it, unless the sentence ends).
    plurals : bool
        Fall back on plural forms for words with fewer than ``k`` sentences.
    min_words : int
        Pool sentences of fewer whitespace-separated words are left out (headlines, list
        items: too little context).
    pool : (sentences, sources), optional
        Another pool (default :func:`context_pool`).
    frames : mapping of str to DataFrame, optional
        The benchmarks' frames by name (default: :func:`lmgeometry.io.benchmarks.load_benchmarks`
        of ``benchmarks``; given, ``benchmarks`` is ignored).

    Returns
    -------
    Corpus
        Name ``"benchmark_contexts"``; ``info`` holds the pool's size, the counts of targets,
        contexts (trimmed, from Brown, from STS), target rows from plural forms, target rows
        the word table could not match, and per benchmark the items and the items whose words
        all got ``min_contexts`` contexts.
    """
    where = "benchmark_contexts"
    if min_contexts < 1 or k < min_contexts or window < 1 or margin < 0 or margin > window:
        raise ValueError(f"{where}: need k >= min_contexts >= 1 and 0 <= margin <= window >= 1 "
                         f"(got k={k}, min_contexts={min_contexts}, window={window}, "
                         f"margin={margin})")
    names = list(benchmarks) if frames is None else list(frames)
    frames = load_benchmarks(names) if frames is None else frames
    texts, sources = context_pool() if pool is None else (list(pool[0]), list(pool[1]))
    words_of = {w for f in frames.values()
                for c in BENCHMARK_WORD_COLUMNS if c in f.columns
                for w in f[c].astype(str).str.lower()}
    plural_of = {p: w for w in sorted(words_of) for p in _plural_forms(w)} if plurals else {}
    hits = [(si, spans, [h for h in sentence_hits if h[0] >= margin])
            for si, spans, sentence_hits in _pool_hits(texts, words_of | plural_of.keys())
            if len(spans) >= min_words]
    forms, targets, per_benchmark = _forms_and_targets(hits, frames, words_of, plural_of, k,
                                                       min_contexts)
    cands = _candidate_windows(hits, forms, words_of, window, margin)
    spans_of = {si: spans for si, spans, _ in hits}
    chosen, words, unmatched = _take_contexts(cands, targets, k, seed, texts, spans_of)
    if not chosen:
        raise CorpusError(f"{where}: no pool sentence holds a benchmark word in "
                          f"{min_contexts} or more sentences")
    contexts = [texts[c.si][spans_of[c.si][c.a][0]:spans_of[c.si][c.b - 1][1]] for c in chosen]
    params = {"k": k, "window": window, "seed": int(seed), "benchmarks": names,
              "min_contexts": min_contexts, "margin": margin, "plurals": plurals,
              "min_words": min_words, "pool": "default" if pool is None else "custom"}
    corpus = Corpus(name=where, sentences=contexts, words=words, params=params)
    corpus.info.update(_context_info(corpus, chosen, spans_of, sources, frames, per_benchmark,
                                     min_contexts, len(texts)))
    corpus.info["targets_unmatched"] = unmatched
    corpus.info["pool_sentences_too_short"] = sum(len(t.split()) < min_words for t in texts)
    return corpus


def _context_info(corpus: Corpus, chosen: list[_Window], spans_of: Mapping[int, list],
                  sources: Sequence[str], frames: Mapping[str, pd.DataFrame],
                  per_benchmark: Mapping[str, dict[str, int]], min_contexts: int,
                  pool_size: int) -> dict[str, Any]:
    """How the contexts were built and what they cover (see :func:`benchmark_contexts`)."""
    w = corpus.words[corpus.words["is_target"]]
    per_word = w.groupby("target")["sentence_id"].nunique()
    covered = set(per_word.index[per_word >= min_contexts])
    coverage = {}
    for name, frame in frames.items():
        cols = [c for c in BENCHMARK_WORD_COLUMNS if c in frame.columns]
        ok = np.ones(len(frame), dtype=bool)
        for c in cols:
            ok &= frame[c].astype(str).str.lower().isin(covered).to_numpy()
        coverage[name] = {**per_benchmark[name], "covered_items": int(ok.sum()),
                          "coverage": float(ok.mean()) if len(ok) else math.nan}
    lengths = np.array([c.b - c.a for c in chosen])
    trimmed = sum(c.b - c.a < len(spans_of[c.si]) for c in chosen)
    return {
        "pool_sentences": pool_size,
        "contexts": len(chosen),
        "contexts_from": {s: sum(sources[c.si] == s for c in chosen)
                          for s in dict.fromkeys(sources)},
        "contexts_trimmed": int(trimmed),
        "context_words_mean": float(lengths.mean()),
        "context_words_max": int(lengths.max()),
        "target_words": int(len(per_word)),
        "plural_target_rows": int((w["text"].str.lower() != w["target"]).sum()),
        "target_words_covered": len(covered),
        "benchmarks": coverage,
    }
