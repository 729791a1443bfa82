"""Seed 004's claims for the "Drift and centering" chapter as :class:`Claim` records: the
thresholds, the published statements and the verdicts on W (:func:`drift_claims`) and on the hidden
states (:func:`hidden_claims`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from lmgeometry.claims import Claim
from lmgeometry.measures.stats import extreme_over_layers
from lmgeometry.report.prose import number

__all__ = [
    "THRESHOLDS",
    "drift_claims",
    "hidden_claims",
]


#: The claims' thresholds: effect sizes, each with the reason the chapter states for it.
THRESHOLDS: dict[str, tuple[float, str]] = {
    "common_direction": (0.02, "the mean cosine of unit rows is about (||mu|| / mean row "
                         "norm)^2 (exactly so when norms do not depend on direction); the seed "
                         "counts every model of its Table 1 as drifted, down to RoBERTa-base's "
                         "ratio of 0.16 (a mean cosine of about 0.026): above 0.02. A mean "
                         "cosine of 0.1, the earlier rule, failed RoBERTa-base's own numbers"),
    "near_isotropic": (0.85, "the seed's 'nearly perfect isotropy' after centring, 'the only "
                       "exception' being RoBERTa-large (I(W_c) 0.64): its lowest model called "
                       "nearly isotropic is RoBERTa-base (0.87). The earlier 0.9 failed it"),
    "gap_closed": (0.5, "centring should close at least half the distance from I(W) to 1; the "
                   "seed's Table 1 closes 61% (RoBERTa-large) to 97%"),
    "rare_trend": (0.5, "a strong monotone rise over the bins (Spearman rho 0.5, Cohen's "
                   "'large' correlation), not merely a last bin above the first"),
    "norm_frequency": (-0.1, "at least a small monotone association (|rho| 0.1, Cohen's "
                       "'small'), negative: frequent tokens shorter"),
    "wordsim_gain": (0.0, "the seed reads any positive change as a gain ('consistently "
                     "improves ... except for the most isotropic BERT-cased models', counting "
                     "+0.04 and +0.24): above 0 Pearson r x 100, averaged over the benchmarks. "
                     "The earlier one point failed GPT-2-small's and RoBERTa-base's own "
                     "gains"),
    "eigvec_mean": (0.9, "the seed's 0.99 (RoBERTa-large) says the top eigenvector of W^T W "
                    "is the mean's direction, so that its eigenvectors are not W's principal "
                    "components; |cos| 0.9 (within 26 degrees) keeps that meaning"),
    "inner_product_gain": (0.0, "the seed: gains 'more pronounced when inner-product is used "
                           "... regardless of the model or processing method'; any positive "
                           "difference, as for the gains themselves (its own smallest: +0.73, "
                           "RoBERTa-base scaled centring, Table 2)"),
    "shift_agreement": (0.05, "the measured mean cosine within 0.05 of what the mean vector "
                        "alone predicts, small next to the mean cosines a shift would have to "
                        "explain (0.1-0.7 in BERT's layers, 0.6-1.0 in GPT-2's: seed 001's "
                        "released results)"),
}


#: Seed 004's own numbers or patterns, quoted beside each claim.
PUBLISHED: dict[str, str] = {
    "common_direction": "mean cosine 0.33 for RoBERTa-large; ||mu|| / mean norm 0.16-0.67 "
                        "(Table 1)",
    "near_isotropic": "I(W_c) 0.64-0.98, 0.87-0.98 without RoBERTa-large (Table 1)",
    "gap_closed": "I(W) 0.07-0.59 -> I(W_c) 0.64-0.98: 61%-97% of the gap (Table 1)",
    "rare_frequency": "cosine with BERT's [unused] tokens 0.27 (ids 2000-2999) -> 0.63 "
                      "(ids 28500-29500), rising as frequency falls (Fig. 3)",
    "norm_frequency": "frequent words have shorter vectors (Schakel & Wilson 2015; "
                      "Podkorytov et al. 2020 for BERT; Sec. 5.2)",
    "wordsim": "GPT-2 small, inner product: +6.6 centred, +7.9 scaled, +8.2 post-processed; "
               "cosine +0.2, +1.9, +3.1; BERT-base-cased centred -0.8 / -1.9 (Table 2)",
    "shift": "not studied (the seed looks at W only)",
    "eigvec_mean": "cosine between the top eigenvector of W^T W and the mean vector 0.99 for "
                   "RoBERTa-large (Sec. 5.3)",
    "inner_product_gain": "gains with the inner product minus gains with the cosine, Table 2: "
                          "+0.7 (RoBERTa-base, scaled centring) to +17.3 (RoBERTa-large, "
                          "eq. 11) over six models and three post-processings",
}


_VARIANT_WORDS = {"centered": "centring", "centered_scaled": "scaled centring",
                  "post_process": "removing the top principal components (eq. 11)"}


def _claim(key: str, model: str, claim: str, statistic: str, value: float, low: float,
           high: float, direction: str, figure: str, evidence: str, *,
           published: str | None = None, control: str = "none") -> Claim:
    threshold, rule = THRESHOLDS[key]
    return Claim(seed="004", claim=claim, model=model, control=control, statistic=statistic,
                 value=value, ci_low=low, ci_high=high, threshold=threshold,
                 direction=direction, rule=rule,  # type: ignore[arg-type]
                 published=PUBLISHED[key] if published is None else published, figure=figure,
                 evidence=evidence)


def drift_claims(model: str, statistics: Mapping[str, Any], rare_trends: pd.DataFrame,
                 wordsim_change: pd.DataFrame) -> list[Claim]:
    """Seed 004's claims about one model's W, from :func:`w_tables` outputs.

    Intervals: a bootstrap over the rows (tokens) of W for the W statistics and the
    rare-token trend, over the seen tokens for the norm-frequency correlation, and over each
    benchmark's pairs for the word-similarity changes.
    """
    s = statistics
    out = [
        _claim("common_direction", model, "W's rows share a common direction",
               "mean cosine between rows of W", s["mean_cosine"], s["mean_cosine_lo"],
               s["mean_cosine_hi"], "above", "isotropy",
               f"after centring {number(s['mean_cosine_centered'], 3)} (0 by construction); "
               f"||mu|| / mean row norm {number(s['mean_vector_ratio'])}; top eigenvector of "
               f"W^T W at |cos| {number(s['top_eigvec_mean_cosine'])} with mu"),
        _claim("near_isotropic", model, "centring makes W nearly isotropic", "I(W_c)",
               s["isotropy_centered"], s["isotropy_centered_lo"], s["isotropy_centered_hi"],
               "above", "isotropy", f"I(W) {number(s['isotropy_raw'])}"),
        _claim("gap_closed", model, "centring closes most of the gap to isotropy",
               "(I(W_c) - I(W)) / (1 - I(W))", s["isotropy_gap_closed"],
               s["isotropy_gap_closed_lo"], s["isotropy_gap_closed_hi"], "above", "isotropy",
               f"I(W) {number(s['isotropy_raw'])} -> I(W_c) {number(s['isotropy_centered'])}"),
        _claim("eigvec_mean", model, "the top eigenvector of W^T W points along the mean "
               "vector", "|cos(top eigenvector of W^T W, mean row)|",
               s["top_eigvec_mean_cosine"], s.get("top_eigvec_mean_cosine_lo", math.nan),
               s.get("top_eigvec_mean_cosine_hi", math.nan), "above", "isotropy",
               f"||mu|| / mean row norm {number(s['mean_vector_ratio'])}"),
        _claim("norm_frequency", model, "frequent tokens have shorter embeddings",
               "Spearman rho of row norm with corpus count (seen tokens)",
               s["norm_count_spearman"], s["norm_count_spearman_lo"],
               s["norm_count_spearman_hi"], "below", "norms", ""),
    ]
    raw = rare_trends[rare_trends["variant"] == "raw"].set_index("protocol")
    for protocol, text in (("frequency", "tokens never seen in the frequency corpus, bins by "
                            "corpus frequency"),
                           ("index", "[unused] tokens, bins of 1000 vocabulary ids (the paper's "
                            "protocol)")):
        if protocol in raw.index:
            t = raw.loc[protocol]
            out.append(_claim(
                "rare_trend", model, "rare tokens drift furthest: cosines with the rarest "
                "tokens rise as frequency falls", f"Spearman rho of bin order with mean cosine "
                f"({text})", t["rho"], t["rho_lo"], t["rho_hi"], "above", f"rare-{protocol}",
                f"{int(t['n_bins'])} bins", published=PUBLISHED["rare_frequency"]))
    for r in wordsim_change.itertuples():
        out.append(_claim(
            "wordsim_gain", model, f"{_VARIANT_WORDS[r.variant]} improves word similarity",
            f"change of Pearson r x 100 ({'inner product' if r.score == 'dot' else 'cosine'}), "
            f"mean over {r.n_benchmarks} benchmarks", r.change_x100, r.change_x100_lo,
            r.change_x100_hi, "above", "wordsim-change",
            f"{number(r.original_pearson_x100, 1)} -> {number(r.pearson_x100, 1)}",
            published=PUBLISHED["wordsim"]))
        if r.score == "dot":
            out.append(_claim(
                "inner_product_gain", model, f"{_VARIANT_WORDS[r.variant]} gains more with the "
                "inner product than with the cosine", "change of Pearson r x 100 with the inner "
                f"product minus that with the cosine, mean over {r.n_benchmarks} benchmarks",
                r.over_cosine_x100, r.over_cosine_x100_lo, r.over_cosine_x100_hi, "above",
                "wordsim-change", f"inner product {number(r.change_x100, 1)}, cosine "
                f"{number(r.change_x100 - r.over_cosine_x100, 1)}"))
    return out


def hidden_claims(hidden: pd.DataFrame) -> list[Claim]:
    """Beyond the seed: does a common shift account for the hidden states' mean cosine?

    Per model and control, the statistic is the largest |measured - predicted| mean cosine
    over the layers (:func:`shift.shift_cosine`), with the interval of a claim about every
    layer (:func:`stats.extreme_over_layers`) built from the per-layer intervals of the gap's
    absolute value.
    """
    out = []
    for (model, control), part in hidden.groupby(["model", "control"], sort=False):
        r, lo, hi = (part[f"shift_residual{s}"].to_numpy() for s in ("", "_lo", "_hi"))
        abs_lo = np.where(lo > 0, lo, np.where(hi < 0, -hi, 0.0))
        abs_hi = np.maximum(np.abs(lo), np.abs(hi))
        value, low, high, at = extreme_over_layers(np.abs(r), abs_lo, abs_hi, "max")
        layer = int(part["layer"].iloc[at])
        out.append(_claim(
            "shift_agreement", model, "beyond the paper: a common shift (the mean vector) "
            "accounts for the hidden states' mean cosine in every layer",
            "largest |mean cosine - mean-vector prediction| over layers", value, low, high,
            "below", "hidden-mean-cosine",
            f"largest in layer {layer}: measured {number(part['mean_cosine'].iloc[at])}, "
            f"predicted {number(part['shift_prediction'].iloc[at])}",
            published=PUBLISHED["shift"], control=control))
    return out
