"""The book's story in written sentences: the conclusion and each chapter's "What this run shows".

The sentences are written by hand; every number and every verdict in them is read from the
results files (the dicts :func:`report.results.load_results` returns, or the same structures
in memory while a chapter runs: a ``claims`` table as records or a DataFrame, and the chapter's
other tables). A sentence states a direction ("falls with depth", "does not split"), so each
template first checks that the results still say what its wording assumes
(:func:`claim`, :func:`says`) and raises :class:`StoryChanged`, naming the sentence, the claim,
the model and what the results now say, when they do not: a re-run whose verdict flips stops
the chapter instead of printing a sentence the evidence no longer supports. The fix is to
rewrite that sentence here.

This module reads results structures only; it imports nothing from ``lmgeometry.chapters``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from lmgeometry.claims import OUTCOMES, tier_totals
from lmgeometry.claims.record import is_permuted
from lmgeometry.errors import LmgeometryError
from lmgeometry.report.plot_lines import lines_by_layer
from lmgeometry.report.plot_style import label
from lmgeometry.report.prose import layers_phrase

__all__ = [
    "StoryChanged",
    "NOT_WRITTEN",
    "claim",
    "says",
    "name",
    "conclusion",
    "conclusion_figures",
    "run_shows",
    "plain_answer",
    "PARAGRAPHS",
    "PLAIN",
]


class StoryChanged(LmgeometryError, RuntimeError):
    """The results no longer support a written sentence of the book (exit status 1)."""


Results = Mapping[str, Any]


def _records(table: Any) -> list[dict[str, Any]]:
    """A results table as a list of dicts: records as saved, or a DataFrame in memory."""
    if table is None:
        return []
    if isinstance(table, pd.DataFrame):
        return table.to_dict("records")
    return [dict(r) for r in table]


def name(model: str) -> str:
    """A model's display name (MiniLM, MPNet, SmolLM2, Gemma 3): :func:`plot_style.label`."""
    return label(model)


def claim(results: Results, text: str, model: str, *, control: str = "none",
          task: str | None = None, preset: str | None = None,
          statistic: str | None = None) -> dict[str, Any]:
    """The one claims row a sentence cites.

    Parameters
    ----------
    results : mapping
        A chapter's results (its ``claims`` table as records or a DataFrame).
    text : str
        The start of the claim's text (``"upper layers are more context-specific"``).
    model, control : str
        The row's model and control (``"none"``: the seed's protocol, all words).
    task, preset, statistic : str, optional
        The row's task and estimator preset (exact), a part of its statistic's text.

    Raises
    ------
    StoryChanged
        When no row or more than one matches: the sentence cites a row the results lack.
    """
    rows = [r for r in _records(results.get("claims"))
            if str(r.get("claim", "")).startswith(text) and r.get("model") == model
            and r.get("control") == control
            and (task is None or r.get("task", "") == task)
            and (preset is None or r.get("preset", "") == preset)
            and (statistic is None or statistic in str(r.get("statistic", "")))]
    if len(rows) != 1:
        raise StoryChanged(
            f"the book's text cites the claim \u201c{text}\u201d on {model} (control {control}"
            f"{', task ' + task if task else ''}{', preset ' + preset if preset else ''}), "
            f"but the results hold {len(rows)} such rows: re-run the chapter, or rewrite the "
            "sentence in lmgeometry/report/narrative.py")
    return rows[0]


def says(row: Mapping[str, Any], verdicts: str | Sequence[str], *,
         fair: bool | None = True) -> Mapping[str, Any]:
    """Check that ``row`` still has the verdict (one of ``verdicts``) a sentence states.

    ``fair`` is whether the sentence treats the row as a fair test of the seed's claim
    (``applies``); ``None`` when the sentence does not say. Returns ``row``.

    Raises
    ------
    StoryChanged
        Naming the claim, the model, the verdict the wording assumes and the one found.
    """
    wanted = (verdicts,) if isinstance(verdicts, str) else tuple(verdicts)
    found = str(row.get("verdict"))
    applies = bool(row.get("applies", True))
    if found not in wanted or (fair is not None and applies != fair):
        raise StoryChanged(
            f"the book's text says \u201c{row.get('claim')}\u201d {' or '.join(wanted)} on "
            f"{row.get('model')} ({'a fair test' if fair else 'not a fair test'}"
            f"{'' if row.get('control') == 'none' else ', ' + str(row.get('control'))}), "
            f"but the results now say {found} ({'a fair test' if applies else 'not a fair test'}"
            f"; value {_num(row.get('value'))}): rewrite the sentence in "
            "lmgeometry/report/narrative.py")
    return row


def _working(rows: Sequence[Mapping[str, Any]], start: str) -> list[Mapping[str, Any]]:
    """The claim's rows judged under an intervention that leaves the model working."""
    return [x for x in rows if str(x["claim"]).startswith(start) and x.get("applies", True)]


def _num(x: Any, digits: int = 2) -> str:
    """``0.8782`` -> ``"0.88"``; a minus sign, not a hyphen; ``"n/a"`` when missing."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{float(x):.{digits}f}".replace("-", "\u2212")


def _pct(x: Any) -> str:
    """``0.377`` -> ``"38%"``."""
    return f"{float(x):.0%}"


def _ci(row: Mapping[str, Any], digits: int = 2) -> str:
    """``"0.88 (95% interval 0.87 to 0.89)"``."""
    return (f"{_num(row['value'], digits)} (95% interval {_num(row['ci_low'], digits)} to "
            f"{_num(row['ci_high'], digits)})")


def _num_3(x: Any) -> str:
    """``0.97438`` -> ``"0.974"``."""
    return _num(x, 3)


def _span(values: Sequence[float], fmt: Callable[[Any], str] = _num) -> str:
    """The range of ``values`` as text: ``"0.28 to 0.41"``, one number when alike."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _layer_values(row: Mapping[str, Any]) -> tuple[str, str]:
    """The first and last values an evidence text such as ``"mean adjusted SelfSim 0.758
    (layer 1) to 0.559 (layer 6)"`` gives, as written, which must be of the first block and
    the last layer (``"0.758"``, ``"0.559"``)."""
    evidence = str(row.get("evidence", ""))
    parts = evidence.rsplit(" to ", 1)
    if len(parts) != 2:
        raise StoryChanged(f"the book's text reads the first and last layer from the evidence "
                           f"of \u201c{row.get('claim')}\u201d on {row.get('model')}, which "
                           f"now reads {evidence!r}: rewrite the sentence in "
                           "lmgeometry/report/narrative.py")
    first = parts[0].split()[-3:]
    last = parts[1].split()
    if first[1:] != ["(layer", "1)"]:
        raise StoryChanged(f"the book's text says the evidence of \u201c{row.get('claim')}"
                           f"\u201d on {row.get('model')} starts at the first block, but it "
                           f"reads {evidence!r}: rewrite the sentence in "
                           "lmgeometry/report/narrative.py")
    return first[0], last[0]


def _permuted(rows: Sequence[Mapping[str, Any]], verdict: str) -> list[float]:
    """The rows' nulls with the labels permuted (:func:`lmgeometry.claims.permuted_model`), each of
    which must have ``verdict``: their values; :class:`StoryChanged` otherwise."""
    values = []
    for row in rows:
        value = row.get("null_value")
        if not is_permuted(row.get("null_model")):
            raise StoryChanged(f"the book's text cites \u201c{row.get('claim')}\u201d on "
                               f"{row.get('model')} with the labels permuted, but the results "
                               "carry no such null for it: re-run the chapter")
        if row.get("null_verdict") != verdict \
                or not isinstance(value, int | float) or not math.isfinite(float(value)):
            raise StoryChanged(f"the book's text says \u201c{row.get('claim')}\u201d {verdict} "
                               f"on {row.get('model')} with the labels permuted, but there it "
                               f"{row.get('null_verdict') or 'has no verdict'} (value "
                               f"{_num(value)}): rewrite the sentence in "
                               "lmgeometry/report/narrative.py")
        values.append(float(value))
    return values


