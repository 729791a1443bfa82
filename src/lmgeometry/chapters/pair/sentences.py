"""The sentences of chapter "A controlled pair", generated from its tables.

* :func:`about_runs`: one sentence per run, keyed by its model label, so the page asks for a
  run's sentence by name; a run that did not beat its unigram baseline clearly
  (:func:`claims.learned`) says so in every sentence about it;
* :func:`learning_facts`, :func:`training_facts`: what those sentences say of each run (its
  last checkpoint against its baseline; I(W), W's common direction and the hidden states
  across training);
* :func:`claim_lines`: the seeds' claims on the final pair, one sentence per claim over the
  fair tests and one line per run for the claims that are not a fair test on it (each
  verdict's number and interval stay in the claims table);
* :func:`drift_sentences`: the intervention's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from lmgeometry.chapters.pair.claims import DRIFT_CLAIM, LEARNED_GAIN, OUTPUT_CLAIM, TIED
from lmgeometry.report.claims import claim_sentences
from lmgeometry.report.prose import number

__all__ = [
    "about_runs",
    "claim_lines",
    "drift_sentences",
    "learning_facts",
    "not_learned",
    "training_facts",
]


def not_learned(row: pd.Series) -> str:
    """Why a run (a row of :func:`claims.learned`) supports no conclusion."""
    return (f"{row['model']} did not beat its unigram baseline by {LEARNED_GAIN:g} nats per "
            f"held-out token (gain {number(row['gain'])})")


def about_runs(table: pd.DataFrame, facts: Mapping[str, str], *, caveat: bool = True
               ) -> dict[str, str]:
    """One sentence per run of ``table`` that ``facts`` describes: "model: fact.".

    Parameters
    ----------
    table : DataFrame
        :func:`claims.learned` (``model``, ``gain``, ``learned``).
    facts : mapping
        Model label -> what to say of it (no subject, no full stop).
    caveat : bool
        Whether a run that did not learn clearly says so ("pair-mlm did not beat its unigram
        baseline ..., so no conclusion is drawn from these numbers: fact."); False where the
        fact says it itself.

    Returns
    -------
    dict
        Model label -> sentence, in the order of ``table``.
    """
    out = {}
    for _, row in table.iterrows():
        if row["model"] not in facts:
            continue
        subject = (f"{not_learned(row)}, so no conclusion is drawn from these numbers"
                   if caveat and not row["learned"] else row["model"])
        out[row["model"]] = f"{subject}: {facts[row['model']]}."
    return out


def learning_facts(table: pd.DataFrame) -> dict[str, str]:
    """Each run's last checkpoint against its unigram baseline, and whether it learned."""
    out = {}
    for _, r in table.iterrows():
        accuracy = r.get("accuracy", np.nan)
        extra = (f", masked accuracy {accuracy:.1%} against {r['baseline_accuracy']:.1%}"
                 if pd.notna(accuracy) else "")
        # how far past the bar: a gain just over it is no clear win (issue 47: 0.13 nats)
        state = (("beats it clearly" if r["gain"] >= 5 * LEARNED_GAIN else
                  "beats it" if r["gain"] >= 2 * LEARNED_GAIN else
                  f"beats it, though only just past the {LEARNED_GAIN:g}-nat bar")
                 if r["learned"] else
                 f"does not beat it by {LEARNED_GAIN:g} nats per token, so this page draws "
                 "no conclusion from it")
        out[r["model"]] = (f"held-out perplexity {number(r['perplexity'], 1)} at the last "
                           f"checkpoint against its unigram baseline's "
                           f"{number(r['baseline_perplexity'], 1)} (gain {number(r['gain'])} "
                           f"nats per token{extra}): it {state}")
    return out


def training_facts(embeddings: pd.DataFrame, layers: pd.DataFrame) -> dict[str, str]:
    """When each signature appears across training, per run (the checkpoint tables)."""
    inner = layers[layers["layer"] > 0]
    top = inner["layer"].max() if len(inner) else 0
    out = {}
    for model, part in embeddings.groupby("model", sort=False):
        first, last = part.iloc[0], part.iloc[-1]
        said = (f"I(W) {number(first['isotropy_raw'])} at initialisation -> "
                f"{number(last['isotropy_raw'])} after {int(last['tokens']):,} tokens and W's "
                f"mean cosine {number(first['mean_cosine'], 3)} -> "
                f"{number(last['mean_cosine'], 3)}")
        steps = inner[inner["model"] == model].groupby("step")
        if len(steps):
            cos, gain = steps["mean_cosine"].max(), steps["knn_gain"].max()
            said += (f"; over layers 1-{top} the largest mean cosine between words goes "
                     f"{number(cos.iloc[0])} -> {number(cos.iloc[-1])} and the largest "
                     f"position-manifold k-NN gain {number(gain.iloc[0])} -> "
                     f"{number(gain.iloc[-1])}")
        out[model] = said
    return out


def claim_lines(claims: pd.DataFrame, table: pd.DataFrame, kinds: Mapping[str, str]
                ) -> list[str]:
    """The claims as sentences: the fair tests' verdicts per claim, then one line per run for
    the claims that are not a fair test on it.

    Parameters
    ----------
    claims : DataFrame
        Claim rows (``claim``, ``control``, ``model``, ``verdict``, ``applies``).
    table : DataFrame
        :func:`claims.learned`: a run that did not learn is named with its gain.
    kinds : mapping
        Model -> kind (:func:`lmgeometry.report.claims.claim_sentences`).
    """
    fair = claims["applies"].astype(bool)
    out = claim_sentences(claims[fair], kinds)
    runs = {row["model"]: row for _, row in table.iterrows()}
    for model, rows in claims[~fair].groupby("model", sort=False):
        names = list(dict.fromkeys(rows["claim"]))
        if model in runs and not runs[model]["learned"]:
            out.append(f"Not a fair test on {model}: {not_learned(runs[model])}, so none "
                       f"of its {len(names)} claims is (the verdict grid keeps each one's "
                       "number and interval).")
        else:
            out.append(f"Not a fair test on {model} (the verdict grid gives each reason): "
                       f"{'; '.join(names)}.")
    return out


def drift_sentences(claims: pd.DataFrame) -> list[str]:
    """The intervention's verdicts (its claim rows, ``source_chapter`` 10), one sentence per
    row: the drift difference, the untied output matrix, the rarest tokens' place."""
    out = []
    for r in claims.itertuples():
        interval = (f"{number(r.value, 3)} [{number(r.ci_low, 3)}, {number(r.ci_high, 3)}], "
                    f"threshold {number(r.threshold)}")
        if r.claim == DRIFT_CLAIM:
            word = {"holds": "W keeps less of a common direction than the tied run's, by more "
                             "than seed 004's smallest drift: the drift depends on the tied "
                             "output layer",
                    "does not hold": "W differs from the tied run's by less than seed 004's "
                    "smallest drift: by that measure the drift does not depend on the tied "
                    "output layer",
                    "inconclusive": "the difference from the tied run cannot be told apart from "
                    "seed 004's smallest drift"}[r.verdict]
            said = (f"With its output layer untied, the causal run's {word} ({r.evidence}; "
                    f"difference {interval}).")
        elif r.claim == OUTPUT_CLAIM:
            word = {"holds": "keeps the common direction its input matrix lost: the drift "
                             "lives in the output layer, and tying hands it to the input "
                             "embeddings",
                    "does not hold": "has no common direction either",
                    "inconclusive": "may or may not keep a common direction"}[r.verdict]
            said = f"The untied run's output matrix {word} (mean cosine {interval})."
        else:
            which = "tied W" if r.control == TIED else "untied output matrix"
            word = {"holds": "the rarest tokens lie furthest, as common enemies predict, "
                             "and not the most frequent, as a frequency direction would",
                    "does not hold": "the rarest tokens do not lie clearly furthest",
                    "inconclusive": "it cannot be told whether the rarest tokens lie "
                                    "furthest"}[r.verdict]
            said = (f"Along the {which}'s common direction {word} (rank correlation with "
                    f"log frequency {interval}).")
        if r.claim != DRIFT_CLAIM and isinstance(getattr(r, "null_model", ""), str) \
                and r.null_model:
            said += (f" On the untied run's input matrix, which no common enemy reaches, the "
                     f"same statistic is {number(r.null_value, 3)} ({r.null_verdict}).")
        if not r.applies:
            said += f" This is not a fair test: {r.applies_reason}."
        out.append(said)
    return out
