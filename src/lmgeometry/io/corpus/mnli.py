"""MultiNLI dev-matched sentences with a polysemous target word (:func:`mnli_polysemy`, seed
000's visualisation corpus), sampled so that every target is represented.

Only sentences that may hold a target (a form spaCy's lemmatizer can map onto one) are parsed.

Williams, A., Nangia, N., Bowman, S. (2018). A broad-coverage challenge corpus for sentence
understanding through inference. NAACL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from lmgeometry.io import datasets, lexical
from lmgeometry.io.corpus.base import DEFAULT_SIZES, Corpus, _check_n, _too_few
from lmgeometry.io.corpus.table import _nlp, _subset, word_table
from lmgeometry.io.corpus.targets import _check_targets, _flag_targets

__all__ = [
    "mnli_polysemy",
    "mnli_target_counts",
]


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