_MEV = "a static vector explains less than 5%"


def _untrained(row: Mapping[str, Any]) -> tuple[str, float]:
    """A row's null (:func:`lmgeometry.claims.attach_nulls`): its verdict and value on the
    model's untrained copy; :class:`StoryChanged` when the results carry none."""
    found, value = str(row.get("null_verdict") or ""), row.get("null_value")
    if not found or not isinstance(value, int | float) or not math.isfinite(float(value)):
        raise StoryChanged(f"the book's text cites \u201c{row.get('claim')}\u201d on an "
                           f"untrained copy of {row.get('model')}, but the results carry no "
                           "null for it: run the chapter with its nulls")
    return found, float(value)


def _mev_rows(results: Results) -> list[Mapping[str, Any]]:
    """The four models' MEV rows under the authors' estimator (a truncated SVD, which their
    released numbers come from: docs/SEED001_ESTIMATORS.md), each a fair test."""
    return [says(claim(results, _MEV, m, preset="ethayarajh2019"),
                 ("holds", "does not hold", "inconclusive"))
            for m in (*ENCODERS, *DECODERS)]


def _mev_groups(rows: Sequence[Mapping[str, Any]]) -> str:
    """Where the MEV claim holds, does not and is undecided, each model with its best layer's
    share: ``"in MPNet (4%); not in MiniLM (21%) and Gemma 3 (14%)"``."""
    words = {"holds": "in", "does not hold": "not in", "inconclusive": "undecided in"}
    parts = []
    for found, word in words.items():
        part = [r for r in rows if r["verdict"] == found]
        if part:
            shares = [f"{name(r['model'])} ({_pct(r['value'])})" for r in part]
            parts.append(f"{word} {_and(shares)}")
    return "; ".join(parts)


# ------------------------------------------------------------------------- the conclusion

ENCODERS = ("minilm-l6", "mpnet-base")
DECODERS = ("smollm2-135m", "gemma3-270m")
MINILM, MPNET, SMOLLM, GEMMA = (*ENCODERS, *DECODERS)


def _contextual(context: Results, senses: Results) -> str:
    """Question 1: are contextual vectors contextual? (chapters 3 and 5)."""
    falls = [says(claim(context, "upper layers are more context-specific", m,
                        preset="ethayarajh2019"), "holds") for m in (MINILM, MPNET, SMOLLM)]
    flat = says(claim(context, "upper layers are more context-specific", GEMMA,
                      preset="ethayarajh2019"), "does not hold")
    ends = {r["model"]: _layer_values(r) for r in [*falls, flat]}
    static = _mev_rows(context)
    corrected = [claim(context, _MEV, m, preset="corrected") for m in (*ENCODERS, *DECODERS)]
    for row in corrected:
        if float(row["value"]) <= float(row["threshold"]):
            raise StoryChanged("the book's text says a corrected estimator still finds a static "
                               f"vector explaining more than 5% on {row['model']}, but it finds "
                               f"{_pct(row['value'])}: rewrite the sentence in "
                               "lmgeometry/report/narrative.py")
    senses_rows = [says(claim(senses, "a word's occurrences are not a few sense vectors", m),
                        "holds") for m in (*ENCODERS, *DECODERS)]
    return (
        "**Are contextual vectors contextual?** Yes, and more so the deeper the layer, in three "
        "of the four models. Ethayarajh's (2019) self-similarity (how alike one word's vectors "
        "are across contexts, minus how alike any two words are) "
        f"falls steadily from the first block to the last in {name(MINILM)} ("
        f"{ends[MINILM][0]} to {ends[MINILM][1]}), {name(MPNET)} ({ends[MPNET][0]} to "
        f"{ends[MPNET][1]}) and {name(SMOLLM)} ({ends[SMOLLM][0]} to {ends[SMOLLM][1]}): its "
        "rank correlation with depth is "
        f"{_span([float(r['value']) for r in falls])} (Figure 1). {name(GEMMA)} is the "
        f"exception: its words are unlike themselves from the first block on "
        f"({ends[GEMMA][0]} to {ends[GEMMA][1]}; rank correlation "
        f"{_num(flat['value'])}). {_depth_alone([*falls, flat])} "
        "Contextual is not sense-like: no model's occurrences of a word "
        "gather into a few tight sense clusters (silhouette "
        f"at most {_num(max(float(r['value']) for r in senses_rows))}; chapter 5). "
        "Ethayarajh found a static vector explains under 5% of a word's variance; with his "
        f"estimator the best layer's share stays under 5% {_mev_groups(static)}; a centred "
        "PCA finds "
        f"{_span([float(r['value']) for r in corrected], _pct)}."
    )


def _learned(row: Mapping[str, Any], lead: str, *more: Mapping[str, Any]) -> str:
    """``"untrained copies reach 0.02 and 0.05: it is learned"``: the rows' values on the
    models' untrained copies, which must not hold the claim (else :class:`StoryChanged`)."""
    nulls = [_untrained(r) for r in (row, *more)]
    if any(v == "holds" for v, _ in nulls):
        raise StoryChanged(f"the book's text says \u201c{row.get('claim')}\u201d is learned, "
                           "but it holds on an untrained copy too: rewrite the sentence in "
                           "lmgeometry/report/narrative.py")
    values = [x for _, x in nulls]
    shown = ("under 0.001" if max(abs(x) for x in values) < 0.001
             else _and([_num(x) for x in values]))
    return f"{lead} {shown}: it is learned"


def _depth_alone(rows: Sequence[Mapping[str, Any]]) -> str:
    """What an untrained copy of each model says of the fall of self-similarity with depth:
    where it falls there too (the architecture's), where it does not (so a trained model's
    fall is learned), and where training flattens a fall the architecture has."""
    nulls = {r["model"]: _untrained(r) for r in rows}
    trained = {r["model"]: r["verdict"] for r in rows}
    same = [m for m, (v, _) in nulls.items() if v == "holds"]
    other = [m for m in nulls if m not in same]

    def listed(models: Sequence[str]) -> str:
        return _and([f"{name(m)} ({_num(nulls[m][1])})" for m in models])

    said = "An untrained copy of each model (the same architecture, random weights) "
    said += (f"shows the same fall in {listed(same)}" if same
             else "shows no such fall in any model")
    if same and other:
        said += f", but not in {listed(other)}"
    learned = [name(m) for m in other if trained[m] == "holds"]
    flattened = [name(m) for m in same if trained[m] != "holds"]
    if learned:
        said += f": only {_and(learned)}'s fall is learned"
    if flattened:
        said += f"{'; ' if learned else ': '}training flattens it in {_and(flattened)}"
    return said + "."


