"""Chapter "A controlled pair" (issue 33): an encoder and a decoder trained here, identical but
for the objective, and seed 004's drift put to a test by a third run.

The seeds compare BERT with GPT-2, which differ in objective, data, tokenizer and size; the
stand-ins of the other chapters differ more. :mod:`lmgeometry.training.pretrain` trains a
BERT-architecture masked LM and a GPT-2-architecture causal LM alike in all but the objective
(learned absolute positions, one tokenizer, one text, one token budget and seed), with
checkpoints across training. This module runs the book's existing measures on them:

* the learning curves against each run's unigram baseline (:func:`learning_curves`, and
  :func:`claims.learned`: which runs beat their baseline clearly);
* the seeds' encoder-versus-decoder claims on the final pair: chapter 1's
  (:func:`geometry.analyse`: two clusters, the first word, the position manifold) and chapter
  3's (:func:`context.analyse`: anisotropy, SelfSim, IntraSim with depth), unchanged;
* across checkpoints (:func:`checkpoint_tables`): W's I(W) and common direction
  (:func:`isotropy.embedding_statistics`, seed 004), and per layer the hidden states' mean
  cosine, mean-vector share and I(X) (:func:`hidden_state_layers`) and chapter 1's
  split, first-word share and position-manifold k-NN gain (:func:`geometry.analyse`);
* seed 004's mechanism tested by a third run, the causal model with an output layer of its own
  (``tie_embeddings=False``): with untied weights the softmax gradient that pushes every
  non-target output row one way no longer reaches the input embeddings
  (:func:`claims.drift_claim`); the untied output matrix should keep the direction
  (:func:`claims.output_claim`), and along it the rarest tokens, not the most frequent, should
  lie furthest (:func:`claims.rarity_claim`, counts from the training text: a frequency
  direction would put the most frequent furthest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.activations.store import Store, activations
from lmgeometry.chapters import context, geometry
from lmgeometry.chapters.common import ChapterResult, with_blas_threads
from lmgeometry.chapters.drift.analysis import hidden_state_layers
from lmgeometry.chapters.pair.claims import (
    TIED,
    UNTIED,
    drift_claim,
    learned,
    output_claim,
    rarity_claim,
)
from lmgeometry.chapters.pair.sentences import (
    about_runs,
    claim_lines,
    drift_sentences,
    learning_facts,
    not_learned,
    training_facts,
)
from lmgeometry.claims import attach_nulls, claims_frame
from lmgeometry.io.corpus import Corpus
from lmgeometry.io.models import input_embeddings, load_model
from lmgeometry.measures import isotropy
from lmgeometry.training.pretrain import Pretrained, pretrain, pretraining_texts, split_texts
from lmgeometry.training.pretrain_settings import PretrainSettings

__all__ = [
    "LABELS",
    "PairResult",
    "RUNS",
    "analyse",
    "checkpoint_tables",
    "learning_curves",
    "run_settings",
    "train_runs",
    "training_counts",
    "untied_input",
    "w_statistics",
]

#: The three runs: the pair, and the causal run with its output layer untied.
RUNS = ("mlm", "causal", "causal-untied")

#: Each run's model label in the tables and claims.
LABELS = {"mlm": "pair-mlm", "causal": "pair-causal", "causal-untied": "pair-causal-untied"}

#: The runs the intervention's verdict compares.
_INTERVENTION = ("causal", "causal-untied")

#: The columns of chapter 1's per-layer table kept across checkpoints.
_GEOMETRY_COLUMNS = ("silhouette", "silhouette_lo", "silhouette_hi", "split", "minor_share",
                     "first_share", "first_share_lo", "first_share_hi", "knn_gain",
                     "knn_gain_lo", "knn_gain_hi", "norm_ratio_first")

#: The columns of chapter 4's hidden-state table kept across checkpoints.
_HIDDEN_COLUMNS = ("mean_cosine", "mean_cosine_lo", "mean_cosine_hi", "shift_prediction",
                   "mean_vector_ratio", "log_isotropy_raw")


@dataclass
class PairResult(ChapterResult):
    """:class:`ChapterResult` with the runs' kinds, whether each learned clearly, and the
    sentences about each run by name (``per_run``: model label -> topic -> sentence)."""

    kinds: dict[str, str] = field(default_factory=dict)
    learned: dict[str, bool] = field(default_factory=dict)
    per_run: dict[str, dict[str, str]] = field(default_factory=dict)

    def about(self, model: str, topic: str) -> str:
        """The sentence on ``topic`` (``"learning"``, ``"training"``) about the run ``model``
        (a label of :data:`LABELS`)."""
        if topic not in self.per_run.get(model, {}):
            known = {m: sorted(t) for m, t in self.per_run.items()}
            raise ValueError(f"no {topic!r} sentence about {model!r}; this result has "
                             f"{known or 'none'}: name a run by its label (pair.LABELS)")
        return self.per_run[model][topic]


def run_settings(tokens: int, checkpoints: int = 8, seed: int = 0) -> dict[str, PretrainSettings]:
    """The three runs' settings: the defaults of :class:`PretrainSettings` but ``tokens``,
    ``checkpoints`` and ``seed``; the third is the causal run with ``tie_embeddings=False``."""
    base = PretrainSettings(tokens=tokens, checkpoints=checkpoints, seed=seed)
    return {"mlm": replace(base, objective="mlm"), "causal": replace(base, objective="causal"),
            "causal-untied": replace(base, objective="causal", tie_embeddings=False)}


def train_runs(settings: Mapping[str, PretrainSettings], *, root: str | Path | None = None,
               device: str | None = "cpu") -> dict[str, Pretrained]:
    """Each run of ``settings`` trained, or found in the cache (sha256-verified)."""
    return {name: pretrain(s, root=root, device=device, progress=False)
            for name, s in settings.items()}


def learning_curves(runs: Mapping[str, Pretrained]) -> pd.DataFrame:
    """One row per (run, checkpoint): the held-out curve each run recorded while training."""
    rows = [{"run": name, "model": LABELS.get(name, name), "objective": r.settings.objective,
             **{k: v for k, v in c.items() if k != "folder"}}
            for name, r in runs.items() for c in r.curve]
    return pd.DataFrame(rows)


def w_statistics(W: np.ndarray, *, n_boot: int = 1000, seed: int = 0) -> dict[str, float]:
    """Seed 004's numbers for one input embedding matrix: I(W) raw and centred with their
    intervals, the mean cosine between rows (the common direction) and ||mu|| / mean norm."""
    s = isotropy.embedding_statistics(W, n_boot=n_boot, rng=np.random.default_rng(seed))
    keys = ["isotropy_raw", "isotropy_centered", "log_isotropy_raw", "mean_cosine",
            "mean_vector_ratio", "isoscore"]
    if n_boot:
        keys += ["isotropy_raw_lo", "isotropy_raw_hi"]
    return {k: float(s[k]) for k in keys}


def _store(folder: Path, corpus: Corpus, label: str) -> Store:
    """A checkpoint's store on ``corpus`` (extracted once, cached), labelled ``label``.

    The entry is opened once, by :func:`activations` under the folder's path, and only then
    relabelled: opening it again under ``label`` would record the entry's model as the label
    (:mod:`lmgeometry.trace`), which the book's execution manifest cannot fingerprint, and the
    chapter would run again on every warm build (:func:`lmgeometry.report.cache.stale_reasons`).
    """
    store = activations(str(folder), corpus)
    store.label = label
    return store


def _checkpoint_rows(store: Store, *, seed: int, n_words: int, n_boot: int
                     ) -> pd.DataFrame:
    """One checkpoint's per-layer numbers (the seed's protocol, every word)."""
    hidden = hidden_state_layers(store, n_words, seed, n_boot)["hidden"]
    hidden = hidden[hidden["control"] == "none"].set_index("layer")[list(_HIDDEN_COLUMNS)]
    split = geometry.analyse({store.label: store}, seed=seed, n_words=n_words,
                             point_budget=min(100, n_words), umap_layers=0, n_boot=n_boot)
    lay = split.tables["layers"]
    lay = lay[lay["control"] == "none"].set_index("layer")[list(_GEOMETRY_COLUMNS)]
    out = hidden.join(lay).reset_index()
    out.insert(1, "depth", out["layer"] / (store.n_layers - 1))
    return out


def checkpoint_tables(runs: Mapping[str, Pretrained], corpus: Corpus, *, seed: int = 0,
                      n_words: int = 1000, n_boot: int = 1000
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every checkpoint of every run, measured.

    Returns
    -------
    embeddings : DataFrame
        One row per (run, step): :func:`w_statistics` of the input embedding matrix.
    layers : DataFrame
        One row per (run, step, layer): the hidden states' mean cosine (anisotropy, with
        its interval over sentences), the mean vector's prediction of it and ||mu|| / mean
        norm, ln I(X) (:func:`hidden_state_layers`), and chapter 1's best split,
        first-word share of the smaller cluster and position-manifold k-NN gain with their
        intervals (:func:`geometry.analyse`), on ``n_words`` words of ``corpus``.
    """
    embeddings, layers = [], []
    for name, run in runs.items():
        for step, folder in sorted(run.checkpoints.items()):
            label = f"{LABELS.get(name, name)}@{step}"
            tokens = next(c["tokens"] for c in run.curve if c["step"] == step)
            head = {"run": name, "model": LABELS.get(name, name), "step": step,
                    "tokens": tokens}
            W = input_embeddings(load_model(str(folder)))
            embeddings.append(head | w_statistics(W, n_boot=n_boot, seed=seed))
            rows = _checkpoint_rows(_store(folder, corpus, label), seed=seed,
                                    n_words=n_words, n_boot=n_boot)
            layers.append(rows.assign(**head)[[*head, *rows.columns]])
    return pd.DataFrame(embeddings), pd.concat(layers, ignore_index=True)


