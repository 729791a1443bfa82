"""The book's answer first: the introduction's findings box, tallied from every chapter's claims.

The scorecard (``90_scorecard``) gives one row per seed claim and kind of model; the
introduction opens with the same tally in one line per seed document, so that a reader sees
what held before reading how. Both count the same rows (:func:`lmgeometry.claims.primary_table`,
:func:`lmgeometry.claims.seed_summary`): a (claim, kind) is *reproduced* when every fair stand-in of
that kind gets the verdict the seed reports and the rule fails on its null (an untrained copy,
or the labels permuted),
*contradicted* when every one gets the opposite. Rules checked on the seeds' numbers and rules
only the seeds' words support are counted apart (:data:`lmgeometry.claims.CALIBRATION_KINDS`),
never added up.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from lmgeometry.claims import OUTCOMES, primary_table, seed_summary, tier_totals
from lmgeometry.report.claims import collect_claims, findings_html
from lmgeometry.report.plot_style import display_names, plain
from lmgeometry.report.prose import plural

__all__ = ["SEED_DOCUMENTS", "book_findings", "plain_answer", "seed_lines", "with_answer"]

#: The seed documents whose claims the book tests, as the findings box names them.
SEED_DOCUMENTS: dict[str, str] = {
    "000": "Kehlbeck et al. (2021), GPT-2's and BERT's embedding spaces seen",
    "001": "Ethayarajh (2019), how contextual the representations are",
    "003": "GPTology (2022), fine-tuning and rogue dimensions",
    "004": "Biš et al. (2021), the common drift of embeddings",
}

#: The outcomes a seed's line counts, in the scorecard's order, each worded as its name:
#: every one of :data:`lmgeometry.claims.OUTCOMES` but "seed silent" (a row the seed says
#: nothing of is no test).
_COUNTED: tuple[str, ...] = tuple(o for o in OUTCOMES if o != "seed silent")


#: How a seed's line and the answer name each calibration tier.
_TIER_WORDS: dict[str, str] = {"numeric": "checked on the seed's numbers",
                               "quoted": "judged by rules only the seed's words support"}


def _tally(row: Mapping[str, object]) -> str:
    counts = [f"{int(row[key])} {key}" for key in _COUNTED if int(row.get(key, 0) or 0)]
    return ", ".join(counts) if counts else "nothing testable"


def seed_lines(summary: pd.DataFrame, scorecard: str = "90_scorecard.html") -> list[str]:
    """One HTML line per seed of :func:`lmgeometry.claims.seed_summary`, linking to its section:
    its claims per calibration tier, each with its outcomes per claim and kind of model.

    Examples
    --------
    >>> summary = pd.DataFrame([
    ...     {"seed": "001", "calibration": "numeric", "claims": 3, "reproduced": 2,
    ...      "contradicted": 0, "inconclusive": 1, "not testable here": 1, "seed silent": 2},
    ...     {"seed": "001", "calibration": "quoted", "claims": 1, "reproduced": 1}]).fillna(0)
    >>> line = seed_lines(summary, "s.html")[0]
    >>> line.startswith('<a href="s.html#seed-001">Seed 001</a>, Ethayarajh (2019)')
    True
    >>> line.split(": ", 1)[1]
    "3 claims checked on the seed's numbers (per claim and kind of model 2 reproduced, 1 \
inconclusive, 1 not testable here); 1 claim judged by rules only the seed's words support (1 \
reproduced)."
    """
    lines = []
    for seed, rows in summary.groupby("seed", sort=True):
        title = SEED_DOCUMENTS.get(str(seed), "")
        parts, first = [], True
        for row in rows.to_dict("records"):
            lead = "per claim and kind of model " if first else ""
            parts.append(f"{plural(int(row['claims']), 'claim')} "
                         f"{_TIER_WORDS.get(str(row['calibration']), row['calibration'])} "
                         f"({lead}{_tally(row)})")
            first = False
        name = f'<a href="{scorecard}#seed-{seed}">Seed {seed}</a>'
        lines.append(f"{name}{', ' + html.escape(title) if title else ''}: "
                     f"{'; '.join(parts)}.")
    return lines


def with_answer(box: str, answer: str) -> str:
    """A chapter's own findings box (:func:`report.claims.findings_html`) with its plain answer
    (:func:`report.narrative.plain_answer`) put first, after the question, and the models
    named by their display names (a chapter that builds its own box names the aliases).

    Examples
    --------
    >>> box = ('<div class="admonition"><p class="admonition-title">Findings</p>'
    ...        '<p><b>Question.</b> Q?</p><ul><li><b>smollm2-135m</b>: ...</li></ul></div>')
    >>> said = with_answer(box, "No.")
    >>> said.index("Q?") < said.index("<b>Answer.</b> No.") < said.index("<b>SmolLM2</b>")
    True
    """
    box = display_names(box)
    if not answer:
        return box
    end = box.find("</p>", box.find("<b>Question.</b>"))
    said = f'<p class="lmg-answer"><b>Answer.</b> {answer}</p>'
    return box[:end + 4] + said + box[end + 4:] if end >= 0 else said + box


def plain_answer(totals: Mapping[str, Mapping[str, int]]) -> str:
    """The introduction's answer in plain English, from the scorecard's totals per calibration
    tier (:func:`lmgeometry.claims.tier_totals`): the verdict word from the rules checked on the
    seeds' numbers, then the rules only the seeds' words support, counted apart.

    Only findings whose rule also fails on its null (an untrained copy of the model, for a
    probe's or classifier's score the labels permuted, for a depth trend the layers in a
    random order) count as held (``reproduced``); those
    that hold on the null too, or had no null run, are said apart.

    Examples
    --------
    >>> numeric = {"reproduced": 20, "also true of an untrained model": 10,
    ...            "also true with labels permuted": 3, "held without a null run": 14,
    ...            "contradicted": 18, "inconclusive": 24, "not testable here": 12}
    >>> plain_answer({"numeric": numeric, "quoted": {"reproduced": 3}}).split(":")[0]
    'Some'
    """
    numeric, quoted = (totals.get(t, {}) for t in ("numeric", "quoted"))

    def tested(total: Mapping[str, int]) -> int:
        return sum(int(total.get(k, 0)) for k in _COUNTED if k != "not testable here")

    held = int(numeric.get("reproduced", 0))
    shuffled = int(numeric.get("also true with the layers shuffled", 0))
    rotated = int(numeric.get("also true with the basis rotated", 0))
    share = held / tested(numeric) if tested(numeric) else 0.0
    verdict = ("Mostly" if share >= 2 / 3 else "About half" if share >= 0.4
               else "Some" if share >= 0.2 else "Few")
    return (f"{verdict}: of the seeds' findings whose rule the seeds' own numbers check, "
            f"counted per claim and kind of model, {held} hold on this build's models and fail "
            f"on their nulls (untrained copies of them, the labels permuted, the layers in a "
            f"random order, or the vectors in a random basis), "
            f"{numeric.get('also true of an untrained model', 0)} hold on the untrained copies "
            f"too, {numeric.get('also true with labels permuted', 0)} hold with the labels "
            f"permuted too, "
            + (f"{shuffled} hold with the layers in a random order too, " if shuffled else "")
            + (f"{rotated} hold in a random basis too, " if rotated else "")
            + f"{numeric.get('held without a null run', 0)} hold with no null run, "
            f"{numeric.get('contradicted', 0)} are "
            f"contradicted, {numeric.get('inconclusive', 0)} are inconclusive and "
            f"{numeric.get('not testable here', 0)} cannot be tested here. Of the "
            f"{tested(quoted)} tested findings only the seeds' words describe, "
            f"{quoted.get('reproduced', 0)} hold and fail on their nulls.")


def book_findings(folder: str | Path, kinds: Mapping[str, str], models: Sequence[str], *,
                  own: str, scorecard: str = "90_scorecard") -> str:
    """The introduction's findings box: per seed, how its claims fared on this build's models.

    Parameters
    ----------
    folder : str or Path
        The folder of the chapters' results files (``*.results.json``).
    kinds : mapping
        Model -> kind ("encoder", "decoder"), as the introduction found them.
    models : sequence of str
        The models of this build; rows of other models are left out.
    own : str
        The reading chapter's own results file name, never read (it would be its own input).
    scorecard : str
        The scorecard's name: only the chapters that run before it are read, and each seed's
        line links to its section of the scorecard's page.

    Returns
    -------
    str
        The box's HTML (:func:`report.claims.findings_html`).
    """
    found = collect_claims(folder, exclude=(own,), before=f"{scorecard}.results.json")
    found = found[found["model"].isin(list(models))]
    summary = seed_summary(primary_table(found, kinds, list(models)))
    if summary.empty:
        answer = ("<p>No chapter of this build has written its claims yet: run the chapters "
                  "(<code>lmgeometry book</code>), then this page again.</p>")
    else:
        items = "".join(f"<li>{line}</li>" for line in seed_lines(summary, f"{scorecard}.html"))
        answer = (f"<p><b>Answer.</b> {plain_answer(tier_totals(summary))} "
                  f'<a href="{scorecard}.html">The conclusion</a> says which, and why.</p>'
                  f"<p>Per seed document, its claims tested on {len(models)} models "
                  f"({html.escape(', '.join(plain(m) for m in models))}):</p><ul>{items}</ul>"
                  f'<p>The <a href="{scorecard}.html">scorecard</a> gives each claim with its '
                  "evidence; <i>not testable here</i> means no model of this build is a fair "
                  "stand-in for the seed's on that claim.</p>")
    return findings_html(
        "Do the seeds' findings about the embedding spaces of GPT-2 and BERT hold on the models "
        "this build could load?",
        answer,
        "Each count speaks about this build's models: where a model is not the seed's, the "
        "caveats listed below say how it differs, and each chapter's own box says where its "
        "method differs from the seed's.")
