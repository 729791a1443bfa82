"""Why decoders split: massive activations and the attention sink, tested by intervention.

Seed 000 saw GPT-2's hidden states fall into "two very separate clusters", the smaller one the
first tokens; seed 001 measured GPT-2's hidden states as highly anisotropic. The mechanism
literature explains both by the attention sink: a few dimensions take massive values at the
first token (Sun et al. 2024), every later query puts most of its attention there (Xiao et al.
2024), and the first token's vector is pushed far from the rest (Gu et al. 2025). This chapter
measures the ingredients in every model and then removes each, one at a time, in the decoders
(:mod:`lmgeometry.activations.interventions`): the massive activations at the first position
(removed, zeroed, or set to their mean value there over the corpus, the last Sun et al.
2024's test of whether their values or only their presence matter), the attention to the first
position, or the sink token itself (toggled). A control asks what makes a first token one: each
sentence's fifth token is cut off from its context (it attends only to itself), and the chapter
measures whether it then joins the first tokens' cluster. For each run it measures
again, on the same sentences and tokens, the two-cluster split (chapter 1's statistic on
tokens), the anisotropy baseline, the first token's norm ratio, IntraSim and SelfSim, and the
language-model loss: an intervention that doubles the loss has broken the model, and its effect
on the geometry supports no causal verdict.

Every measure is token level (no pooling into words) over the sequence as the model ran it:
position 0 is whatever the sequence starts with (Gemma's ``<bos>``, SmolLM2's first word; with
the sink toggled, the other way round). Intervals are a bootstrap over sentences, one set of
draws shared by every model, layer and condition, so differences and ratios keep their
correlation.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lmgeometry.activations.interventions import INTERVENTIONS, TokenRun, run_tokens
from lmgeometry.chapters.common import ChapterResult, with_blas_threads
from lmgeometry.chapters.geometry.analysis import BROKEN_LOSS_RATIO
from lmgeometry.chapters.geometry.layers import SILHOUETTE
from lmgeometry.claims import Claim, attach_nulls, claims_frame
from lmgeometry.errors import UsageError
from lmgeometry.measures import massive
from lmgeometry.measures.baselines import anisotropy_baseline, cross_sentence_replicates
from lmgeometry.measures.clusters import detect_clusters, first_word_norm_ratio
from lmgeometry.measures.cosines import intra_sentence_similarity, self_similarity
from lmgeometry.measures.stats import GroupBootstrap, percentile_interval
from lmgeometry.report.claims import findings_html
from lmgeometry.report.prose import number, span

__all__ = [
    "analyse",
    "BROKEN_LOSS_RATIO",
    "coincident_runs",
    "CONDITIONS",
    "CLUSTER_CLAIM",
    "COINCIDE_TOLERANCE",
    "CONTEXT_CLAIM",
    "condition_layers",
    "DRIVEN_RATIO",
    "effect_reading",
    "KEPT_LOSS_RATIO",
    "LABELS",
    "LOSS_CLAIMS",
    "MASSIVE",
    "cluster_effects",
    "findings",
    "first_identical",
    "ISOLATED_POSITION",
    "massive_table",
    "massive_dims",
    "position_means",
    "sample_sentences",
    "SELFSIM_MIN_SENTENCES",
    "SINK_REMOVALS",
    "SinkResult",
    "summary_sentences",
    "with_context",
]

#: The decoders' runs; encoders run intact only (the contrast).
CONDITIONS = tuple(INTERVENTIONS)

#: The interventions on the sink (the other runs: intact, and the context control).
SINK_REMOVALS = ("massive", "massive_zero", "massive_mean", "attention", "sink")

#: Each run's name in figures, tables and the claims' ``control`` column.
LABELS = {"intact": "intact", "massive": "massive activations removed",
          "massive_zero": "massive activations zeroed",
          "massive_mean": "massive activations at their mean",
          "attention": "no attention to position 0", "sink": "sink token toggled",
          "isolated": "fifth token cut off from its context"}

#: The position cut off from its context in the control run: each sentence's fifth token
#: (position 0 is the first, a BOS token included), early enough that almost every sentence
#: has one, late enough that it has context to lose.
ISOLATED_POSITION = 4

#: The mechanism claim on the first-token cluster, tested under each intervention on the
#: massive activations.
CLUSTER_CLAIM = "beyond the paper: the first-token cluster is caused by massive activations"

#: The context control's claim: a token with no context is what makes a first token one.
CONTEXT_CLAIM = ("beyond the paper: a token that sees no context joins the first-token "
                 "cluster")

#: The interventions on the massive activations themselves.
MASSIVE = ("massive", "massive_zero", "massive_mean")

#: Sun et al. (2024): set to their mean value, the massive activations leave the model's loss
#: as it was; the loss may rise by at most this factor for the claim to hold.
KEPT_LOSS_RATIO = 1.1

#: The claims about the loss itself (judged whatever the loss; the others need a working model).
LOSS_CLAIMS = (
    "beyond the paper: set to their mean value, the massive activations leave the loss as it was",
    "beyond the paper: zeroing the massive activations breaks the model",
)

#: Anisotropy is *driven* by the sink when removing it leaves at most half of it (the mean
#: baseline over layers 1 to L - 1 falls by half or more).
DRIVEN_RATIO = 0.5

#: A token type enters SelfSim when it occurs (after position 0) in at least this many sentences.
SELFSIM_MIN_SENTENCES = 5

#: Silhouettes are computed on at most this many tokens per layer (they cost O(n^2)).
SILHOUETTE_SAMPLE = 2000

_SPAN = "layers 1 to L - 1"


@dataclass
class SinkResult(ChapterResult):
    """:class:`ChapterResult` with the dimensions reset per decoder and layer, and each model's
    kind."""

    dims: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)

    def results(self) -> dict:
        """The tables and claims, with the dimensions reset and the models' kinds."""
        return {**super().results(), "dims": self.dims, "kinds": self.kinds}


