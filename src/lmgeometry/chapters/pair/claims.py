"""The controlled pair's own verdicts (chapter "A controlled pair"): did each model learn, and
does seed 004's drift depend on the tied output layer?

* :func:`learned`: a run learned clearly when its held-out cross-entropy at the last checkpoint
  is at least :data:`LEARNED_GAIN` nats per token below its unigram baseline's;
* :func:`drift_claim`: the intervention's verdict, the paired difference in W's common
  direction (mean cosine between rows, Biš et al. 2021) between the causal run with tied
  embeddings and the same run with an output layer of its own, with a Poisson bootstrap over
  the vocabulary's rows (the same weights for both matrices: one tokenizer, one row per piece);
* :func:`output_claim`: where the drift goes when the output layer is untied: does the
  untied run's output matrix keep the common direction its input matrix lost?
* :func:`rarity_claim`: which tokens lie furthest along a matrix's common direction, the
  rarest (Biš et al.'s common enemies) or the most frequent (a frequency direction)?
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lmgeometry.chapters.drift.claims import THRESHOLDS
from lmgeometry.claims import Claim
from lmgeometry.measures.mean_cosines import mean_cosine_of_sums, rarity_alignment, unit_row_sums
from lmgeometry.measures.stats import percentile_interval
from lmgeometry.report.prose import number

__all__ = [
    "DRIFT_CLAIM",
    "OUTPUT_CLAIM",
    "RARITY_CLAIM",
    "RARITY_THRESHOLD",
    "LEARNED_GAIN",
    "LEARNED_RULE",
    "drift_claim",
    "drift_difference",
    "learned",
    "output_claim",
    "rarity_claim",
]

#: Nats per held-out token a run must beat its unigram baseline by to count as learned.
LEARNED_GAIN = 0.1

#: Why :data:`LEARNED_GAIN`.
LEARNED_RULE = ("0.1 nats per token is a perplexity 10% below the unigram model's: a model "
                "that gains less has learned little beyond word frequencies, and its geometry "
                "says little about its objective")

#: The intervention's claim.
DRIFT_CLAIM = ("beyond the paper: W's common drift direction comes from the tied output layer "
               "(an untied causal run drifts less)")


#: Where the drift goes without tying: the output matrix of the untied run.
OUTPUT_CLAIM = ("beyond the paper: untied, the output layer keeps the common direction (the "
                "drift lives in the output matrix)")

#: Which tokens lie furthest along the common direction.
RARITY_CLAIM = ("beyond the paper: along the common direction the rarest tokens lie furthest "
                "(common enemies), not the most frequent (a frequency direction)")

#: The rank correlation with log frequency :data:`RARITY_CLAIM` needs: at least a small one
#: (0.1 in size, Cohen 1988), negative.
RARITY_THRESHOLD = -0.1

#: The two matrices' names in the claims' ``control`` column.
TIED, UNTIED = "output layer tied", "output layer untied"


def learned(curves: pd.DataFrame) -> pd.DataFrame:
    """The last checkpoint of each run, and whether it beat its unigram baseline clearly.

    Parameters
    ----------
    curves : DataFrame
        One row per (run, step) with ``loss`` and ``baseline_loss`` (nats per held-out token;
        :func:`lmgeometry.training.pretrain.evaluate`), ``perplexity``,
        ``baseline_perplexity`` and, for a masked LM, ``accuracy`` and ``baseline_accuracy``.

    Returns
    -------
    DataFrame
        One row per run: its last checkpoint's columns, ``gain`` (baseline_loss - loss) and
        ``learned`` (``gain >= LEARNED_GAIN``).
    """
    if curves.empty or not {"run", "step", "loss", "baseline_loss"} <= set(curves):
        raise ValueError("learned() needs the learning curves (run, step, loss, "
                         "baseline_loss): pass pair.learning_curves(runs)")
    last = curves.sort_values("step").groupby("run", sort=False).tail(1).copy()
    last["gain"] = last["baseline_loss"] - last["loss"]
    last["learned"] = last["gain"] >= LEARNED_GAIN
    order = list(dict.fromkeys(curves["run"]))
    return last.set_index("run").loc[order].reset_index()


def drift_difference(W_tied: np.ndarray, W_untied: np.ndarray, *, n_boot: int = 1000,
                     seed: int = 0) -> tuple[float, np.ndarray, float, float]:
    """Mean cosine between rows of ``W_tied`` minus that of ``W_untied``, with replicates.

    The mean cosine of each matrix is (||S||^2 - n) / (n (n - 1)) for S the sum of its unit
    rows (Biš et al. 2021, App. A; :func:`mean_cosines.unit_row_sums`). Both matrices get the
    same Poisson-bootstrap weights per row (a paired bootstrap over tokens), so the difference's
    replicates keep the correlation of the two runs' rows of one piece.

    Returns
    -------
    difference : float
    replicates : ndarray, shape (n_boot,)
    tied, untied : ndarray, shape (1 + n_boot,)
        The two mean cosines (index 0) and their replicates.
    """
    W_tied, W_untied = np.asarray(W_tied), np.asarray(W_untied)
    if W_tied.ndim != 2 or W_tied.shape[0] != W_untied.shape[0]:
        raise ValueError(f"the two embedding matrices need the same rows (one tokenizer), not "
                         f"{W_tied.shape} and {W_untied.shape}: train both runs with the same "
                         "vocabulary and seed")
    groups = np.zeros(W_tied.shape[0], np.int64)
    cos = [mean_cosine_of_sums(*unit_row_sums(W, groups, 1, n_boot=n_boot, rng=seed))[:, 0]
           for W in (W_tied, W_untied)]
    diff = cos[0] - cos[1]
    return float(diff[0]), diff[1:], cos[0], cos[1]


def drift_claim(W_tied: np.ndarray, W_untied: np.ndarray, model: str, *, n_boot: int = 1000,
                seed: int = 0, figure: str = "pair-drift") -> tuple[Claim, str]:
    """The intervention's verdict: does the untied run's W drift less than the tied run's?

    The statistic is :func:`drift_difference` at the last checkpoint; the threshold is seed
    004's own effect size for a common direction (:data:`.drift.claims.THRESHOLDS`
    ``common_direction``, 0.02): the claim holds when the whole 95% interval of the difference
    lies above it, fails when it lies below.

    Returns
    -------
    claim : Claim
    unfair : str
        Why the test is not fair, or ``""``: a tied run whose own mean cosine is not above the
        threshold (its whole interval) has no drift for the untied run to remove.
    """
    value, reps, tied, untied = drift_difference(W_tied, W_untied, n_boot=n_boot, seed=seed)
    lo, hi = percentile_interval(reps, value) if n_boot else (value, value)
    threshold, rule = THRESHOLDS["common_direction"]
    tied_lo = percentile_interval(tied[1:], tied[0])[0] if n_boot else tied[0]
    unfair = ("" if tied_lo > threshold else
              f"the tied run's own W shows no common direction (mean cosine "
              f"{number(tied[0], 3)}, interval from {number(tied_lo, 3)}, not above "
              f"{threshold:g}): there is no drift for the untied run to remove")
    claim = Claim(
        seed="004", claim=DRIFT_CLAIM, model=model, control=UNTIED,
        statistic="mean cosine between rows of W, tied minus untied (last checkpoint)",
        value=value, ci_low=lo, ci_high=hi, threshold=threshold, direction="above",
        rule="a difference as large as the smallest common direction the seed counts as "
             f"drift: {rule}",
        published="'common enemies': the softmax gradient pushes every non-target output "
                  "embedding one way, and with tied weights the input embeddings with it "
                  "(Biš et al. 2021, Sec. 4)",
        figure=figure,
        evidence=f"mean cosine {number(tied[0], 3)} tied, {number(untied[0], 3)} untied")
    return claim, unfair


def output_claim(W_out: np.ndarray, model: str, *, n_boot: int = 1000, seed: int = 0,
                 figure: str = "pair-drift") -> Claim:
    """Does the untied run's *output* matrix keep the common direction? Its mean cosine between
    rows (exact, with a Poisson bootstrap over rows) against seed 004's smallest common
    direction (:data:`.drift.claims.THRESHOLDS` ``common_direction``), above.

    Biš et al.'s (2021) common enemies act on the output embeddings: untied, they should drift
    while the input embeddings do not.
    """
    cos = mean_cosine_of_sums(*unit_row_sums(W_out, np.zeros(len(W_out), np.int64), 1,
                                             n_boot=n_boot, rng=seed))[:, 0]
    lo, hi = percentile_interval(cos[1:], cos[0]) if n_boot else (cos[0], cos[0])
    threshold, rule = THRESHOLDS["common_direction"]
    return Claim(
        seed="004", claim=OUTPUT_CLAIM, model=model, control=UNTIED,
        statistic="mean cosine between rows of the untied output matrix (last checkpoint)",
        value=float(cos[0]), ci_low=lo, ci_high=hi, threshold=threshold, direction="above",
        rule=f"as large as the smallest common direction the seed counts as drift: {rule}",
        published="the softmax gradient pushes every non-target output embedding one way "
                  "(Biš et al. 2021, Sec. 4)",
        figure=figure, evidence=f"mean cosine {number(cos[0], 3)}")


def rarity_claim(W: np.ndarray, counts: np.ndarray, rows: np.ndarray, model: str,
                 control: str, *, n_boot: int = 1000, seed: int = 0,
                 figure: str = "pair-drift") -> Claim:
    """Do the rarest tokens lie furthest along ``W``'s common direction?
    (:func:`lmgeometry.measures.mean_cosines.rarity_alignment`: Spearman's rho between each
    kept row's projection on the mean unit row and log(1 + its count in the training text),
    with an interval over rows), against :data:`RARITY_THRESHOLD`, below.

    Negative is Biš et al.'s (2021) common enemies (a rare token, seldom the target, is pushed
    furthest); positive a frequency direction, along which an output layer without a bias can
    score the unigram prior: the alternative the drift verdict alone does not rule out.
    """
    value, reps = rarity_alignment(W, counts, rows=rows, n_boot=n_boot, rng=seed)
    lo, hi = percentile_interval(reps, value) if n_boot else (value, value)
    return Claim(
        seed="004", claim=RARITY_CLAIM, model=model, control=control,
        statistic="Spearman rho between each token's position along the common direction and "
                  "its log frequency in the training text (last checkpoint)",
        value=value, ci_low=lo, ci_high=hi, threshold=RARITY_THRESHOLD, direction="below",
        rule="at least a small rank correlation (0.1 in size, Cohen 1988), negative: the rarest "
             "tokens furthest along the direction",
        published="rare tokens, seldom targets, are pushed furthest (Biš et al. 2021, Sec. 4 "
                  "and Fig. 3)",
        figure=figure, evidence=f"{int(np.sum(rows))} tokens, special tokens left out")