def _same_way(context: Results, drift: Results, sink: Results, pair: Results) -> str:
    """Question 2: why do they all point the same way? (chapters 3, 4, 9, 10)."""
    aniso = {m: says(claim(context, "representations are anisotropic in every", m), "holds")
             for m in DECODERS}
    spread = {m: says(claim(context, "representations are anisotropic in every", m),
                      "does not hold", fair=False) for m in ENCODERS}
    shared = [says(claim(drift, "W's rows share a common direction", m), "holds")
              for m in (MPNET, SMOLLM, GEMMA)]
    says(claim(drift, "W's rows share a common direction", MINILM), "does not hold")
    table = {r["model"]: r for r in _records(drift.get("table1"))}
    centred = [f"{_num(table[m]['isotropy_raw'])} to {_num(table[m]['isotropy_centered'])} "
               f"({name(m)})" for m in (MPNET, SMOLLM, GEMMA)]
    kept = {m: [says(r, "does not hold") for r in _working(
                    _records(sink.get("claims")), "beyond the paper: the decoders' high anisotropy")
                if r["model"] == m]
            for m in DECODERS}
    lacking = [m for m, rows in kept.items() if not rows]
    if lacking:
        raise StoryChanged("the book's text cites chapter 9's interventions on the anisotropy "
                           f"of {', '.join(lacking)}, which its results lack: re-run chapter 9")
    tied = says(claim(pair, "beyond the paper: W's common drift direction comes from the tied",
                      "pair-causal", control="output layer untied"), "holds")
    return (
        "**Why do they all point the same way?** In this build only the decoders' vectors do. "
        "The mean cosine of two words from different sentences never "
        f"falls below {_num(aniso[SMOLLM]['value'])} in {name(SMOLLM)} and "
        f"{_num(aniso[GEMMA]['value'])} in {name(GEMMA)} in any layer after the input "
        f"(Figure 2; {_learned(aniso[SMOLLM], 'untrained copies reach', aniso[GEMMA])}), "
        "while the two sentence encoders reach "
        f"{_span([float(x['value']) for x in spread.values()])}, no test of BERT (below). "
        "The input embedding matrices show Biš et al.'s (2021) common drift: the rows of "
        f"{_and([name(r['model']) for r in shared])}'s matrices share one direction "
        f"({_learned(shared[0], 'untrained ones reach', *shared[1:])}), and "
        "subtracting the mean row lifts their isotropy (1 is perfect) from "
        f"{_and(centred)} (chapter 4). Nor is the attention sink the cause: "
        "under every intervention on it that leaves a model working, at least "
        f"{_pct(min(float(r['value']) for r in kept[SMOLLM]))} of {name(SMOLLM)}'s and "
        f"{_pct(min(float(r['value']) for r in kept[GEMMA]))} of {name(GEMMA)}'s anisotropy "
        "stays in place (chapter 9). In the small causal model trained here, tying the input "
        "matrix to the output layer gives it its common direction (untying lowers its rows' "
        f"mean cosine by {_num(tied['value'])}; chapter 10)."
    )


def _split_layers(geometry: Results, model: str, control: str) -> list[int]:
    """The inner layers (1 to L - 1) of ``model`` that split into well-separated clusters,
    from chapter 1's per-layer table (its ``split`` column)."""
    rows = [r for r in _records(geometry.get("layers"))
            if r.get("model") == model and r.get("control") == control]
    if not rows:
        raise StoryChanged(f"the book's text cites chapter 1's per-layer splits of {model} "
                           f"({control}), which its results lack: re-run chapter 1")
    last = max(int(r["layer"]) for r in rows)
    return sorted(int(r["layer"]) for r in rows if r.get("split") and 0 < int(r["layer"]) < last)


def _share(geometry: Results, model: str, layers: Sequence[int]) -> str:
    """``"27 of its 29 inner layers"`` (layers 1 to L - 1, where a split is looked for)."""
    last = max(int(r["layer"]) for r in _records(geometry.get("layers"))
               if r.get("model") == model)
    return f"{len(layers)} of its {last - 1} inner layers"


def _without_context(sink: Results) -> dict[str, Mapping[str, Any]]:
    """Chapter 9's context control per decoder: a later token cut off from its context joins
    SmolLM2's first tokens (and not with its context: the null) and not Gemma 3's start
    token."""
    found = {m: claim(sink, _NO_CONTEXT, m, control=_CUT_OFF) for m in DECODERS}
    says(found[SMOLLM], "holds")
    says(found[GEMMA], "does not hold")
    if found[SMOLLM].get("null_verdict") != "does not hold":
        raise StoryChanged("the book's text says a token joins SmolLM2's first tokens only "
                           "when cut off from its context, but chapter 9's null (the same "
                           "tokens with their context) no longer shows it: rewrite the sentence "
                           "in lmgeometry/report/narrative.py")
    return found


#: Chapter 9's context control: its claim and its run's name.
_NO_CONTEXT = "beyond the paper: a token that sees no context joins the first-token cluster"
_CUT_OFF = "fifth token cut off from its context"


def _first_token(geometry: Results, sink: Results) -> str:
    """Question 3: why do decoders split off their first token? (chapters 1 and 9)."""
    split = says(claim(geometry, "the representations split into two", SMOLLM), "holds")
    first = says(claim(geometry, "one of the clusters is the sentences' first words", SMOLLM),
                 "holds")
    gone = says(claim(geometry, "the representations split into two", SMOLLM,
                      control="first word excluded"), "does not hold")
    gemma = says(claim(geometry, "the representations split into two", GEMMA),
                 "does not hold", fair=False)
    encoders = [says(claim(geometry, "no layer splits into well-separated", m), "holds")
                for m in ENCODERS]
    reset = {m: says(claim(sink, "beyond the paper: the first-token cluster is caused by", m,
                           control="massive activations removed"), "does not hold")
             for m in DECODERS}
    alone = _without_context(sink)
    smol_all, smol_rest = (_split_layers(geometry, SMOLLM, c)
                           for c in ("none", "first word excluded"))
    gemma_all = _split_layers(geometry, GEMMA, "none")
    if not (len(smol_rest) < len(smol_all) / 2 and 0 < len(gemma_all) <= 2):
        raise StoryChanged("the book's text says most of SmolLM2's split layers stop splitting "
                           "without the first word and Gemma 3 splits in a layer or two, which "
                           "chapter 1's per-layer table no longer shows: rewrite the sentence in "
                           "lmgeometry/report/narrative.py")
    cost = [r for r in _records(sink.get("loss"))
            if r.get("model") == SMOLLM and r.get("condition") == "massive"]
    if len(cost) != 1 or float(cost[0]["ratio_lo"]) <= 1:
        raise StoryChanged("the book's text says removing SmolLM2's massive activations raises "
                           "its loss, which chapter 9's results lack: re-run chapter 9")
    return (
        "**Why do decoders split off their first token?** In "
        f"{name(SMOLLM)}, because it is the one token that sees no context. {name(SMOLLM)}, "
        "run without a start token as the seeds ran "
        f"GPT-2, splits {_share(geometry, SMOLLM, smol_all)} into two well-separated clusters "
        f"(a mean silhouette of {_num(split['value'])}, where 0.5 marks a reasonable split; "
        f"{_learned(split, 'an untrained copy reaches')}), and "
        f"{_pct(first['value'])} of the "
        "words outside the main cluster are sentences' first words. Leave each sentence's "
        f"first word out and only {layers_phrase(smol_rest)} still split (a mean of "
        f"{_num(gone['value'])}; Figure 3); cut a later word off from its context and it "
        f"joins the first words (silhouette {_num(alone[SMOLLM]['value'])}, against "
        f"{_num(alone[SMOLLM]['null_value'])} with its context; chapter 9). "
        f"{name(GEMMA)}'s tokenizer puts a start token before every sentence, which takes that "
        f"role: with it, {name(GEMMA)}'s words split only in {layers_phrase(gemma_all)} (a "
        f"mean of {_num(gemma['value'])}), and a word without context does not join it "
        f"({_num(alone[GEMMA]['value'])}): there the cluster is the start token itself. "
        f"Neither encoder splits ({_num(encoders[0]['value'])} and "
        f"{_num(encoders[1]['value'])}). Nor do the first token's massive activations set it "
        f"apart: remove them and the first tokens stay apart (silhouette "
        f"{_num(reset[SMOLLM]['value'])} in "
        f"{name(SMOLLM)}, {_num(reset[GEMMA]['value'])} in {name(GEMMA)}), though "
        f"{name(SMOLLM)}'s loss rises {_num(cost[0]['ratio'], 2)} times."
    )


