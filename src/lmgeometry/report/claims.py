"""Claims on a page: the findings box, the verdict grid, the scorecard and generated sentences.

The claim record and its outcomes live in :mod:`lmgeometry.claims`; this module shows them. A
chapter's page puts the answer first and the verdicts after the evidence: a findings box at
the top (:func:`findings_box`, generated from the claims table), a compact grid of verdicts
after the figures (:func:`verdict_grid`, shown by :func:`show_verdict_grid`: claims as rows,
models as columns, each row linked to its figure), and the full table at the end
(:data:`CLAIMS_CAPTION`). :func:`scorecard` lays the claims of several chapters out with one
column per model; :func:`collect_claims` gathers them from the chapters' results files.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from lmgeometry.claims.outcomes import cell_text
from lmgeometry.claims.record import (
    CLAIM_COLUMNS,
    LATER_COLUMNS,
    NULL_DTYPES,
    first_token_flags,
    null_kind,
)
from lmgeometry.measures.stats import VERDICTS
from lmgeometry.report.plot_style import label, plain
from lmgeometry.report.results import list_results, load_results

__all__ = [
    "CLAIMS_CAPTION",
    "claim_sentences",
    "collect_claims",
    "findings_box",
    "findings_html",
    "GRID_ANCHOR",
    "GRID_CAPTION",
    "scorecard",
    "scorecard_caption",
    "show_every_claim",
    "show_verdict_grid",
    "verdict_counts",
    "VERDICT_CLASSES",
    "verdict_grid",
]


def scorecard(claims: pd.DataFrame, models: Sequence[str] | None = None,
              digits: int = 2) -> pd.DataFrame:
    """Claims as rows, one column per model: ``"holds: 0.41 [0.38, 0.44]"``.

    Rows are (seed, claim, control, statistic, threshold); a model without that claim shows
    an empty cell. ``models`` fixes the column order (default: as they appear).
    """
    if claims.empty:
        return pd.DataFrame()
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))

    d = claims.assign(
        cell=claims.apply(lambda r: cell_text(r, digits), axis=1),
        side=claims["direction"] + " " + claims["threshold"].map(lambda t: f"{t:g}"),
    )
    index = ["seed", "claim", "control", "statistic", "side", "published"]
    wide = d.pivot_table(index=index, columns="model", values="cell", aggfunc="first",
                         sort=False)
    return wide.reindex(columns=[m for m in order if m in wide.columns]).fillna("")


#: Caption of the table of every claim at the end of a chapter.
CLAIMS_CAPTION = ("Every claim of this chapter: statistic, 95% interval, threshold and "
                  "direction, verdict, the seed's published value, the rule and its evidence.")


def scorecard_caption(seed: str) -> str:
    """Caption of a chapter's :func:`scorecard` of seed ``seed``'s claims."""
    return (f"Scorecard: seed {seed}'s claims on this build's models. Each cell reads "
            "<i>verdict: statistic [95% interval]</i>; an empty cell is a claim that does not "
            "apply to that model.")


def verdict_counts(claims: pd.DataFrame) -> pd.DataFrame:
    """How many claims hold, are inconclusive or do not hold, per model."""
    counts = claims.groupby(["model", "verdict"]).size().unstack(fill_value=0)
    return counts.reindex(columns=list(VERDICTS), fill_value=0)


def _and(names: Sequence[str], word: str = "and") -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {word} {names[-1]}"


def _verdict_phrase(verdict: str, models: Sequence[str], kinds: Mapping[str, str]) -> str:
    """``"holds for both decoders (a, b)"``, ``"does not hold for either decoder (a, b)"``, or the
    models named: a kind is named only when ``models`` hold every model of it (at least two)."""
    groups, rest = [], list(models)
    for kind in dict.fromkeys(kinds[m] for m in models if kinds.get(m)):
        every = [m for m, k in kinds.items() if k == kind]
        if len(every) >= 2 and set(every) <= set(models):
            groups.append((kind, every))
            rest = [m for m in rest if m not in every]
    phrases = []
    for kind, every in groups:
        names = f"({', '.join(every)})"
        if verdict == "does not hold":
            many = f"either {kind}" if len(every) == 2 else f"any of the {len(every)} {kind}s"
            phrases.append(f"does not hold for {many} {names}")
        else:
            many = "both" if len(every) == 2 else f"all {len(every)}"
            phrases.append(f"{verdict} for {many} {kind}s {names}")
    if rest:
        phrases.append(f"{verdict} for {_and(rest)}")
    return _and(phrases)


def claim_sentences(claims: pd.DataFrame, kinds: Mapping[str, str]) -> list[str]:
    """One sentence per claim of a claims table: the models by verdict, per control.

    ``kinds`` maps each model of the run to its kind ("encoder", "decoder"); a finding is
    stated for a kind ("both decoders") only when every model of that kind in the run (at least
    two) has that verdict, else per model. Example: "One of the clusters is the first words:
    holds for both decoders (a, b). With the first word excluded: does not hold for a."
    """
    out = []
    for claim, rows in claims.groupby("claim", sort=False):
        parts = []
        for control, sub in rows.groupby("control", sort=False):
            fair = sub["applies"].astype(bool) if "applies" in sub else pd.Series(True, sub.index)
            ok = sub[fair]
            verdicts = [_verdict_phrase(v, list(dict.fromkeys(ok.loc[ok["verdict"] == v,
                                                                      "model"])), kinds)
                        for v in VERDICTS if (ok["verdict"] == v).any()]
            unfair = list(dict.fromkeys(sub.loc[~fair, "model"]))
            if unfair:
                verdicts.append(f"not a fair test on {_and(unfair)}")
            lead = f"{claim[0].upper()}{claim[1:]}" if control == "none" else f"With the {control}"
            parts.append(f"{lead}: {'; '.join(verdicts)}.")
        out.append(" ".join(parts))
    return out


def collect_claims(folder: str | Path, exclude: Sequence[str] = (),
                   before: str | None = None) -> pd.DataFrame:
    """Every chapter's claims from the results files in ``folder``, with a ``chapter`` column.

    Reads ``*.results.json`` (chapter order by file name), keeps the ``claims`` entries that
    have the claim columns (:data:`CLAIM_COLUMNS`), and leaves out the files named in
    ``exclude``. With ``before`` (the reader's own results file), only the files of the
    chapters that run before it (chapters run in number order): a chapter that runs later
    (the About page, which reads the scorecard's records) is not read, so no two chapters
    are each other's inputs and a warm rebuild settles. A file written before a column was
    added (``preset``, ``task``) is read with that column's default (``""``); a per-task
    chapter's file (seed 003's) written before ``task`` would count its tasks as one: run the
    chapter again.
    """
    frames = []
    for path in list_results(folder, before):
        if path.name in exclude:
            continue
        rows = load_results(path).get("claims") or []
        frame = pd.DataFrame(rows)
        if not frame.empty:
            frame = frame.assign(**{c: v for c, v in LATER_COLUMNS.items() if c not in frame})
        if frame.empty or not set(CLAIM_COLUMNS) <= set(frame.columns):
            continue
        chapter = path.name.removesuffix(".results.json")
        frames.append(frame[list(CLAIM_COLUMNS)].assign(chapter=chapter).astype(NULL_DTYPES))
    if not frames:
        return pd.DataFrame(columns=[*CLAIM_COLUMNS, "chapter"])
    return pd.concat(frames, ignore_index=True)


def show_every_claim(claims: pd.DataFrame, sentences: Sequence[str] = (), *,
                     columns: Sequence[str] | None = None, first_token: bool = False) -> None:
    """A chapter's closing appendix: its generated sentences, then every claim in one table.

    Parameters
    ----------
    claims : DataFrame
        The chapter's claims table (:func:`lmgeometry.claims.claims_frame`).
    sentences : sequence of str
        The sentences generated from the claims, shown first (Markdown), one paragraph each.
    columns : sequence of str, optional
        The columns to show, in order; default every column but ``seed``.
    first_token : bool
        Add ``driven_by_first_token`` (:func:`lmgeometry.claims.record.first_token_flags`: the
        verdict differs once each sentence's first word is left out).
    """
    from IPython.display import Markdown, display

    from lmgeometry.report.figures import show_table

    if sentences:
        display(Markdown("\n\n".join(sentences)))
    table = claims.assign(driven_by_first_token=first_token_flags(claims)) if first_token \
        else claims
    table = table[list(columns)] if columns is not None else table.drop(columns=["seed"])
    show_table(table.round(3), CLAIMS_CAPTION)


#: The HTML id of a chapter's verdict grid (:func:`show_verdict_grid`); the findings box
#: (:func:`findings_box`) links to it.
GRID_ANCHOR = "verdicts"

#: The CSS class of a verdict grid's cell, per verdict (``lmgeometry.css`` colours them).
VERDICT_CLASSES: dict[str, str] = {"holds": "lmg-holds", "does not hold": "lmg-fails",
                                   "inconclusive": "lmg-open", "not a fair test": "lmg-unfair"}

#: Characters trimmed from the ends of a statistic's distinguishing words (:func:`_variants`).
_TRIM = " ,;:([])"

#: What a verdict adds when its rule holds on its null too, per kind of null: the rule does
#: not show what training did, that the vectors carry the labels, or that depth orders it.
_AS_ON_NULL = {"untrained": ", as on an untrained copy",
               "labels permuted": ", as with the labels permuted",
               "layers shuffled": ", as with the layers in a random order",
               "basis rotated": ", as in a random basis"}


def _rule(direction: str, threshold: float) -> str:
    """``"above 0.5"``, ``"below 0.167"`` (three significant digits)."""
    return f"{direction} {threshold:.3g}"


def _balanced(text: str) -> str:
    """``text`` without its brackets when they do not pair up (``"zeroed (SST-2"``)."""
    for left, right in ("()", "[]"):
        if text.count(left) != text.count(right):
            text = text.replace(left, "").replace(right, "")
    return text


def _variants(statistics: Sequence[str]) -> list[str]:
    """What tells statistics apart: each one without the words that all of them share at the
    start and at the end; ``""`` for each when they are all the same.

    Examples
    --------
    >>> _variants(["rho, layers 1-L [ethayarajh2019 estimators]",
    ...            "rho, layers 1-L [corrected estimators]"])
    ['ethayarajh2019', 'corrected']
    >>> _variants(["share, last layer (SST-2, fine-tuned)", "share, last layer (QNLI, fine-tuned)"])
    ['SST-2', 'QNLI']
    """
    unique = list(dict.fromkeys(statistics))
    if len(unique) < 2:
        return [""] * len(statistics)
    words = [s.split() for s in unique]
    shortest = min(len(w) for w in words)
    head = 0
    while head < shortest and len({w[head] for w in words}) == 1:
        head += 1
    tail = 0
    while head + tail < shortest and len({w[-1 - tail] for w in words}) == 1:
        tail += 1
    short = {s: _balanced(" ".join(w[head:len(w) - tail]).strip(_TRIM)).strip(_TRIM) or s
             for s, w in zip(unique, words, strict=True)}
    return [short[s] for s in statistics]


def verdict_grid(claims: pd.DataFrame, models: Sequence[str] | None = None,
                 digits: int = 2) -> pd.DataFrame:
    """The claims as a compact grid: one row per claim, control and test, one column per model.

    Parameters
    ----------
    claims : DataFrame
        A claims table (:data:`CLAIM_COLUMNS`), or the rows of it to show.
    models : sequence of str, optional
        The model columns, in order (default: as they appear).
    digits : int
        Decimals of the values and intervals.

    Returns
    -------
    DataFrame
        Columns ``claim``, ``test`` (what tells apart the statistics of one claim under one
        control for one model, e.g. the task or the estimator; ``""`` where there is one),
        ``control``, ``rule`` (``"above 0.5"``), one column per model (``"holds: 0.41 [0.38,
        0.44]"``, ``"not a fair test"``, ``""`` where the model has no such row), then
        ``figure`` and ``statistic`` (of the row's first model). No ``published`` column: the
        full claims table keeps it.
    """
    if claims.empty:
        return pd.DataFrame(columns=["claim", "test", "control", "rule", "figure", "statistic"])
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))
    d = claims[claims["model"].isin(order)].copy()
    d["cell"] = [cell_text(r, digits) for _, r in d.iterrows()]
    d["rule"] = [_rule(a, b) for a, b in zip(d["direction"], d["threshold"], strict=True)]
    d["test"] = ""
    for _, rows in d.groupby(["claim", "control", "model"], sort=False):
        d.loc[rows.index, "test"] = [label(t) if t else t
                                     for t in _variants(list(rows["statistic"]))]
    key = ["claim", "test", "control", "rule"]
    cells = d.pivot_table(index=key, columns="model", values="cell", aggfunc="first",
                          sort=False)
    ranked = d.sort_values("model", key=lambda m: m.map(order.index), kind="stable")
    first = ranked.groupby(key, sort=False)[["figure", "statistic"]].first()
    wide = first.reindex(cells.index).join(
        cells.reindex(columns=[m for m in order if m in cells.columns])).fillna("")
    return wide.reset_index()[["claim", "test", "control", "rule",
                               *[m for m in order if m in wide.columns], "figure", "statistic"]]


def _figure_link(name: str) -> str:
    """A grid row's link text for figure ``name``: ``"Figure 3"`` where this chapter has shown
    it, ``"section"`` for a section label, else the name."""
    from lmgeometry.report.figures import figure_number

    number = figure_number(name)
    if number is not None:
        return f"Figure {number}"
    return "section" if name.startswith("fig-ch") else name


#: Caption of a chapter's verdict grid (:func:`show_verdict_grid`).
GRID_CAPTION = ("The verdicts, claim by model, each cell <i>verdict: statistic [95% interval]"
                "</i>: <i>holds</i> when the whole interval lies on the claimed side of the "
                "threshold (the rule), <i>does not hold</i> when it lies wholly on the other "
                "side, <i>inconclusive</i> otherwise; <i>not a fair test</i> where the model is "
                "no fair stand-in for the seed's, empty where the claim is not made of that "
                "model. Each claim links to the figure that shows its evidence (hover it for "
                "its statistic); the table at the end of the chapter gives every field, with "
                "the seed's published value and the reason for each threshold.")


def show_verdict_grid(claims: pd.DataFrame, models: Sequence[str] | None = None,
                      caption: str = GRID_CAPTION, *, control_name: str = "control",
                      digits: int = 2, anchor: str = GRID_ANCHOR) -> None:
    """Display :func:`verdict_grid` as the chapter's next table, after the figures it links to.

    Each claim links to the figure (or section) that shows its evidence and names it in the
    ``evidence`` column; hovering a claim shows its statistic; the cells are coloured by verdict
    (:data:`VERDICT_CLASSES`). Columns with one value throughout (no ``test``, only the
    seed's protocol as ``control``) are left out.

    Parameters
    ----------
    claims, models, digits
        As for :func:`verdict_grid`.
    caption : str
        The table's caption (HTML; default :data:`GRID_CAPTION`).
    control_name : str
        The header of the ``control`` column ("intervention").
    anchor : str
        The table's HTML id (the findings box links to :data:`GRID_ANCHOR`).
    """
    from lmgeometry.report.figures import figure_anchor, show_table

    grid = verdict_grid(claims, models, digits)
    names = [m for m in grid.columns if m not in
             ("claim", "test", "control", "rule", "figure", "statistic")]
    hrefs = [f"#{figure_anchor(f)}" if f else None for f in grid["figure"]]
    shown = grid.assign(evidence=[_figure_link(f) if f else "" for f in grid["figure"]])
    drop = ["figure", "statistic"] + [c for c in ("test", "control") if
                                      set(grid[c]) <= {"", "none"}]
    if "control" in shown.columns:  # the seed's protocol keeps every word
        shown["control"] = [label(c) if c == "none" else c for c in shown["control"]]
    display_names = {m: plain(m) for m in names}  # MiniLM, not minilm-l6
    shown = shown.drop(columns=drop).rename(columns={"control": control_name, **display_names})
    show_table(shown, caption, fold_rows=max(len(shown), 1), anchor=anchor,
               links={"claim": hrefs, "evidence": hrefs},
               titles={"claim": list(grid["statistic"])},
               classes={display_names[m]: [VERDICT_CLASSES.get(str(c).split(":")[0])
                                           for c in grid[m]] for m in names})


def findings_html(question: str, answer: str, caveat: str = "") -> str:
    """A chapter's findings box: an HTML admonition (it renders in the book and in Jupyter)
    with the question, the answer (HTML, generated from the results) and the main caveat."""
    return ('<div class="admonition note lmg-findings"><p class="admonition-title">Findings'
            f"</p><p><b>Question.</b> {question}</p>{answer}"
            + (f'<p class="lmg-caveat"><b>Main caveat.</b> {caveat}</p>' if caveat else "")
            + "</div>")


def _tally(verdicts: Sequence[str]) -> str:
    """``"1 holds, 2 do not hold, 1 inconclusive"`` (counts of 0 left out)."""
    forms = {"holds": ("holds", "hold"), "does not hold": ("does not hold", "do not hold"),
             "inconclusive": ("inconclusive", "inconclusive")}
    counts = [(v, list(verdicts).count(v)) for v in VERDICTS]
    return ", ".join(f"{n} {forms[v][n != 1]}" for v, n in counts if n)


def _seed_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows tallied as tests of the seed's claims: its protocol, not beyond the seed."""
    return rows[(rows["control"] == "none") & (rows["role"] != "beyond")]


def _model_line(model: str, rows: pd.DataFrame, kind: str) -> str:
    """One model's tally: the seed's claims, the claims beyond it, the verdicts a control
    changes."""
    fair = rows["applies"].astype(bool)
    parts = []
    for what, part in (("of the seed's claims", _seed_rows(rows)),
                        ("beyond the seed", rows[(rows["control"] == "none")
                                                 & (rows["role"] == "beyond")])):
        if part.empty:
            continue
        ok = part[fair[part.index]]
        text = f"{len(part)} {'test' if len(part) == 1 else 'tests'} {what}"
        unfair = len(part) - len(ok)
        if ok.empty:
            parts.append(text + ", none a fair test here")
            continue
        parts.append(f"{text}: {_tally(list(ok['verdict']))}"
                     + (f"; {unfair} not a fair test here" if unfair else ""))
    base = rows[(rows["control"] == "none") & fair].set_index(["seed", "claim", "statistic"])
    for control, part in rows[rows["control"] != "none"].groupby("control", sort=False):
        found = part[fair[part.index]].set_index(["seed", "claim", "statistic"])["verdict"]
        both = found.index.intersection(base.index)
        said = []
        if len(both):
            changed = int((found.loc[both] != base.loc[both, "verdict"]).sum())
            said.append(f"{changed} of {len(both)} verdicts change")
        unfair = int((~fair[part.index]).sum())
        if unfair:
            said.append(f"{unfair} not a fair test here")
        if said:
            parts.append(f"{label(control)}: {', '.join(said)}")
    named = f"<b>{plain(model)}</b>" + (f" ({html.escape(kind)})" if kind else "")
    return f"{named}: {'; '.join(parts)}."


def _key_line(claim: str, rows: pd.DataFrame, order: Sequence[str], digits: int) -> str:
    """One key claim across the models: each verdict with the models and their values."""
    rows = rows.sort_values("model", key=lambda m: m.map(list(order).index), kind="stable")
    tests = pd.Series("", index=rows.index)
    for _, part in rows.groupby("model", sort=False):
        tests[part.index] = [label(t) if t else t
                             for t in _variants(list(part["statistic"]))]
    groups: dict[str, dict[str, list[str]]] = {}  # verdict -> model -> its tests
    for i, r in rows.iterrows():
        fair = bool(r["applies"])
        shown = cell_text(r, digits).split(": ", 1)[-1] if fair else ""
        if fair and r["verdict"] == "holds" and r.get("null_verdict") == "holds":
            # the rule does not show what training did, or that the vectors carry the labels
            shown += _AS_ON_NULL.get(null_kind(r.get("null_model")), ", as on its null")
        test = " ".join(t for t in (tests[i], shown) if t)
        groups.setdefault(r["verdict"] if fair else "not a fair test", {}).setdefault(
            str(r["model"]), []).append(test)
    named = {v: [plain(m) + html.escape(f" ({'; '.join(t for t in found if t)})" if any(found)
                                        else "")
                 for m, found in by_model.items()] for v, by_model in groups.items()}
    phrases = [f"{v} for {_and(named[v])}" for v in VERDICTS if v in named]
    if "not a fair test" in named:
        phrases.append(f"not a fair test on {_and(named['not a fair test'])}")
    # what the numbers are: the statistic, without the estimators' tag its variants name
    measured = re.sub(r"\s*\[[^\]]*\]\s*$", "", str(rows["statistic"].iloc[0])) \
        if len(rows) else ""
    unit = (f' <span class="lmg-stat">(the numbers: {html.escape(measured)})</span>'
            if measured else "")
    return f"\u201c{html.escape(claim)}\u201d{unit}: {'; '.join(phrases)}."


def _key_claims(claims: pd.DataFrame, kinds: Mapping[str, str], n: int) -> list[str]:
    """The first ``n`` seed claims (table order), starting with the first that each kind of
    model (in order of appearance) has a fair test of."""
    rows = _seed_rows(claims)
    fair = rows[rows["applies"].astype(bool)]
    keys: list[str] = []
    models = list(dict.fromkeys(claims["model"]))
    for kind in dict.fromkeys(kinds.get(m, "") for m in models):
        of_kind = fair[fair["model"].isin([m for m in models if kinds.get(m, "") == kind])]
        found = [c for c in dict.fromkeys(of_kind["claim"]) if c not in keys]
        keys += found[:1]
    keys += [c for c in dict.fromkeys(rows["claim"]) if c not in keys]
    return keys[:max(n, 0)]


def _bullets(lines: Sequence[str]) -> str:
    """An HTML list of ``lines``; ``"<p>None.</p>"`` when there are none."""
    return "<ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>" if lines \
        else "<p>None.</p>"


def findings_box(claims: pd.DataFrame, kinds: Mapping[str, str] | None = None, *,
                 question: str, caveat: str = "", models: Sequence[str] | None = None,
                 answer: str = "",
                 key_claims: Sequence[str] | None = None, n_key: int = 2, digits: int = 2,
                 anchor: str = GRID_ANCHOR) -> str:
    """A chapter's answer first: the findings box, generated from its claims table.

    Parameters
    ----------
    claims : DataFrame
        The claims to tally (:data:`CLAIM_COLUMNS`); a chapter passes the rows its verdict
        grid shows.
    kinds : mapping, optional
        Model -> kind ("encoder", "decoder"), named beside each model.
    question : str
        The chapter's question (HTML).
    caveat : str
        The main caveat (HTML), if any.
    models : sequence of str, optional
        The models, in order (default: as they appear).
    answer : str
        The answer in one plain-English sentence (HTML), shown first
        (:func:`report.narrative.plain_answer`); the verdicts follow it.
    key_claims : sequence of str, optional
        The claims whose verdicts the box states with their values (default:
        :func:`_key_claims`, the first claim of the seed's that each kind of model is fairly
        tested on, then the next ones, ``n_key`` in all).
    n_key : int
        How many key claims by default.
    digits : int
        Decimals of the values and intervals.
    anchor : str
        The id of the verdict grid the box links to.

    Returns
    -------
    str
        An HTML admonition (:func:`findings_html`): the key claims' verdicts with value and
        interval per model; folded (``<details>``, so that the answer and the chapter's key
        figure fit the first screen), per model, how many tests of the seed's claims and beyond them
        hold, do not hold or are inconclusive, how many are not a fair test here and how many
        verdicts each control changes; a link to the verdict grid. Every name is escaped.
    """
    kinds = kinds or {}
    order = list(models) if models is not None else list(dict.fromkeys(claims["model"]))
    claims = claims[claims["model"].isin(order)]
    main = claims[claims["control"] == "none"]
    keys = list(key_claims) if key_claims is not None else _key_claims(claims, kinds, n_key)
    lines = [_key_line(k, main[main["claim"] == k], order, digits) for k in keys
             if (main["claim"] == k).any()]
    tallies = [_model_line(m, claims[claims["model"] == m], kinds.get(m, "")) for m in order
               if (claims["model"] == m).any()]
    said = (f'<p class="lmg-answer"><b>Answer.</b> {answer}</p>' if answer else "")
    answer = (said + f'<p><b>The verdicts, from this run</b> (each claim with its figure: <a '
              f'href="#{html.escape(anchor)}">the verdict grid</a>, after the evidence):</p>'
              + _bullets(lines)
              + (f"<details><summary><b>Every verdict, per model</b> ({len(tallies)} "
                 f"model{'s' if len(tallies) != 1 else ''})</summary>{_bullets(tallies)}"
                 "</details>" if tallies else ""))
    return findings_html(question, answer, caveat)