def _claims_at(runs: Mapping[str, Pretrained], words: Corpus, sts: Corpus, *, step: int | None,
               seed: int, n_words: int, n_boot: int) -> tuple[pd.DataFrame, dict[str, str]]:
    """Chapters 1 and 3's seed claims on the pair's checkpoints of ``step`` (None: the last),
    labelled by run (``"<run>@0"`` for an earlier step), and each label's kind of model."""
    pair = [n for n in ("mlm", "causal") if n in runs]
    folder = {n: runs[n].final if step is None else runs[n].checkpoints[step] for n in pair}
    label = {n: LABELS[n] if step is None else f"{LABELS[n]}@{step}" for n in pair}
    on_words = {label[n]: _store(folder[n], words, label[n]) for n in pair}
    on_sts = {label[n]: _store(folder[n], sts, label[n]) for n in pair}
    one = geometry.analyse(on_words, seed=seed, n_words=n_words,
                           point_budget=min(100, n_words), umap_layers=0, n_boot=n_boot)
    three = context.analyse(on_sts, seed=seed, n_boot=n_boot, authors=False,
                                     neighbour_queries=min(3000, len(sts.words)))
    kinds = {s.label: s.meta.get("model", {}).get("kind", "") for s in on_words.values()}
    return pd.concat([one.claims.assign(source_chapter=1), three.claims.assign(source_chapter=3)],
                     ignore_index=True), kinds