def _stand_ins(summary: Sequence[Mapping[str, Any]]) -> str:
    """What the stand-in models can and cannot say, with the scorecard's tally per
    calibration tier (the rules checked on the seeds' numbers, then the others)."""
    frame = pd.DataFrame(list(summary))
    wanted = ["seed", "calibration", "rows", *OUTCOMES, "of which opposite", "of which weaker"]
    tiers = tier_totals(frame.reindex(columns=list(dict.fromkeys([*frame.columns, *wanted])))
                        .fillna(0))
    numeric, quoted = tiers["numeric"], tiers["quoted"]
    tested = {t: sum(int(c.get(k, 0)) for k in OUTCOMES
                     if k not in ("not testable here", "seed silent")) for t, c in tiers.items()}
    how = [f"{numeric[f'of which {k}']} {w}" for k, w in (("opposite", "the opposite way"),
                                                          ("weaker", "only weaker"))
           if numeric[f"of which {k}"]]
    return (
        "**What the stand-ins can and cannot say.** No model here is GPT-2 or BERT: "
        f"{name(MINILM)} and {name(MPNET)} are contrastively fine-tuned sentence encoders, no "
        "test of BERT's anisotropy or intra-sentence similarity; "
        f"{name(SMOLLM)} and {name(GEMMA)} are small 4-bit decoders with rotary positions, no "
        "test of GPT-2's position embeddings. Per claim and kind of model, of the findings the "
        f"seeds' numbers check, {numeric['reproduced']} are reproduced, "
        f"{numeric['also true of an untrained model']} hold on an untrained copy too, "
        f"{numeric['also true with labels permuted']} on permuted labels, "
        + (f"{numeric['also true with the layers shuffled']} with the layers in a random "
           "order, " if numeric["also true with the layers shuffled"] else "")
        + (f"{numeric['also true with the basis rotated']} in a random basis, "
           if numeric["also true with the basis rotated"] else "")
        + f"{numeric['held without a null run']} had no null run, "
        f"{numeric['contradicted']} are contradicted"
        f"{' (' + _and(how) + ')' if how else ''}, {numeric['inconclusive']} are "
        f"inconclusive and {numeric['not testable here']} cannot be tested here. Of the "
        f"{tested['quoted']} tested that the seeds only describe in words, "
        f"{quoted['reproduced']} are reproduced and {quoted['contradicted']} contradicted."
    )


#: The chapters whose results the conclusion reads.
CONCLUSION_CHAPTERS = ("01_geometry", "03_context_measures", "04_drift_and_centering",
                       "05_senses", "09_attention_sink", "10_controlled_pair")


def conclusion(chapters: Mapping[str, Results], summary: Any, *, strict: bool = True) -> str:
    """The book's conclusion: the introduction's three questions answered, then what the
    stand-in models can and cannot say (Markdown, one paragraph each).

    Parameters
    ----------
    chapters : mapping
        Chapter name (``"03_context_measures"``) -> its results (:data:`CONCLUSION_CHAPTERS`).
    summary : DataFrame or records
        The scorecard's per-seed tally (:func:`lmgeometry.claims.seed_summary`).

    strict : bool
        As for :func:`run_shows`: ``False`` returns :data:`NOT_WRITTEN` with the reason
        instead of raising.

    Raises
    ------
    StoryChanged
        When a chapter's results are missing or no longer support a sentence.
    """
    try:
        return _conclusion(chapters, summary)
    except StoryChanged as exc:
        if strict:
            raise
        return NOT_WRITTEN.format(reason=_reason(exc))


def _conclusion(chapters: Mapping[str, Results], summary: Any) -> str:
    missing = [c for c in CONCLUSION_CHAPTERS if c not in chapters]
    if missing:
        raise StoryChanged(f"the conclusion reads the results of {', '.join(missing)}, which "
                           "this build lacks: run those chapters first")
    c = chapters
    return "\n\n".join([
        _contextual(c["03_context_measures"], c["05_senses"]),
        _same_way(c["03_context_measures"], c["04_drift_and_centering"],
                  c["09_attention_sink"], c["10_controlled_pair"]),
        _first_token(c["01_geometry"], c["09_attention_sink"]),
        _stand_ins(_records(summary)),
    ])


def conclusion_figures(chapters: Mapping[str, Results]) -> list[tuple[go.Figure, str, str]]:
    """The three figures that carry the conclusion, drawn from chapters 1 and 3's per-layer
    tables: ``(figure, name, caption)`` each, for :func:`report.figures.show`."""
    # the decoders' control, named so that every word (the seed's protocol) sorts first and
    # is drawn solid, the first word left out dashed
    controls = {"none": "all words", "first word excluded": "without each first word"}
    context = pd.DataFrame(_records(chapters["03_context_measures"].get("per_layer")))
    context = context[(context["preset"] == "ethayarajh2019") & (context["layer"] > 0)]
    context = context.assign(control=context["control"].map(controls))
    selfsim = context[context["control"] == controls["none"]]
    geometry = pd.DataFrame(_records(chapters["01_geometry"].get("layers")))
    geometry = geometry[geometry["layer"] > 0]
    geometry = geometry.assign(control=geometry["control"].map(controls))
    fig1 = lines_by_layer(selfsim, "selfsim_adj", x="depth", lower="selfsim_adj_lo",
                          upper="selfsim_adj_hi",
                          y_title="self-similarity, anisotropy-adjusted")
    fig2 = lines_by_layer(context, "baseline_cosine", x="depth", dash="control",
                          lower="baseline_cosine_lo", upper="baseline_cosine_hi",
                          y_title="mean cosine of words from different sentences")
    fig3 = lines_by_layer(geometry, "silhouette", x="depth", dash="control",
                          lower="silhouette_lo", upper="silhouette_hi",
                          reference=0.5, reference_name="a reasonable split (0.5)",
                          y_title="best k-means silhouette")
    return [
        (fig1, "conclusion-selfsim",
         "How alike a word's vectors are across its contexts, minus how alike any two words "
         "are (Ethayarajh's adjusted self-similarity), by relative depth, layers 1 to the last "
         "(the input layer, which has no context, is left out). Lower means more contextual. "
         "Bands: 95% intervals. From chapter 3."),
        (fig2, "conclusion-anisotropy",
         "The mean cosine of two words from different sentences (anisotropy: 0 for directions "
         "spread evenly, 1 when all vectors point the same way), by relative depth; dashed: "
         "the decoders with each sentence's first word left out. From chapter 3."),
        (fig3, "conclusion-split",
         "How well each layer splits into clusters (the best k-means silhouette; above 0.5 is a "
         "reasonable split), by relative depth; dashed: the decoders with each sentence's "
         "first word left out. SmolLM2, run without a start token, splits in most layers, "
         "and most of the split goes with the first words. From chapter 1."),
    ]


# ------------------------------------------------------------ each chapter's "What this run shows"