def sample_sentences(sentences: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` of the sentences, drawn without replacement with ``seed``, in their order."""
    if n < 2:
        raise ValueError(f"the sink chapter needs at least 2 sentences, not {n}")
    if n > len(sentences):
        raise ValueError(f"asked for {n} sentences of a corpus of {len(sentences)}: lower "
                         "n_sentences or enlarge the corpus")
    pick = np.sort(np.random.default_rng(seed).choice(len(sentences), n, replace=False))
    return [str(sentences[i]) for i in pick]


def massive_dims(run: TokenRun) -> dict[int, list[int]]:
    """Per layer from 1 on, the dimensions with massive activations at the first position
    (:func:`lmgeometry.measures.massive.massive_dimensions`) in an intact run."""
    first = run.tokens["position"].to_numpy() == 0
    out = {}
    for layer in range(1, run.n_layers):
        found = massive.massive_dimensions(np.asarray(run.states[layer]), first)
        if len(found):
            out[layer] = found.tolist()
    return out


def position_means(run: TokenRun, dims: Mapping[int, Sequence[int]]) -> dict[int, list[float]]:
    """Per layer of ``dims``, each dimension's mean value at the first position over the run's
    sentences: what Sun et al. (2024)'s "set to mean" intervention sets them to."""
    first = run.tokens["position"].to_numpy() == 0
    return {layer: np.asarray(run.states[layer])[first][:, list(d)].astype(np.float64)
            .mean(axis=0).tolist() for layer, d in dims.items()}


def first_identical(run: TokenRun) -> bool:
    """Whether the first position holds the same vector in every sentence in every layer from
    1 to L - 1 (a causal model whose sequences all start with the same token, and an
    intervention that sets the same values in each): a first-token "cluster" by construction."""
    first = run.tokens["position"].to_numpy() == 0
    for layer in range(1, run.n_layers - 1):
        X = np.asarray(run.states[layer])[first]
        if not np.allclose(X, X[0], rtol=1e-5, atol=1e-6):
            return False
    return True


def _interval(name: str, value: float, reps: np.ndarray) -> dict:
    lo, hi = percentile_interval(reps, value)
    return {name: float(value), f"{name}_lo": lo, f"{name}_hi": hi}


def _selfsim(X: np.ndarray, tokens: pd.DataFrame) -> float:
    """Mean SelfSim over the token types (after position 0) seen in enough sentences."""
    later = tokens[tokens["position"] > 0]
    spread = later.groupby("token_id")["sentence"].nunique()
    values = []
    for token in spread.index[spread >= SELFSIM_MIN_SENTENCES]:
        rows = later.index[later["token_id"] == token].to_numpy()
        values.append(self_similarity(X[rows], sentence_ids=tokens["sentence"].to_numpy()[rows]))
    return float(np.nanmean(values)) if values else float("nan")


def _layer(X: np.ndarray, tokens: pd.DataFrame, boot: GroupBootstrap, seed: int,
           probe: np.ndarray | None = None) -> tuple[dict, dict]:
    """Every measure of one layer of one run, with bootstrap replicates of the claimed ones;
    ``probe`` (a decoder's tokens at :data:`ISOLATED_POSITION`): how near the first tokens
    they lie (``context_silhouette``, NaN without)."""
    sentence = tokens["sentence"].to_numpy()
    first = tokens["position"].to_numpy() == 0
    X = np.asarray(X, dtype=np.float32)
    row: dict = {"magnitude_ratio": massive.magnitude_ratio(X)}
    (r, d, v), = massive.top_activations(X, 1)
    row.update(top_dim=d, top_value=v, top_position=int(tokens["position"].iat[r]),
               top_token=str(tokens["token"].iat[r]))
    found = detect_clusters(X, max_k=4, min_silhouette=SILHOUETTE, sample=SILHOUETTE_SAMPLE,
                            seed=seed)
    has = np.isfinite(found.silhouettes)
    reps = {"silhouette": boot.ratio(found.silhouettes[has], rows=sentence[has])}
    minor = found.split_labels != 0
    own = massive.first_token_silhouette(found.coords[has], first[has])
    reps["first_silhouette"] = boot.ratio(own, rows=sentence[has][first[has]]) if len(own) \
        else (float("nan"), np.full(boot.n_boot, np.nan))
    near = (massive.joining_silhouette(found.coords[has], probe[has], first[has])
            if probe is not None else np.array([]))
    reps["context_silhouette"] = boot.ratio(near, rows=sentence[has][probe[has]]) if len(near) \
        else (float("nan"), np.full(boot.n_boot, np.nan))
    row["first_share"] = float(first[minor].mean()) if minor.any() else float("nan")
    row["first_recall"] = float(minor[first].mean())
    reps["anisotropy"] = (anisotropy_baseline(X, sentence, n=None),
                          cross_sentence_replicates(X, sentence, boot.counts))
    norms = np.linalg.norm(X.astype(np.float64), axis=1)
    a, A = boot.ratio(norms[first], rows=sentence[first])
    b, B = boot.ratio(norms[~first], rows=sentence[~first])
    reps["norm_ratio"] = (first_word_norm_ratio(X, first), A / B)
    intra = np.array([intra_sentence_similarity(X[sentence == s]) for s in range(boot.n_groups)])
    reps["intrasim"] = boot.ratio(intra)
    for name, (value, rep) in reps.items():
        row.update(_interval(name, value, rep))
    row["selfsim"] = _selfsim(X, tokens)
    return row, {k: v[1] for k, v in reps.items()}


def _run_tables(label: str, condition: str, run: TokenRun, boot: GroupBootstrap, seed: int
                ) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """One row per layer of one run, and each claimed statistic's replicates (layers x B)."""
    tokens, attention = run.tokens, run.attention
    probe = ((tokens["position"] == ISOLATED_POSITION).to_numpy()
             if run.kind == "decoder" and condition in ("intact", "isolated") else None)
    rows, reps = [], {}
    for layer in range(run.n_layers):
        row, rep = _layer(run.states[layer], tokens, boot, seed, probe)
        if layer:
            a, A = boot.ratio(attention[layer - 1])
            row.update(_interval("attention_first", a, A))
        rows.append({"model": label, "condition": condition, "layer": layer,
                     "depth": layer / (run.n_layers - 1), **row})
        for k, v in rep.items():
            reps.setdefault(k, []).append(v)
    return pd.DataFrame(rows), {k: np.stack(v) for k, v in reps.items()}


def _loss_rows(label: str, runs: Mapping[str, TokenRun], boot: GroupBootstrap
               ) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Each intervention's loss per token against the intact run's, with the ratio's interval,
    and the ratio's bootstrap replicates per condition."""
    base, base_reps = boot.ratio(runs["intact"].nll, runs["intact"].targets)
    rows, ratios = [], {}
    for condition, run in runs.items():
        loss, reps = boot.ratio(run.nll, run.targets)
        ratio = loss / base
        ratios[condition] = reps / base_reps
        lo, hi = percentile_interval(ratios[condition], ratio)
        rows.append({"model": label, "condition": condition, "loss": loss, "loss_intact": base,
                     "ratio": ratio, "ratio_lo": lo, "ratio_hi": hi,
                     "broken": bool(lo > BROKEN_LOSS_RATIO),
                     "usable": bool(hi < BROKEN_LOSS_RATIO)})
    return pd.DataFrame(rows), ratios


def _mean_inner(reps: np.ndarray, values: np.ndarray) -> tuple[float, np.ndarray]:
    """The mean over layers 1 to L - 1 of a per-layer statistic, and its replicates."""
    return float(np.mean(values[1:-1])), reps[1:-1].mean(axis=0)


def _claim(seed: str, text: str, label: str, stat: str, value: float, reps: np.ndarray,
           threshold: float, direction: str, rule: str, control: str, figure: str,
           evidence: str) -> Claim:
    lo, hi = percentile_interval(reps, value)
    return Claim(seed=seed, claim=text, model=label, statistic=stat, value=value, ci_low=lo,
                 ci_high=hi, threshold=threshold, direction=direction, rule=rule,
                 control=control, figure=figure, evidence=evidence,
                 published="mechanism papers: Sun et al. 2024; Xiao et al. 2024; Gu et al. 2025")


def with_context(model: str) -> str:
    """The ``null_model`` of the context control: the same tokens, of the same model, in the
    intact run (with their context)."""
    return f"{model}: the same tokens with their context"


def _context_claims(label: str, layers: pd.DataFrame, reps: Mapping[str, dict]
                    ) -> list[Claim]:
    """The context control of one decoder: the claim on the run whose fifth tokens see no
    context, and its null, the same statistic on the same tokens in the intact run (model
    :func:`with_context`); none without the control run or a fifth token."""
    part = layers[layers["model"] == label]
    values = {c: part[part["condition"] == c]["context_silhouette"].to_numpy()
              for c in ("isolated", "intact")}
    if "isolated" not in reps or np.isnan(values["isolated"][1:-1]).all():
        return []
    out = []
    for condition, model in (("isolated", label), ("intact", with_context(label))):
        own = values[condition]
        at = int(np.nanargmax(own[1:-1])) + 1
        out.append(_claim(
            "000", CONTEXT_CLAIM, model,
            f"largest over {_SPAN} of the mean silhouette of each sentence's fifth token, "
            "counted with the first tokens, against all other tokens",
            float(own[at]), np.nanmax(reps[condition]["context_silhouette"][1:-1], axis=0),
            SILHOUETTE, "above",
            f"joins: the tokens cut off from their context lie with the first tokens, at a "
            f"silhouette of {SILHOUETTE} or more in some layer (a reasonable cluster, Kaufman "
            "& Rousseeuw 1990); the same tokens with their context are the null",
            LABELS["isolated"], "sink-context",
            f"largest at layer {at}" + ("" if condition == "intact" else
                                        "; with their context: largest "
                                        f"{number(np.nanmax(values['intact'][1:-1]))}")))
    return out


def _decoder_claims(label: str, layers: pd.DataFrame, reps: Mapping[str, dict],
                    losses: Mapping[str, tuple[float, np.ndarray]],
                    encoder_aniso: np.ndarray | None, encoder_value: float
                    ) -> list[Claim]:
    """The mechanism claims of one decoder (one row per intervention where it applies);
    ``losses``: condition -> (loss ratio to intact, its replicates)."""
    out = []
    part = layers[layers["model"] == label]
    intact = part[part["condition"] == "intact"]
    before = intact["first_silhouette"].to_numpy()[1:-1]
    for condition in [c for c in MASSIVE if c in reps]:
        own = part[part["condition"] == condition]["first_silhouette"].to_numpy()
        at = int(np.argmax(np.nan_to_num(own[1:-1], nan=-1))) + 1
        rep = np.nanmax(reps[condition]["first_silhouette"][1:-1], axis=0)
        out.append(_claim(
            "000", CLUSTER_CLAIM, label,
            f"largest over {_SPAN} of the first tokens' silhouette against the other "
            "tokens, under the intervention",
            float(own[at]), rep, SILHOUETTE, "below",
            f"the first tokens no longer form a cluster of their own when no layer's "
            f"silhouette of theirs reaches {SILHOUETTE} (Kaufman & Rousseeuw 1990)",
            LABELS[condition], "sink-split",
            f"largest at layer {at}; intact: largest {number(np.nanmax(before))}"))
    loss_tests = (  # Sun et al. (2024)'s two tests: (claim, condition, statistic, rule, ...)
        (LOSS_CLAIMS[0], "massive_mean", "at their mean value", KEPT_LOSS_RATIO, "below",
         f"kept: at most {KEPT_LOSS_RATIO:g} times the intact loss (Sun et al. 2024 report "
         "the perplexity unchanged to two decimals)",
         "the same sentences, the massive values the same in every sentence"),
        (LOSS_CLAIMS[1], "massive_zero", "zeroed", BROKEN_LOSS_RATIO, "above",
         f"broken: at least {BROKEN_LOSS_RATIO:g} times the intact loss (Sun et al. 2024 "
         "report the perplexity exploding)", "the same sentences"))
    for text, condition, how, threshold, direction, rule, evidence in loss_tests:
        if condition in losses:
            value, rep = losses[condition]
            out.append(_claim("000", text, label, f"loss per token with the massive "
                              f"activations {how} over intact", value, rep, threshold,
                              direction, rule, LABELS[condition], "sink-loss", evidence))
    base_value, base_reps = _mean_inner(reps["intact"]["anisotropy"],
                                        intact["anisotropy"].to_numpy())
    for condition in SINK_REMOVALS:
        if condition not in reps:
            continue
        values = part[part["condition"] == condition]["anisotropy"].to_numpy()
        value, rep = _mean_inner(reps[condition]["anisotropy"], values)
        out.append(_claim(
            "001", "beyond the paper: the decoders' high anisotropy is driven by the attention "
            "sink", label, f"mean anisotropy baseline over {_SPAN}, intervened over intact",
            value / base_value, rep / base_reps, DRIVEN_RATIO, "below",
            f"driven: removing the sink leaves at most {DRIVEN_RATIO:g} of the anisotropy",
            LABELS[condition], "sink-anisotropy",
            f"mean baseline {number(value)} against {number(base_value)} intact"))
        if encoder_aniso is not None:
            out.append(_claim(
                "001", "beyond the paper: without the attention sink a decoder's space is as "
                "isotropic as the encoders'", label,
                f"mean anisotropy baseline over {_SPAN} under the intervention minus the "
                "larger of the encoders' (same sentences)", value - encoder_value,
                rep - encoder_aniso, 0.0, "below",
                "as isotropic: no more anisotropic than the more anisotropic encoder",
                LABELS[condition], "sink-anisotropy",
                f"{number(value)} against the encoders' {number(encoder_value)}"))
    return out


def _applicability(frame: pd.DataFrame, loss: pd.DataFrame, layers: pd.DataFrame,
                   identical: Mapping[tuple[str, str], bool] | None = None,
                   coincide: Mapping[str, float] | None = None) -> pd.DataFrame:
    """A causal verdict needs an intervention that leaves the model working, a cluster to
    remove (or join), first tokens that can differ (``identical``: (model, control) -> whether
    the first position is the same vector in every sentence under that intervention), and one
    test is counted once (``coincide``: model -> the largest relative difference between its
    two runs, where cutting the attention to position 0 and toggling the sink token are the
    same computation, :func:`coincident_runs`: the first is then not judged)."""
    identical, coincide = identical or {}, coincide or {}
    frame = frame.copy()
    usable = {(r.model, LABELS[r.condition]): (r.usable, r.ratio_lo, r.ratio_hi)
              for r in loss.itertuples()}
    for i, row in frame.iterrows():
        model, control, claim = row["model"], row["control"], row["claim"]
        ok, lo, hi = usable.get((model, control), (True, np.nan, np.nan))
        reason = "" if ok or claim in LOSS_CLAIMS else (  # a loss claim is judged on the loss
            f"the intervention raises the loss {span(lo, hi)} times: not below "
            f"{BROKEN_LOSS_RATIO:g} times, so the model may be broken and its geometry supports "
            "no causal verdict")
        if not reason and claim == LOSS_CLAIMS[0] and identical.get((model, "intact")):
            reason = ("the first position holds the same token in every sentence, so its mean "
                      "value is its value: setting it there changes nothing")
        if not reason and claim == CLUSTER_CLAIM and identical.get((model, control)):
            reason = ("the first position holds the same token in every sentence and this "
                      "intervention sets the same values in each, so the first tokens' vectors "
                      "are identical: a cluster by construction, whatever its cause")
        if not reason and claim in (CLUSTER_CLAIM, CONTEXT_CLAIM):
            intact = layers[(layers["model"] == model) & (layers["condition"] == "intact")]
            if not (intact["first_silhouette_lo"].iloc[1:-1] >= SILHOUETTE).any():
                reason = (f"the intact model has no first-token cluster to "
                          f"{'remove' if claim == CLUSTER_CLAIM else 'join'} (in no layer is "
                          f"the first tokens' silhouette wholly above {SILHOUETTE})")
        if not reason and control == LABELS["attention"] and model in coincide:
            reason = ("the same computation as the sink token toggled, so one test, counted "
                      "there: with rotary positions, cutting every later query's attention to "
                      "the start token leaves each word's vector as running without it (largest "
                      f"relative difference {coincide[model]:.0e})")
        frame.at[i, "applies"] = not reason
        frame.at[i, "applies_reason"] = reason
        frame.at[i, "calibration"] = []
    return frame


#: Two runs are one computation when their words' vectors differ by less than this, relative
#: to their size (float32 sums in another order differ by about 1e-6).
COINCIDE_TOLERANCE = 1e-3


def coincident_runs(cut: TokenRun, toggled: TokenRun) -> float | None:
    """Whether cutting the attention to position 0 and toggling the sink token computed the
    same words' vectors: the largest relative difference over layers 1 to L - 1 (Frobenius
    norm of the difference over the norm), or None when they differ more than
    :data:`COINCIDE_TOLERANCE` or do not read the same tokens.

    The words are aligned by leaving out the run whose sequences start with a BOS token's
    leading token. In a decoder with rotary positions whose tokenizer prepends a BOS token
    (Gemma 3), the two are one computation: no word attends to the BOS token in the first run,
    and there is none in the second, and a rotary model sees only relative positions.
    """
    runs = []
    for run in (cut, toggled):
        keep = ((run.tokens["position"] > 0) if run.meta["prepend_bos"]
                else run.tokens["position"] >= 0).to_numpy()
        runs.append((run, keep))
    (a, keep_a), (b, keep_b) = runs
    if (a.n_layers != b.n_layers or keep_a.sum() != keep_b.sum()
            or not np.array_equal(a.tokens["token_id"].to_numpy()[keep_a],
                                  b.tokens["token_id"].to_numpy()[keep_b])):
        return None
    worst = 0.0
    for layer in range(1, a.n_layers - 1):
        A = np.asarray(a.states[layer])[keep_a].astype(np.float64)
        B = np.asarray(b.states[layer])[keep_b].astype(np.float64)
        worst = max(worst, float(np.linalg.norm(A - B) / max(np.linalg.norm(A), 1e-30)))
        if worst > COINCIDE_TOLERANCE:
            return None
    return worst


@with_blas_threads
def _known_kind(spec: str) -> str | None:
    """``"encoder"`` or ``"decoder"`` without loading weights: an alias's recorded kind, a
    local folder's (or cached hub snapshot's) config; None where that needs a download."""
    from lmgeometry.io import models as model_io

    if spec in model_io.ALIASES:
        return model_io.ALIASES[spec].kind
    folder = model_io.resolve_model(spec, fingerprint=False).folder
    if folder is None:
        return None
    from transformers import AutoConfig

    try:
        return model_io.model_kind(AutoConfig.from_pretrained(folder, local_files_only=True))
    except (OSError, ValueError):
        return None  # loading the model says what is wrong with it


def _require_decoder(models: Sequence[str], kinds: Mapping[str, str | None]) -> None:
    """Chapter 9 removes the sink's ingredients from decoders; with only encoders it has
    nothing to test (it failed with ``KeyError: 'model'``)."""
    if models and all(kinds.get(spec) == "encoder" for spec in models):
        raise UsageError(f"models={list(models)} are all encoders, and this chapter's "
                         "interventions act on decoders: add at least one decoder, e.g. "
                         "-p models '[\"minilm-l6\", \"smollm2-135m\"]'")


def analyse(models: Sequence[str], texts: Sequence[str], *, seed: int = 0,
            n_boot: int = 1000) -> SinkResult:
    """Measure the sink's ingredients in every model and remove each in the decoders.

    Parameters
    ----------
    models : sequence of str
        Model specs; decoders get every intervention, encoders run intact.
    texts : sequence of str
        The sentences (the same for every model).
    seed : int
        Seeds the clusterings and the bootstrap.
    n_boot : int
        Bootstrap replicates (sentences resampled).

    Returns
    -------
    SinkResult
        ``tables["layers"]``: one row per (model, condition, layer): ``magnitude_ratio``,
        ``top_dim``, ``top_value``, ``top_position``, ``top_token``, ``silhouette``,
        ``first_share``, ``first_recall``, ``anisotropy``, ``norm_ratio``, ``intrasim``,
        ``selfsim``, ``attention_first`` (each claimed one with ``_lo`` and ``_hi``);
        ``context_silhouette`` (a decoder's intact and context-control runs: how near the
        first tokens each sentence's fifth token lies);
        ``tables["loss"]``: one row per (decoder, condition) with the loss ratio;
        ``claims`` (the context control's beside its null, the same tokens with their
        context); ``dims``: the dimensions reset per decoder and layer.
    """
    _require_decoder(models, {spec: _known_kind(spec) for spec in models})
    texts = list(texts)
    boot = GroupBootstrap(np.arange(len(texts)), n_boot=n_boot, rng=seed)
    frames, losses, reps, dims, kinds, ratios, identical = [], [], {}, {}, {}, {}, {}
    coincide: dict[str, float] = {}
    for spec in models:
        runs = {"intact": run_tokens(spec, texts)}
        kinds[spec] = runs["intact"].kind
        if kinds[spec] == "decoder":
            dims[spec] = massive_dims(runs["intact"])
            if dims[spec]:
                runs["massive"] = run_tokens(spec, texts, "massive", dims=dims[spec])
                runs["massive_zero"] = run_tokens(spec, texts, "massive_zero", dims=dims[spec])
                runs["massive_mean"] = run_tokens(
                    spec, texts, "massive_mean", dims=dims[spec],
                    values=position_means(runs["intact"], dims[spec]))
            runs["attention"] = run_tokens(spec, texts, "attention")
            runs["sink"] = run_tokens(spec, texts, "sink")
            if (runs["intact"].tokens["position"] == ISOLATED_POSITION).sum() >= 2:
                runs["isolated"] = run_tokens(spec, texts, "isolated",
                                              positions=[ISOLATED_POSITION])
            same = coincident_runs(runs["attention"], runs["sink"])
            if same is not None:
                coincide[spec] = same
        reps[spec] = {}
        for condition, run in runs.items():
            identical[(spec, LABELS[condition])] = first_identical(run)
            frame, reps[spec][condition] = _run_tables(spec, condition, run, boot, seed)
            frame["sink_token"] = run.meta["prepend_bos"] if kinds[spec] == "decoder" else None
            frames.append(frame)
        if kinds[spec] == "decoder":
            rows, ratios[spec] = _loss_rows(spec, runs, boot)
            losses.append(rows)
    _require_decoder(models, kinds)  # a model whose kind was known only once loaded
    layers = pd.concat(frames, ignore_index=True)
    loss = pd.concat(losses, ignore_index=True) if losses else pd.DataFrame()
    encoders = [m for m in models if kinds[m] == "encoder"]
    enc_reps = enc_value = None
    if encoders:
        means = {m: _mean_inner(reps[m]["intact"]["anisotropy"],
                                layers[(layers["model"] == m)]["anisotropy"].to_numpy())
                 for m in encoders}
        top = max(means, key=lambda m: means[m][0])
        enc_value, enc_reps = means[top]
    claims, nulls = [], []
    for spec in models:
        if kinds[spec] == "decoder":
            part = loss[loss["model"] == spec].set_index("condition")["ratio"]
            claims += _decoder_claims(spec, layers, reps[spec],
                                      {c: (float(part[c]), r) for c, r in ratios[spec].items()},
                                      enc_reps, enc_value or 0.0)
            context = _context_claims(spec, layers, reps[spec])
            claims, nulls = claims + context[:1], nulls + context[1:]
    frame = claims_frame(claims)
    if not frame.empty:
        frame = _applicability(frame, loss, layers, identical, coincide)
        frame = attach_nulls(frame, claims_frame(nulls), {m: with_context(m) for m in kinds})
    result = SinkResult(tables={"layers": layers, "loss": loss,
                                "cluster_effect": cluster_effects(layers, reps, kinds)},
                        claims=frame, dims=dims, kinds=kinds)
    result.sentences = summary_sentences(result)
    return result


def cluster_effects(layers: pd.DataFrame, reps: Mapping[str, Mapping[str, dict]],
                    kinds: Mapping[str, str]) -> pd.DataFrame:
    """How much of the first-token cluster each intervention removes: an effect size, not a
    cut-off.

    Per decoder and intervention, the largest first-token silhouette over layers 1 to L - 1
    intact (:math:`s_0`) and intervened (:math:`s_1`), and the share removed,
    :math:`1 - s_1 / s_0` (0: untouched; 1: no trace of a cluster; above 1: the first tokens
    sit closer to the others than to each other), with a 95% interval from the same bootstrap
    draws for both runs.

    Returns
    -------
    DataFrame
        ``model``, ``condition``, ``intact``, ``intervened``, ``removed``, ``removed_lo``,
        ``removed_hi``, ``reading`` (:func:`effect_reading`).
    """
    rows = []
    for model, kind in kinds.items():
        if kind != "decoder":
            continue
        base = reps[model]["intact"]["first_silhouette"][1:-1]
        part = layers[layers["model"] == model]
        s0 = float(np.nanmax(part[part["condition"] == "intact"]["first_silhouette"]
                             .to_numpy()[1:-1]))
        for condition, rep in reps[model].items():
            if condition not in SINK_REMOVALS:
                continue
            s1 = float(np.nanmax(part[part["condition"] == condition]["first_silhouette"]
                                 .to_numpy()[1:-1]))
            draws = 1 - np.nanmax(rep["first_silhouette"][1:-1], axis=0) / np.nanmax(base, axis=0)
            lo, hi = percentile_interval(draws, 1 - s1 / s0)
            rows.append({"model": model, "condition": condition, "intact": s0,
                         "intervened": s1, "removed": 1 - s1 / s0, "removed_lo": lo,
                         "removed_hi": hi, "reading": effect_reading(lo, hi)})
    return pd.DataFrame(rows, columns=["model", "condition", "intact", "intervened", "removed",
                                       "removed_lo", "removed_hi", "reading"])


#: The shares of an effect removed that :func:`effect_reading` calls "most" (at least half)
#: and "none" (under a tenth).
MOST_SHARE, NONE_SHARE = 0.5, 0.1


def effect_reading(lo: float, hi: float) -> str:
    """A share removed read in words from its 95% interval: ``"most"`` (the whole interval at
    :data:`MOST_SHARE` or more), ``"none"`` (wholly under :data:`NONE_SHARE`), ``"part"``
    (wholly between), and where the interval straddles a bound both words
    (``"none or part"``, ``"part or most"``).

    Examples
    --------
    >>> effect_reading(0.36, 0.40), effect_reading(-0.07, -0.06), effect_reading(0.45, 0.55)
    ('part', 'none', 'part or most')
    """
    def word(x: float) -> str:
        return "most" if x >= MOST_SHARE else "none" if x < NONE_SHARE else "part"

    low, high = word(lo), word(hi)
    return low if low == high else f"{low} or {high}"


def summary_sentences(result: SinkResult) -> list[str]:
    """What the run shows, one paragraph per decoder: what each intervention costs, then each
    claim's verdicts under the interventions, from the claims table."""
    out = []
    loss, claims, layers = result.tables["loss"], result.claims, result.tables["layers"]
    for model, part in loss.groupby("model", sort=False):
        costs = "; ".join(
            f"{LABELS[r.condition]} {number(r.ratio)} times [{number(r.ratio_lo)}, "
            f"{number(r.ratio_hi)}]" + ("" if r.usable else " (may be broken)")
            for r in part.itertuples() if r.condition != "intact")
        text = [f"**{model}.** The loss per token, against the intact model's "
                f"{number(part['loss_intact'].iat[0])} nats: {costs}."]
        reset = layers[(layers["model"] == model) & (layers["condition"] == "massive")
                       & (layers["silhouette"] >= SILHOUETTE)].iloc[1:-1]
        if not reset.empty:
            text.append(f"Where a k-means split survives the removal of the massive "
                        f"activations ({len(reset)} layers), "
                        f"first tokens make up {number(100 * reset['first_share'].mean(), 0)}% "
                        "of its smaller clusters on average.")
        for claim, rows in claims[claims["model"] == model].groupby("claim", sort=False):
            judged = rows[rows["applies"]]
            verdicts = "; ".join(
                f"{r.control}: {number(r.value)} [{number(r.ci_low)}, {number(r.ci_high)}]"
                for r in judged.itertuples())
            agreed = judged["verdict"].unique()
            head = (agreed[0] + (f" under each of the {len(judged)} interventions"
                                 if len(judged) > 1 else "") if len(agreed) == 1
                    else "; ".join(f"{r.verdict} under {r.control}"
                                   for r in judged.itertuples()))
            skipped = rows[~rows["applies"]]
            unjudged = [f"not judged under {r.control}: {r.applies_reason}"
                        for r in skipped.itertuples()]
            text.append(f"\u201c{claim.removeprefix('beyond the paper: ')}\u201d: "
                        + "; ".join(([f"{head} ({rows['statistic'].iat[0]}: {verdicts}; "
                                      f"threshold {rows['threshold'].iat[0]:g}, "
                                      f"{rows['direction'].iat[0]})"] if len(judged) else [])
                                    + unjudged) + ".")
        out.append(" ".join(text))
    return out


def _largest_inner(layers: pd.DataFrame, model: str, condition: str, column: str
                   ) -> tuple[float, int]:
    part = layers[(layers["model"] == model) & (layers["condition"] == condition)]
    inner = part.iloc[1:-1]
    if inner[column].isna().all():
        return float("nan"), -1
    at = inner[column].idxmax()
    return float(inner.at[at, column]), int(inner.at[at, "layer"])


#: The interventions on the massive activations in a findings line's few words.
_SHORT = {"massive": "removed", "massive_zero": "zeroed", "massive_mean": "at their mean"}

#: The context control's verdict in a findings line's words.
_JOINS = {"holds": "joins", "does not hold": "does not join",
          "inconclusive": "may or may not join"}

#: A claim row's ``control`` (the intervention's label) -> its condition.
_CONDITION = {label: condition for condition, label in LABELS.items()}


def _share_phrase(effect: pd.Series) -> str:
    """``" (part of it gone: 38% [36, 40])"``, or ``" (none gone: 6% [5, 6] more)"`` for a
    negative share (whole per cents: the shares are effect sizes, read in words by
    :func:`effect_reading`, not thresholds)."""
    value, lo, hi = (100 * float(effect[c]) for c in ("removed", "removed_lo", "removed_hi"))
    if value < 0:
        return f" (none gone: {-value:.0f}% [{-hi:.0f}, {-lo:.0f}] more)"
    return (f" ({effect['reading']} of it gone: {value:.0f}% [{lo:.0f}, {hi:.0f}])"
            .replace("-0", "0"))


def findings(result: SinkResult) -> str:
    """The chapter's answer first: an HTML admonition (:func:`lmgeometry.report.claims.
    findings_html`), one line per decoder, generated from the results; model names and controls
    escaped. The interventions' story (a cluster dissolved or not, the anisotropy halved or not)
    is the chapter's own, so it does not use the generic :func:`~lmgeometry.report.claims.
    findings_box`."""
    layers, claims = result.tables["layers"], result.claims
    lines = []
    for model in [m for m, k in result.kinds.items() if k == "decoder"]:
        rows = claims[claims["model"] == model]
        cluster = rows[rows["claim"] == CLUSTER_CLAIM].set_index("control")
        before, _ = _largest_inner(layers, model, "intact", "first_silhouette")
        effects = result.tables["cluster_effect"]
        judged = cluster[cluster["applies"].astype(bool)]
        fate = ("stays under every judged intervention on the massive activations"
                if len(judged) and (judged["verdict"] == "does not hold").all() else
                "under the interventions on the massive activations")
        tests = []
        for condition in (c for c in MASSIVE if LABELS[c] in cluster.index):
            row = cluster.loc[LABELS[condition]]
            eff = effects[(effects["model"] == model) & (effects["condition"] == condition)]
            tests.append(f"{_SHORT[condition]} {number(row['value'])}"
                         + (_share_phrase(eff.iloc[0]) if len(eff) else "")
                         + ("" if not row["applies"] else "" if fate.startswith("stays")
                            else f", {row['verdict']}")
                         + ("" if row["applies"] else " (not judged)"))
        parts = [f"<b>{html.escape(model)}</b>: the first tokens' cluster (silhouette "
                 f"{number(before)} intact) {fate}: " + ", ".join(tests)]
        alone = rows[(rows["claim"] == CONTEXT_CLAIM) & rows["applies"].astype(bool)]
        if len(alone):
            r = alone.iloc[0]
            parts.append(f"each sentence's fifth token, cut off from its context, "
                         f"{_JOINS[r['verdict']]} the first tokens (silhouette with them "
                         f"{number(r['value'])}; with its context {number(r['null_value'])})")
        kept = rows[rows["claim"].isin(LOSS_CLAIMS) & rows["applies"].astype(bool)]
        if len(kept):
            parts.append("the loss " + ", ".join(
                f"{_SHORT[_CONDITION[r.control]]} {number(r.value)} times"
                for r in kept.itertuples()))
        aniso = rows[rows["claim"].str.contains("driven") & rows["applies"].astype(bool)]
        if not aniso.empty:
            low = aniso.loc[aniso["value"].idxmin()]
            parts.append(f"no working intervention halves the anisotropy (at least "
                         f"{number(low['value'])} of it stays)"
                         if (aniso["verdict"] == "does not hold").all() else
                         "the anisotropy falls by half or more under: " + html.escape(", ".join(
                             aniso[aniso["verdict"] == "holds"]["control"])))
        lines.append("; ".join(parts) + ".")
    return findings_html(
        "Do the attention sink's massive activations cause the decoders' first-token cluster "
        "and their anisotropy?",
        "<p><b>Answer, from this run.</b> " + " ".join(lines) + "</p>",
        "Two small 4-bit decoders with rotary positions stand in for GPT-2, on short "
        "sentences; an intervention that doubles the loss supports no causal verdict (the loss "
        "table says which do).")


def massive_table(result: SinkResult) -> pd.DataFrame:
    """Per model: where its largest activation peaks, and the layers the reset touches."""
    from lmgeometry.report.prose import layer_ranges

    layers = result.tables["layers"]
    rows = []
    for model in result.kinds:
        part = layers[(layers["model"] == model) & (layers["condition"] == "intact")]
        peak = part.loc[part["magnitude_ratio"].idxmax()]
        dims = result.dims.get(model, {})
        rows.append({"model": model, "peak layer": int(peak["layer"]),
                     "largest / median": float(peak["magnitude_ratio"]),
                     "dimension": int(peak["top_dim"]), "position": int(peak["top_position"]),
                     "token": str(peak["top_token"]),
                     "reset at position 0": (f"layers {layer_ranges(dims)}, "
                                             f"{len({d for v in dims.values() for d in v})} "
                                             "dimensions") if dims else "nothing"})
    return pd.DataFrame(rows)


def condition_layers(layers: pd.DataFrame) -> pd.DataFrame:
    """Per model and condition (in their order in ``layers``), its number of layers.

    Returns
    -------
    DataFrame
        ``model``, ``condition``, ``layers``.
    """
    rows = [{"model": spec, "condition": condition, "layers": len(part)}
            for (spec, condition), part in layers.groupby(["model", "condition"], sort=False)]
    return pd.DataFrame(rows, columns=["model", "condition", "layers"])