def _final_claims(runs: Mapping[str, Pretrained], words: Corpus, sts: Corpus, *, seed: int,
                  n_words: int, n_boot: int) -> tuple[pd.DataFrame, dict[str, str]]:
    """Chapters 1 and 3's seed claims on the pair's last checkpoints (the seeds' protocol),
    each row beside its null: the same claim on the run's step-0 checkpoint, the same
    architecture and tokenizer before any training (:func:`.nulls.with_nulls`)."""
    kw = dict(seed=seed, n_words=n_words, n_boot=n_boot)
    final, kinds = _claims_at(runs, words, sts, step=None, **kw)
    untrained, _ = _claims_at(runs, words, sts, step=0, **kw)
    pair = [n for n in ("mlm", "causal") if n in runs]
    return attach_nulls(final, untrained, {LABELS[n]: f"{LABELS[n]}@0" for n in pair}), kinds


def training_counts(run: Pretrained, tokenizer: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each vocabulary piece's count in ``run``'s training text (its split of
    :func:`~lmgeometry.training.pretrain.pretraining_texts`, tokenised as it was trained), and
    which pieces are not special tokens."""
    train, _ = split_texts(pretraining_texts()[0], run.settings.seed)
    ids = tokenizer(train)["input_ids"]
    counts = np.bincount(np.fromiter((i for row in ids for i in row), dtype=np.int64),
                         minlength=len(tokenizer))
    plain = np.ones(len(counts), bool)
    plain[list(tokenizer.all_special_ids)] = False
    return counts, plain


def untied_input(model: str) -> str:
    """The ``null_model`` of the drift's output and rarity claims: the untied run's input
    matrix, the same tokens and training with no common enemy reaching it."""
    return f"{model}: the untied run's input matrix"


def _output_matrix(loaded: Any) -> np.ndarray:
    """An untied causal LM's output (softmax) matrix, float32 (vocabulary x width)."""
    head = loaded.model.get_output_embeddings()
    if head is None:
        raise ValueError("the untied run was loaded without its output layer: load it as a "
                         "causal LM (lmgeometry.io.models.load_model on its folder)")
    return head.weight.detach().float().cpu().numpy()


def _drift_frame(runs: Mapping[str, Pretrained], *, n_boot: int, seed: int) -> pd.DataFrame:
    """The intervention's claims (empty without both causal runs): the drift difference, the
    untied output matrix's common direction, and which tokens lie furthest along the tied W's
    and the untied output matrix's."""
    if not set(_INTERVENTION) <= set(runs):
        return claims_frame([])
    loaded = {n: load_model(str(runs[n].final)) for n in _INTERVENTION}
    W = {n: input_embeddings(loaded[n]) for n in _INTERVENTION}
    W_out = _output_matrix(loaded["causal-untied"])
    label = LABELS["causal"]
    claim, unfair = drift_claim(W["causal"], W["causal-untied"], label, n_boot=n_boot,
                                seed=seed)
    counts, plain = training_counts(runs["causal"], loaded["causal"].tokenizer)
    kw = {"n_boot": n_boot, "seed": seed}

    def tests(out: np.ndarray, tied: np.ndarray, model: str) -> list:
        return [output_claim(out, model, **kw),
                rarity_claim(tied, counts, plain, model, TIED, **kw),
                rarity_claim(out, counts, plain, model, UNTIED, **kw)]

    # the null of both: the untied run's input matrix, which no common enemy reaches
    null = untied_input(label)
    frame = attach_nulls(claims_frame([claim, *tests(W_out, W["causal"], label)]),
                         claims_frame(tests(W["causal-untied"], W["causal-untied"], null)),
                         {label: null})
    frame = frame.assign(applies=True, applies_reason="", source_chapter=10)
    frame.loc[[0, 2], "applies"] = not unfair  # no drift in the tied W: nothing to read
    frame.loc[[0, 2], "applies_reason"] = unfair
    if frame.at[1, "verdict"] != "holds":
        frame.loc[3, ["applies", "applies_reason"]] = [
            False, "the untied output matrix shows no clear common direction: there is no "
            "direction to read the tokens along"]
    return frame


def _unlearned_unfair(claims: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """A model that did not learn clearly supports no verdict: its rows become unfair tests,
    and so does the intervention's (``source_chapter`` 10) when either causal run did not."""
    out = claims.copy()
    intervention = (out["source_chapter"] == 10 if "source_chapter" in out
                    else pd.Series(False, out.index))
    for _, r in table[~table["learned"]].iterrows():
        rows = (out["model"] == r["model"]) | (intervention & (r["run"] in _INTERVENTION))
        why = f"{not_learned(r)}: its geometry says little about its objective"
        out.loc[rows, "applies_reason"] = [f"{why}; {old}" if old else why
                                           for old in out.loc[rows, "applies_reason"]]
        out.loc[rows, "applies"] = False
    return out


@with_blas_threads
def analyse(runs: Mapping[str, Pretrained], words: Corpus, sts: Corpus, *, seed: int = 0,
            n_words: int = 1000, n_boot: int = 1000) -> PairResult:
    """The chapter's numbers: learning curves, the pair's claims, the checkpoints, the drift.

    Parameters
    ----------
    runs : mapping
        :func:`train_runs` output, by run name (:data:`RUNS`); ``"mlm"`` and ``"causal"``
        make the pair, ``"causal-untied"`` the intervention.
    words : Corpus
        Chapter 1's corpus (:func:`lmgeometry.io.corpus.mnli_polysemy`).
    sts : Corpus
        Chapter 3's corpus (:func:`lmgeometry.io.corpus.sts`).
    seed, n_words, n_boot
        Seeds every sample and bootstrap; words sampled per store; bootstrap replicates.

    Returns
    -------
    PairResult
        ``tables``: ``curves`` (:func:`learning_curves`), ``learned``
        (:func:`claims.learned`), ``embeddings`` and ``layers``
        (:func:`checkpoint_tables`); ``claims``: chapters 1 and 3's seed claims on the final
        pair (``source_chapter`` 1 or 3) and the intervention's (``source_chapter`` 10);
        ``topics``: ``learning``, ``claims`` (the primary seed claims, the unfair tests
        grouped by run), ``training`` (when the signatures appear), ``drift``; ``per_run``:
        the ``learning`` and ``training`` sentences by run label (:meth:`PairResult.about`),
        where a run that did not learn clearly says so.
    """
    unknown = set(runs) - set(RUNS)
    if unknown or not {"mlm", "causal"} <= set(runs):
        raise ValueError(f"runs must hold 'mlm' and 'causal' (and optionally "
                         f"'causal-untied'), not {sorted(runs)}: pass pair.train_runs("
                         "pair.run_settings(tokens))")
    curves = learning_curves(runs)
    table = learned(curves)
    embeddings, layers = checkpoint_tables(runs, words, seed=seed, n_words=n_words,
                                           n_boot=n_boot)
    final, kinds = _final_claims(runs, words, sts, seed=seed, n_words=n_words, n_boot=n_boot)
    intervention = _drift_frame(runs, n_boot=n_boot, seed=seed)
    claims = _unlearned_unfair(pd.concat([final, intervention], ignore_index=True), table)
    per_run = _per_run(table, embeddings, layers)
    seeds = claims[(claims["source_chapter"] != 10) & (claims["role"] == "primary")]
    return PairResult(
        tables={"curves": curves, "learned": table, "embeddings": embeddings,
                "layers": layers},
        claims=claims,
        topics={"learning": [by["learning"] for by in per_run.values()],
                "claims": claim_lines(seeds, table, kinds),
                "training": [by["training"] for by in per_run.values() if "training" in by],
                "drift": drift_sentences(claims[claims["source_chapter"] == 10])},
        kinds=kinds, learned=dict(zip(table["model"], table["learned"].astype(bool),
                                      strict=True)),
        per_run=per_run)


def _per_run(table: pd.DataFrame, embeddings: pd.DataFrame, layers: pd.DataFrame
             ) -> dict[str, dict[str, str]]:
    """Model label -> topic -> the sentence about that run (:func:`about_runs`)."""
    said = {"learning": about_runs(table, learning_facts(table),
                                                  caveat=False),
            "training": about_runs(
                table, training_facts(embeddings, layers))}
    return {m: {t: by[m] for t, by in said.items() if m in by} for m in table["model"]}