def _geometry(r: Results) -> str:
    split = says(claim(r, "the representations split into two", SMOLLM), "holds")
    gone = says(claim(r, "the representations split into two", SMOLLM,
                      control="first word excluded"), "does not hold")
    first = says(claim(r, "one of the clusters is the sentences' first words", SMOLLM), "holds")
    enc = [says(claim(r, "no layer splits into well-separated", m), "holds") for m in ENCODERS]
    pos = [says(claim(r, "position is not the dominant global feature", m), "holds")
           for m in ENCODERS]
    least = [says(claim(r, "the first token is the least similar", SMOLLM), "does not hold"),
             says(claim(r, "the first token is the least similar", GEMMA), "does not hold",
                  fair=False)]
    del pos, least  # read for the checks of says(): the text states their verdicts
    rest = _split_layers(r, SMOLLM, "first word excluded")
    return (
        f"Of the four models only {name(SMOLLM)} splits the way Kehlbeck et al. (2021) saw "
        "GPT-2 split: into two well-separated clusters, with a mean silhouette of "
        f"{_ci(split, 3)}, the smaller made of "
        f"sentences' first words ({_pct(first['value'])} of it). Most of the split is the "
        f"first word's doing: without it only {layers_phrase(rest)} still split, and the mean "
        f"silhouette drops to {_num(gone['value'])}, under the 0.5 of a reasonable split. "
        f"{name(GEMMA)} is not a fair test, because its tokenizer "
        "puts a start token before the first word, and neither encoder splits (largest "
        f"silhouette {_num(enc[0]['value'])} for {name(MINILM)}, {_num(enc[1]['value'])} for "
        f"{name(MPNET)}). In both encoders position is not the main thing that decides where a "
        "word lies, as Kehlbeck et al. found for BERT. Nor is "
        f"{name(SMOLLM)}'s first token the least similar to the rest of its sentence in every "
        f"layer, as it was in GPT-2; {name(GEMMA)}, whose first token is always the start "
        "token, is no test of that."
    )


def _part_of_speech(r: Results) -> str:
    probe = [says(claim(r, "POS tags are well represented", m), "holds")
             for m in (*ENCODERS, *DECODERS)]
    clusters = [says(claim(r, "POS tags form clusters", m), "holds")
                for m in (*ENCODERS, *DECODERS)]
    says(claim(r, "POS is best represented in the middle layers (probe)", MINILM), "holds",
         fair=False)
    for m in (MPNET, *DECODERS):
        says(claim(r, "POS is best represented in the middle layers (probe)", m), "inconclusive")
    says(claim(r, "POS is best represented in the middle layers (clusters)", MINILM),
         "does not hold", fair=False)
    low = [says(claim(r, "POS is best represented in the middle layers (clusters)", m),
                "does not hold") for m in (MPNET, GEMMA)]
    shuffled = _permuted(probe, "does not hold")
    _permuted(clusters, "does not hold")
    return (
        "Every model carries part of speech: at its best layer a linear probe beats the "
        "simplest rule (each word's most frequent tag) by "
        f"{_span([100 * float(x['value']) for x in probe], '{:.0f}'.format)} percentage "
        "points, and k-means clusters of the vectors recover the tags "
        f"{_span([float(x['value']) for x in clusters], _pct)} of the way from chance to "
        "perfect. Both rules fail when the tags are shuffled among the same words (the probe "
        f"then falls {_span([-100 * v for v in shuffled], '{:.0f}'.format)} points below "
        "that rule, the clusters to chance): passing them takes the real tags. "
        "Kehlbeck et al. (2021) saw the tags most clearly in the middle layers of "
        f"BERT. {name(MINILM)}, six distilled layers, is no test of where in BERT's twelve "
        "(its probe does peak in the middle). In the other three the layers that could be the "
        "probe's best span too much of the network to tell, and the clusters of "
        f"{_and([name(x['model']) for x in low])} are purest in their lower layers, not in the "
        "middle."
    )


def _context(r: Results) -> str:
    falls = [says(claim(r, "upper layers are more context-specific", m,
                        preset="ethayarajh2019"), "holds") for m in (MINILM, MPNET, SMOLLM)]
    says(claim(r, "upper layers are more context-specific", GEMMA, preset="ethayarajh2019"),
         "does not hold")
    for m in (MINILM, MPNET, SMOLLM):
        says(claim(r, "stopwords are among the least self-similar", m, preset="ethayarajh2019"),
             "holds")
    near0 = [says(claim(r, "adjusted IntraSim is close to 0", m, preset="ethayarajh2019"),
                  "holds") for m in DECODERS]
    above = [says(claim(r, "adjusted IntraSim stays above the baseline", m,
                        preset="ethayarajh2019"), "holds", fair=False) for m in ENCODERS]
    static = _mev_rows(r)
    untrained = [name(x["model"]) for x in falls if _untrained(x)[0] == "holds"]
    same = (f" (as in an untrained copy of {_and(untrained)}: there depth alone does it)"
            if untrained else "")
    return (
        "Three of Ethayarajh's (2019) findings carry over. A word's vectors grow less alike "
        f"with depth in {name(MINILM)}, {name(MPNET)} and {name(SMOLLM)}{same}, though not in "
        f"{name(GEMMA)}, whose words are context-specific after its first block; "
        "stopwords are among the least self-similar words in the same three; the "
        "decoders' words are hardly more alike within a sentence than across sentences "
        f"(adjusted intra-sentence similarity {_span([float(x['value']) for x in near0])}), as "
        "in GPT-2, while the encoders' stay above it "
        f"({_span([float(x['value']) for x in above])}). A static vector explains under 5% of "
        "a word's variance (the authors' estimator) "
        f"{_mev_groups(static)}.\n\n{_curve_shapes(r)}"
    )


def _curve_shapes(r: Results) -> str:
    """Seed 001's remarks on the shape of GPT-2's curves (input layer, acceleration, last
    layer, raw MEV): which carry over to the decoders, and to the encoders."""
    def row(text: str, m: str, verdict: str, preset: str | None = "ethayarajh2019",
            fair: bool | None = True) -> Mapping[str, Any]:
        return says(claim(r, text, m, preset=preset), verdict, fair=fair)

    lead = row("adjusted IntraSim is highest in the input layer", SMOLLM, "holds")
    row("adjusted IntraSim is highest in the input layer", GEMMA, "does not hold")
    faster = [row("anisotropy rises fastest in the last third", m, "does not hold", None)
              for m in DECODERS]
    last = [row("the last layer is almost maximally context-specific", m, "does not hold")
            for m in DECODERS]
    twins = [_untrained(x) for x in last]
    raw_dec = [row("raw MEV is non-negligible", m, "holds") for m in DECODERS]
    raw_enc = [row("raw MEV is non-negligible", m, "does not hold") for m in ENCODERS]
    if any(float(x["ci_high"]) >= 0 for x in faster) or any(v != "holds" for v, _ in twins):
        raise StoryChanged("the book's text says the decoders' anisotropy rises less over the "
                           "last third of the layers than over the half before (intervals "
                           "below 0) and that their untrained copies' last layers are near-"
                           "maximally context-specific, but one no longer is: rewrite the "
                           "sentence in lmgeometry/report/narrative.py")
    return (
        "GPT-2's curve shapes carry over only in part. As in GPT-2, "
        f"{name(SMOLLM)}'s words are most alike within a sentence in the input layer (by "
        f"{_num_3(lead['value'])}, 95% interval {_num_3(lead['ci_low'])} to "
        f"{_num_3(lead['ci_high'])}); {name(GEMMA)}'s are not. The decoders' anisotropy rises "
        f"{_and([_num(-float(x['value'])) for x in faster])} less over the last third of "
        "the layers than over the half before, where GPT-2's rose more in its last third. "
        "Their last layers are not near-maximally context-specific (adjusted "
        f"self-similarity {_and([_num(x['value']) for x in last])}), though their untrained "
        f"copies' are ({_and([_num(v) for _, v in twins])}). As in GPT-2, unlike BERT, a "
        "static vector explains a fair share of a word's variance in the decoders' middle "
        f"layers ({_and([_pct(x['value']) for x in raw_dec])}), hardly any in the encoders' "
        f"({_and([_pct(x['value']) for x in raw_enc])})."
    )


def _drift(r: Results) -> str:
    shared = [says(claim(r, "W's rows share a common direction", m), "holds")
              for m in (MPNET, SMOLLM, GEMMA)]
    says(claim(r, "W's rows share a common direction", MINILM), "does not hold")
    closes = [says(claim(r, "centring closes most of the gap to isotropy", m), "holds")
              for m in (*ENCODERS, *DECODERS)]
    for m in (*ENCODERS, *DECODERS):
        for row in [x for x in _records(r.get("claims")) if x["model"] == m
                    and str(x["claim"]).startswith("rare tokens drift furthest")]:
            says(row, "holds")
    pcs = [says(claim(r, "removing the top principal components", m, statistic="(cosine)"),
                "holds") for m in (MPNET, SMOLLM, GEMMA)]
    for m in (*ENCODERS, *DECODERS):
        says(claim(r, "centring improves word similarity", m, statistic="(cosine)"),
             ("inconclusive", "does not hold"))
    along = [says(claim(r, "the top eigenvector of W^T W points along the mean", m), "holds")
             for m in (MPNET, SMOLLM, GEMMA)]
    weaker = says(claim(r, "the top eigenvector of W^T W points along the mean", MINILM),
                  "does not hold")
    untrained = [float(x["null_value"]) for x in along]
    less = [says(claim(r, "centring gains more with the inner product", m), "does not hold")
            for m in (*ENCODERS, *DECODERS)]
    if any(float(x["ci_high"]) >= 0 for x in less) or not all(x["discriminates"] for x in along):
        raise StoryChanged("the book's text says centring gains less with the inner product "
                           "than with the cosine in every model (intervals below 0) and that "
                           "the eigenvector rows hold on the models and not on their untrained "
                           "copies, but one no longer does: rewrite the sentence in "
                           "lmgeometry/report/narrative.py")
    return (
        "Biš et al.'s (2021) common drift is there in three of the four input matrices: the "
        f"rows of {_and([name(x['model']) for x in shared])} share a direction (mean cosine "
        f"{_span([float(x['value']) for x in shared])}), and in every model subtracting the "
        f"mean row closes {_span([float(x['value']) for x in closes], _pct)} of the gap to "
        "perfect isotropy. The rarest tokens drift furthest, as the paper predicts. What the "
        "paper's post-processing does for word similarity is less clear: plain centring "
        "helps no model, while removing the top principal components helps "
        f"{_and([name(x['model']) for x in pcs])} (by "
        f"{_span([float(x['value']) for x in pcs], '{:.1f}'.format)} points of Pearson's "
        "r times 100 on cosines). The paper found the gains larger when words are scored by "
        "the inner product than by the cosine; here centring does the opposite: in every "
        "model its change with the inner product falls short of its change with the cosine "
        f"(by {_span([-float(x['value']) for x in less], '{:.1f}'.format)} points). Its "
        "warning that the eigenvectors of the uncentred W\u1d40W, which the isotropy score uses, "
        "are not W's principal components holds in the same three models: the top one points "
        f"along the mean row (|cos| {_span([float(x['value']) for x in along], _num_3)}; "
        f"{_span(untrained)} on their untrained copies), and in "
        f"{name(weaker['model'])} it is {_num(weaker['value'])}, short of the 0.9 the claim "
        "asks."
    )


def _senses(r: Results) -> str:
    tight = [says(claim(r, "a word's occurrences are not a few sense vectors", m), "holds")
             for m in (*ENCODERS, *DECODERS)]
    pcs = [says(claim(r, "senses are not visible along the first principal", m), "holds")
           for m in (*ENCODERS, *DECODERS)]
    for m in (*ENCODERS, *DECODERS):
        says(claim(r, "senses separate in context", m), ("inconclusive", "does not hold"))
    contexts = [says(claim(r, "words seen in more contexts are less self-similar", m), "holds")
                for m in ENCODERS]
    separate = [claim(r, "senses separate in context", m) for m in (*ENCODERS, *DECODERS)]
    shuffled = _permuted(separate, "does not hold")
    loose = _permuted(tight, "holds")
    _permuted(pcs, "holds")
    del pcs
    if any(float(x["ci_low"]) <= float(x["null_ci_high"]) for x in separate) \
            or any(float(x["value"]) <= v for x, v in zip(tight, loose, strict=True)):
        raise StoryChanged("the book's text says every model's 1-NN sense accuracy and "
                           "silhouette lie above the same with the senses shuffled, but one no "
                           "longer does: rewrite the sentence in lmgeometry/report/narrative.py")
    return (
        "The senses of a word are there but faint. In no model does a word's nearest other "
        "occurrence share its sense clearly more often than guessing the word's most frequent "
        "sense would (Cohen's h "
        f"{_span([float(x['value']) for x in separate])}), though each model's interval lies "
        "wholly above the same statistic's with the senses shuffled among the same occurrences "
        f"({_span(shuffled)}); its occurrences do not gather into a few sense clusters "
        f"(largest silhouette {_span([float(x['value']) for x in tight])}, a little above the "
        f"{_span(loose)} of the senses shuffled, which also form none: a claim of absence "
        "holds on labels the vectors cannot know); and the first two "
        "principal components, which Kehlbeck et al. (2021) plotted, show no senses. In the "
        "two encoders, as Ethayarajh (2019) argued, what makes a word less self-similar is "
        "the variety of contexts it is seen in, not its number of dictionary senses (standardised "
        f"coefficient {_span([float(x['value']) for x in contexts])})."
    )


def _rogue(r: Results) -> str:
    rows = [x for x in _records(r.get("claims"))
            if x["control"] == "none" and x["role"] == "primary"]
    block = [says(x, "holds") for x in rows if x["claim"].startswith("layer-by-layer CKA")]
    rogue = [says(x, "does not hold") for x in rows
             if x["claim"].startswith("a few rogue dimensions dominate")]
    if not block or not rogue:
        raise StoryChanged("chapter 6's text cites its block-structure and rogue-dimension "
                           "claims, which its results lack: re-run chapter 6")
    return (
        "Before any fine-tuning, the block structure of GPTology (2022) is already there: in "
        "every model "
        "and on both tasks, neighbouring layers are more alike than distant ones (by "
        f"{_span([float(x['value']) for x in block])} in linear CKA). Its rogue dimensions "
        "are not: the three largest dimensions of the last layer hold only "
        f"{_span([float(x['value']) for x in rogue], _pct)} of the variance, far below the "
        "half the claim asks for. Whether fine-tuning creates them is chapter 7's question."
    )


def _finetuning(r: Results) -> str:
    def row(text: str, model: str, task: str) -> dict[str, Any]:
        return claim(r, text, model, task=task)

    tasks = sorted({str(x.get("task")) for x in _records(r.get("claims")) if x.get("task")})
    later = [says(row("fine-tuning changes the last half", MINILM, t), "holds") for t in tasks]
    kept = [says(row("the first three blocks are preserved", m, t), "holds")
            for m in (MINILM, SMOLLM) for t in tasks]
    rogue = [says(row("after fine-tuning a few rogue dimensions dominate", m, t),
                  "does not hold") for m in (MINILM, SMOLLM) for t in tasks]
    return (
        "Fine-tuning on two cores reproduces the shape of GPTology's (2022) central result but "
        "not "
        "its rogue dimensions. In both models and on both tasks the first three blocks keep "
        f"their representations (linear CKA with the pretrained blocks "
        f"{_span([float(x['value']) for x in kept])}), and in {name(MINILM)} the last half "
        "changes more than the first on both tasks (by "
        f"{_span([float(x['value']) for x in later])}). But no fine-tuned model puts most of "
        "its last layer's variance in three dimensions (at most "
        f"{_pct(max(float(x['value']) for x in rogue))})."
    )


def _zoo(r: Results) -> str:
    apart = [says(claim(r, "the first block (layer 1) is vastly different", m), "does not hold")
             for m in (MINILM, MPNET, SMOLLM)]
    gemma = says(claim(r, "the first block (layer 1) is vastly different", GEMMA), "holds")
    aniso = [says(claim(r, "the word vectors are extremely anisotropic", m), "holds")
             for m in DECODERS]
    return (
        "Put on the same words, the models' first blocks are more alike than Kehlbeck et al. "
        f"(2021) expected: only {name(GEMMA)}'s first block is far from every other model's (its "
        f"closest linear CKA is {_num(gemma['value'])}), while "
        f"{_and([name(x['model']) for x in apart])} each have a neighbour at "
        f"{_span([float(x['value']) for x in apart])}. The decoders' word vectors are "
        "extremely anisotropic (a mean cosine of "
        f"{_span([float(x['value']) for x in aniso])} between words of different sentences, "
        "averaged over the layers); the encoders, trained to spread sentences apart, are no "
        "fair test of that claim."
    )


_REMOVED = "massive activations removed"
_KEPT = "beyond the paper: set to their mean value, the massive activations leave the loss"
_ZEROED = "beyond the paper: zeroing the massive activations breaks the model"


def _sun_tests(rows: Sequence[Mapping[str, Any]]) -> str:
    """Sun et al. (2024)'s two tests on each decoder, phrased by their verdicts."""
    kept = {x["model"]: x for x in rows if str(x["claim"]).startswith(_KEPT)}
    zeroed = {x["model"]: x for x in rows if str(x["claim"]).startswith(_ZEROED)}
    if set(kept) != set(DECODERS) or set(zeroed) != set(DECODERS):
        raise StoryChanged("chapter 9's text cites Sun et al.'s two tests on both decoders, "
                           "which its results lack: re-run chapter 9")
    verb = {"holds": "keeps", "does not hold": "does not keep",
            "inconclusive": "may or may not keep"}
    broken = {"holds": "breaks the model", "does not hold": "raises it, short of doubling it",
              "inconclusive": "may or may not double it"}
    out = []
    for m in DECODERS:
        k, z = kept[m], zeroed[m]
        zero = (f"zeroing them {broken[z['verdict']]} ({_num(z['value'], 2)} times the intact "
                "loss)")
        if not k.get("applies", True):
            out.append(f"In {name(m)}, whose first token is the same start token in every "
                       "sentence, their mean value is their value, so only the second test "
                       f"tells: {zero}.")
            continue
        out.append(f"In {name(m)}, setting the massive activations to their mean value "
                   f"{verb[k['verdict']]} the loss ({_num(k['value'], 2)} times the intact "
                   f"loss, 95% interval {_num(k['ci_low'], 2)} to {_num(k['ci_high'], 2)}), and "
                   f"{zero}.")
    return " ".join(out)


def _sink(r: Results) -> str:
    rows = _records(r.get("claims"))
    cluster = {x["model"]: says(x, "does not hold") for x in rows
               if str(x["claim"]).startswith("beyond the paper: the first-token cluster")
               and x.get("control") == _REMOVED}
    aniso = [says(x, "does not hold")
             for x in _working(rows, "beyond the paper: the decoders' high anisotropy")]
    iso = [says(x, "does not hold")
           for x in _working(rows, "beyond the paper: without the attention sink")]
    if set(cluster) != set(DECODERS) or not aniso or not iso:
        raise StoryChanged("chapter 9's text cites its interventions on both decoders, which "
                           "its results lack: re-run chapter 9")
    alone = _without_context(r)
    return (
        "The attention sink explains neither finding it is usually blamed for. Removing the "
        "first token's massive activations leaves the first tokens in a cluster of their own "
        f"(silhouette {_num(cluster[SMOLLM]['value'])} in {name(SMOLLM)}, "
        f"{_num(cluster[GEMMA]['value'])} in {name(GEMMA)}, above the 0.5 of a reasonable "
        "split), and no intervention that leaves a model working removes much of the "
        f"decoders' anisotropy: at least {_pct(min(float(x['value']) for x in aniso))} of it "
        "stays. Even then the decoders' space stays less isotropic than the encoders', by "
        f"{_span([float(x['value']) for x in iso])} in mean cosine. What sets "
        f"{name(SMOLLM)}'s first token apart is that it sees no context: a later token cut "
        "off from its context joins the first tokens (silhouette "
        f"{_num(alone[SMOLLM]['value'])}; {_num(alone[SMOLLM]['null_value'])} with its "
        f"context). In {name(GEMMA)} no word without context joins the start token "
        f"({_num(alone[GEMMA]['value'])}; {_num(alone[GEMMA]['null_value'])} with context). "
        + _sun_tests(rows)
    )


def _pair(r: Results) -> str:
    learned = {x["model"]: x for x in _records(r.get("learned"))}
    mlm, causal = learned.get("pair-mlm"), learned.get("pair-causal")
    if mlm is None or causal is None or not (mlm["learned"] and causal["learned"]):
        raise StoryChanged("chapter 10's text says both models of the pair learned, which its "
                           "results no longer show: rewrite the sentence in "
                           "lmgeometry/report/narrative.py")
    if not float(mlm["gain"]) < float(causal["gain"]) / 4:
        raise StoryChanged("chapter 10's text says the masked LM learned far less than the "
                           "causal LM, which its results no longer show: rewrite the sentence "
                           "in lmgeometry/report/narrative.py")
    split = says(claim(r, "no layer splits into well-separated", "pair-mlm"), "holds")
    causal_aniso = says(claim(r, "representations are anisotropic in every", "pair-causal"),
                        "holds")
    mlm_aniso = says(claim(r, "representations are anisotropic in every", "pair-mlm"),
                     "inconclusive")
    tied = says(claim(r, "beyond the paper: W's common drift direction comes from the tied",
                      "pair-causal", control="output layer untied"), "holds")
    output = says(claim(r, "beyond the paper: untied, the output layer keeps the common",
                        "pair-causal", control="output layer untied"), "holds")
    rare = [says(claim(r, "beyond the paper: along the common direction the rarest tokens",
                       "pair-causal", control=c), "holds")
            for c in ("output layer tied", "output layer untied")]
    return (
        "Trained on the same 300,000 tokens, the two models of the pair learned unequally: the "
        f"causal model ends {_num(causal['gain'])} nats per token below its unigram baseline, "
        f"the masked model only {_num(mlm['gain'])} nats, just past this book's 0.1-nat bar "
        "for a model that learned. With that caveat, the objective alone reproduces part of "
        "the encoder-decoder contrast: the causal model's space is anisotropic in every layer "
        f"(at least {_num(causal_aniso['value'])}), the masked model's is not clearly so "
        f"({_num(mlm_aniso['value'])} at its lowest), and the masked model does not split "
        f"into clusters ({_num(split['value'])}). The causal model's common drift comes from "
        "its output layer: untie it and the mean cosine of its input matrix's rows drops by "
        f"{_num(tied['value'])}, while the untied output matrix keeps the direction "
        f"({_num(output['value'])}). The rarest tokens lie furthest along it (rank "
        f"correlation with frequency {_span([float(x['value']) for x in rare])}), as Biš et "
        "al.'s common enemies predict, not a frequency direction."
    )


#: Chapter name -> the template of its "What this run shows" paragraph.
PARAGRAPHS: dict[str, Callable[[Results], str]] = {
    "01_geometry": _geometry,
    "02_part_of_speech": _part_of_speech,
    "03_context_measures": _context,
    "04_drift_and_centering": _drift,
    "05_senses": _senses,
    "06_rogue_dimensions": _rogue,
    "07_finetuning": _finetuning,
    "08_model_zoo": _zoo,
    "09_attention_sink": _sink,
    "10_controlled_pair": _pair,
}


def _plain_geometry(r: Results) -> str:
    return (f"Only {name(SMOLLM)} does: run without a start token, it splits its sentences' "
            f"first words off into a cluster of their own, while {name(GEMMA)}, whose "
            "tokenizer adds a start token, and both encoders do not split.")


def _plain_pos(r: Results) -> str:
    probe = [float(claim(r, "POS tags are well represented", m)["value"])
             for m in (*ENCODERS, *DECODERS)]
    return ("Yes in every model (a linear probe beats each word's most frequent tag by "
            f"{_span([100 * v for v in probe], '{:.0f}'.format)} percentage points), but not "
            "most clearly in the middle layers, as the paper saw it.")


def _plain_context(r: Results) -> str:
    static = _mev_rows(r)
    under = [x for x in static if x["verdict"] == "holds"]
    share = (f"under 5% of a word's variance, as the paper found, only in "
             f"{_and([name(x['model']) for x in under])}" if under
             else "more than the under 5% of a word's variance the paper found in every model")
    return (f"Yes, increasingly with depth, in {name(MINILM)}, {name(MPNET)} and "
            f"{name(SMOLLM)}, though not in {name(GEMMA)}; one static vector per word explains "
            f"{share} ({_span([float(x['value']) for x in static], _pct)} across the four).")


def _plain_drift(r: Results) -> str:
    closes = [float(claim(r, "centring closes most of the gap to isotropy", m)["value"])
              for m in (*ENCODERS, *DECODERS)]
    return (f"Yes in three of the four input matrices ({name(MPNET)}, {name(SMOLLM)}, "
            f"{name(GEMMA)}), and subtracting the mean row closes {_span(closes, _pct)} of "
            "the gap to isotropy in all four; it does not improve word similarity.")


def _plain_senses(r: Results) -> str:
    return ("Only faintly: in no model do a word's occurrences form sense clusters, and its "
            "nearest other occurrence does not clearly share its sense.")


def _plain_rogue(r: Results) -> str:
    return ("Half of it: every pretrained model shows the block structure, and none has "
            "rogue dimensions in its last layer.")


def _plain_finetuning(r: Results) -> str:
    return ("Partly: fine-tuning keeps the first three blocks and, in MiniLM, changes the last "
            "half more than the first, but it creates no dominant rogue dimensions.")


def _plain_zoo(r: Results) -> str:
    return (f"Less than expected: only {name(GEMMA)}'s first block is far from every other "
            "model's, and only the decoders' spaces are strongly anisotropic.")


def _plain_sink(r: Results) -> str:
    rows = _records(r.get("claims"))
    ways = {x["control"] for x in rows
            if str(x["claim"]).startswith("beyond the paper: the decoders' high anisotropy")}
    for start in ("beyond the paper: the first-token cluster",
                  "beyond the paper: the decoders' high anisotropy"):
        for x in _working(rows, start):
            says(x, "does not hold")
    _without_context(r)
    return (f"No: of the {len(ways)} interventions on the sink, none that leaves a model "
            "working removes the first-token cluster or halves the decoders' anisotropy. What "
            f"sets {name(SMOLLM)}'s first token apart is that it sees no context.")


def _plain_pair(r: Results) -> str:
    return ("Partly: trained on the same text, the causal model becomes anisotropic in every "
            "layer and the masked one not clearly so, but the masked model learned far less.")


#: Chapter name -> its findings box's first, plain-English sentence.
PLAIN: dict[str, Callable[[Results], str]] = {
    "01_geometry": _plain_geometry,
    "02_part_of_speech": _plain_pos,
    "03_context_measures": _plain_context,
    "04_drift_and_centering": _plain_drift,
    "05_senses": _plain_senses,
    "06_rogue_dimensions": _plain_rogue,
    "07_finetuning": _plain_finetuning,
    "08_model_zoo": _plain_zoo,
    "09_attention_sink": _plain_sink,
    "10_controlled_pair": _plain_pair,
}


#: What a page shows instead of a written sentence its run's results do not support (a run on
#: other models or parameters than the book's): the reason, in the words of the error.
NOT_WRITTEN = ("*The written summary describes the book's own build; this run's results "
               "differ ({reason}), so only the generated sentences and the verdicts below "
               "describe it.*")


def plain_answer(chapter: str, results: Results, *, strict: bool = True) -> str:
    """A chapter's answer in one plain-English sentence, the first line of its findings box.

    The sentence rests on the same verdicts as the chapter's paragraph (:func:`run_shows`),
    which are checked first: it raises :class:`StoryChanged` where that paragraph would, or,
    with ``strict=False`` (a page built on other models), returns ``""``.
    """
    try:
        run_shows(chapter, results)
    except StoryChanged:
        if strict:
            raise
        return ""
    return PLAIN[chapter](results)


def run_shows(chapter: str, results: Results, *, strict: bool = True) -> str:
    """A chapter's "What this run shows": one written paragraph from its results.

    Parameters
    ----------
    chapter : str
        The chapter's name (``"01_geometry"``), a key of :data:`PARAGRAPHS`.
    results : mapping
        The chapter's results file as loaded, or the same structures in memory (its
        ``claims`` table as records or a DataFrame, and the other tables its paragraph cites).

    strict : bool
        Raise when the results do not support the paragraph (the default, and what the tests
        of the committed build do); ``False`` returns :data:`NOT_WRITTEN` with the reason
        instead, for a page built on other models or parameters than the book's.

    Raises
    ------
    StoryChanged
        When the results no longer support a sentence of the paragraph (or lack a row it
        cites); an unknown chapter is a usage error.
    """
    if chapter not in PARAGRAPHS:
        from lmgeometry.errors import UsageError

        raise UsageError(f"no written paragraph for chapter {chapter!r}: the chapters with one "
                         f"are {', '.join(PARAGRAPHS)}")
    try:
        return PARAGRAPHS[chapter](results)
    except StoryChanged as exc:
        if strict:
            raise
        return NOT_WRITTEN.format(reason=_reason(exc))


def _reason(exc: StoryChanged) -> str:
    """The part of a :class:`StoryChanged` message a reader needs (before the fix)."""
    return str(exc).split(": rewrite the sentence")[0].split(": re-run")[0].replace(
        "the book's text ", "the text ")
