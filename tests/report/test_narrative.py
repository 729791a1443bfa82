"""The book's written sentences against its results: report/narrative.py.

The conclusion and each chapter's paragraph are read from the committed build's results files
(book/*.results.json): a re-execution whose numbers or verdicts no longer support a sentence
fails here, as it fails the chapter. Planted copies of those results, with one verdict flipped
or one number changed, check that the templates notice.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from lmgeometry.errors import UsageError
from lmgeometry.report import narrative
from lmgeometry.report.narrative import StoryChanged

BOOK = Path(__file__).resolve().parents[2] / "book"


def _load(chapter: str) -> dict:
    return json.loads((BOOK / f"{chapter}.results.json").read_text())


@pytest.fixture(scope="module")
def built() -> dict[str, dict]:
    return {c: _load(c) for c in {*narrative.CONCLUSION_CHAPTERS, *narrative.PARAGRAPHS}}


@pytest.fixture(scope="module")
def summary() -> list[dict]:
    return _load("90_scorecard")["summary"]


def _row(results: dict, claim: str, model: str, control: str = "none") -> dict:
    rows = [r for r in results["claims"] if r["claim"].startswith(claim)
            and r["model"] == model and r["control"] == control
            and r.get("preset", "") in ("", "ethayarajh2019")]
    assert len(rows) == 1
    return rows[0]


def _words(text: str) -> int:
    return len(re.sub(r"[*#]", "", text).split())


def test_the_build_supports_the_conclusion(built, summary):
    text = narrative.conclusion(built, summary)
    assert 400 <= _words(text) <= 700  # a three-minute read (issue 47: 400-700)
    paragraphs = text.split("\n\n")
    assert [p.split("**")[1] for p in paragraphs] == [
        "Are contextual vectors contextual?", "Why do they all point the same way?",
        "Why do decoders split off their first token?", "What the stand-ins can and cannot say."]
    # display names only: no alias, no "seed 00x", no code name
    for alias in ("minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m", "seed 00", "_"):
        assert alias not in text.lower()


def test_the_build_supports_every_chapter_paragraph(built):
    for chapter in narrative.PARAGRAPHS:
        text = narrative.run_shows(chapter, built[chapter])
        # one paragraph, or two for a chapter that tests two groups of findings (chapter 3)
        paragraphs = text.split("\n\n")
        assert len(paragraphs) <= 2 and all(40 <= _words(x) <= 200 for x in paragraphs), chapter
        assert "seed 00" not in text.lower() and "-l6" not in text, chapter


def test_a_number_in_the_conclusion_is_the_results_number(built, summary):
    planted = copy.deepcopy(built)
    row = _row(planted["03_context_measures"], "upper layers are more context-specific",
               "smollm2-135m")
    row["value"] = -0.777
    assert "\u22120.78" in narrative.conclusion(planted, summary)
    gemma = _row(planted["01_geometry"], "the representations split into two", "gemma3-270m")
    gemma["value"] = 0.1234
    assert "(a mean of 0.12)" in narrative.conclusion(planted, summary)
    tally = copy.deepcopy(summary)
    numeric = [r for r in tally if r["calibration"] == "numeric"]
    numeric[0]["reproduced"] += 100
    quoted = [r for r in tally if r["calibration"] == "quoted"]
    said = narrative.conclusion(built, tally)
    # the tiers are counted apart: the numeric count moved, the quoted one did not
    assert f"check, {sum(r['reproduced'] for r in numeric)} are reproduced" in said
    assert f"words, {sum(r['reproduced'] for r in quoted)} are reproduced" in said
    # a null that holds where the text says the finding is learned stops the text
    planted = copy.deepcopy(built)
    _row(planted["04_drift_and_centering"], "W's rows share a common direction",
         "smollm2-135m")["null_verdict"] = "holds"
    with pytest.raises(StoryChanged, match="untrained copy too"):
        narrative.conclusion(planted, summary)


def test_a_permuted_null_the_text_cites_stops_its_paragraph(built):
    # the text says the probe's rule fails with the tags shuffled: a null that holds, or none
    for change in ({"null_verdict": "holds"}, {"null_model": "", "null_verdict": ""}):
        planted = copy.deepcopy(built)
        _row(planted["02_part_of_speech"], "POS tags are well represented",
             "mpnet-base").update(change)
        with pytest.raises(StoryChanged, match="with the labels permuted"):
            narrative.run_shows("02_part_of_speech", planted["02_part_of_speech"])
    # and that the senses' silhouette, a claim of absence, holds on its null
    planted = copy.deepcopy(built)
    _row(planted["05_senses"], "a word's occurrences are not a few sense vectors",
         "gemma3-270m")["null_verdict"] = "does not hold"
    with pytest.raises(StoryChanged, match="with the labels permuted"):
        narrative.run_shows("05_senses", planted["05_senses"])


@pytest.mark.parametrize("chapter, claim, model, control, flipped", [
    ("01_geometry", "the representations split into two", "smollm2-135m", "none",
     "does not hold"),
    ("01_geometry", "the representations split into two", "smollm2-135m",
     "first word excluded", "holds"),
    ("03_context_measures", "upper layers are more context-specific", "gemma3-270m", "none",
     "holds"),
    ("04_drift_and_centering", "W's rows share a common direction", "minilm-l6", "none",
     "holds"),
    ("09_attention_sink", "beyond the paper: the first-token cluster is caused", "gemma3-270m",
     "massive activations removed", "holds"),
    ("09_attention_sink", "beyond the paper: a token that sees no context joins",
     "smollm2-135m", "fifth token cut off from its context", "does not hold"),
    ("09_attention_sink", "beyond the paper: a token that sees no context joins",
     "gemma3-270m", "fifth token cut off from its context", "holds"),
])
def test_a_flipped_verdict_stops_the_conclusion(built, summary, chapter, claim, model, control,
                                                 flipped):
    planted = copy.deepcopy(built)
    _row(planted[chapter], claim, model, control)["verdict"] = flipped
    with pytest.raises(StoryChanged, match=re.escape(model)) as caught:
        narrative.conclusion(planted, summary)
    assert "narrative.py" in str(caught.value) and claim[:20] in str(caught.value)


def test_the_context_control_needs_its_null_to_fail_and_the_drift_its_rarest_tokens(built):
    # the text says a token joins SmolLM2's first tokens only without its context
    planted = copy.deepcopy(built)
    _row(planted["09_attention_sink"], "beyond the paper: a token that sees no context",
         "smollm2-135m", "fifth token cut off from its context")["null_verdict"] = "holds"
    with pytest.raises(StoryChanged, match="with their context"):
        narrative.run_shows("09_attention_sink", planted["09_attention_sink"])
    # chapter 10 says the rarest tokens lie furthest along the common direction
    planted = copy.deepcopy(built["10_controlled_pair"])
    _row(planted, "beyond the paper: along the common direction the rarest", "pair-causal",
         "output layer untied")["verdict"] = "does not hold"
    with pytest.raises(StoryChanged, match="rarest"):
        narrative.run_shows("10_controlled_pair", planted)


def test_a_flipped_verdict_stops_its_chapter_paragraph(built):
    planted = copy.deepcopy(built["02_part_of_speech"])
    _row(planted, "POS tags form clusters", "mpnet-base")["verdict"] = "inconclusive"
    with pytest.raises(StoryChanged, match="POS tags form clusters"):
        narrative.run_shows("02_part_of_speech", planted)
    # the same paragraph reads a claims table held in memory as a DataFrame
    frame = {"claims": pd.DataFrame(built["02_part_of_speech"]["claims"])}
    assert narrative.run_shows("02_part_of_speech", frame) == narrative.run_shows(
        "02_part_of_speech", built["02_part_of_speech"])


def test_a_fairness_change_stops_the_sentence(built, summary):
    planted = copy.deepcopy(built)
    _row(planted["01_geometry"], "the representations split into two", "gemma3-270m")[
        "applies"] = True
    with pytest.raises(StoryChanged, match="not a fair test"):
        narrative.conclusion(planted, summary)


def test_a_missing_row_or_chapter_is_named(built, summary):
    planted = copy.deepcopy(built)
    planted["09_attention_sink"]["claims"] = [
        r for r in planted["09_attention_sink"]["claims"] if r["model"] != "gemma3-270m"]
    with pytest.raises(StoryChanged, match="gemma3-270m"):
        narrative.conclusion(planted, summary)
    del planted["05_senses"]
    with pytest.raises(StoryChanged, match="05_senses"):
        narrative.conclusion(planted, summary)
    with pytest.raises(UsageError, match="no written paragraph"):
        narrative.run_shows("42_nothing", {})


def test_the_pair_paragraph_checks_how_much_each_model_learned(built):
    planted = copy.deepcopy(built["10_controlled_pair"])
    for run in planted["learned"]:
        if run["model"] == "pair-mlm":
            run["gain"] = 1.5
    with pytest.raises(StoryChanged, match="learned far less"):
        narrative.run_shows("10_controlled_pair", planted)


def test_the_conclusion_figures_come_from_the_results(built):
    figures = narrative.conclusion_figures(built)
    assert [name for _, name, _ in figures] == [
        "conclusion-selfsim", "conclusion-anisotropy", "conclusion-split"]
    selfsim = figures[0][0]
    smol = [t for t in selfsim.data if t.name == "SmolLM2" and t.mode == "lines+markers"]
    rows = [r for r in built["03_context_measures"]["per_layer"]
            if r["model"] == "smollm2-135m" and r["preset"] == "ethayarajh2019"
            and r["control"] == "none" and r["layer"] > 0]
    assert len(smol) == 1 and len(smol[0].y) == len(rows) == 30
    assert smol[0].y[0] == pytest.approx(sorted(rows, key=lambda r: r["layer"])[0]["selfsim_adj"],
                                         abs=1e-4)
    # the split figure draws the 0.5 its caption names
    assert any(s.y0 == 0.5 for s in figures[2][0].layout.shapes)
    # every word is drawn solid, the first word left out dashed, as the captions say
    for fig, _, caption in figures[1:]:
        assert "dashed: the decoders with each sentence's first word left out" in caption
        styles = {t.name: t.line.dash for t in fig.data if t.mode == "lines+markers"}
        assert styles["SmolLM2 / all words"] == "solid"
        assert styles["SmolLM2 / without each first word"] == "dash"


def test_every_chapter_has_a_plain_answer_checked_like_its_paragraph(built):
    assert set(narrative.PLAIN) == set(narrative.PARAGRAPHS)
    for chapter in narrative.PLAIN:
        sentence = narrative.plain_answer(chapter, built[chapter])
        assert sentence.endswith(".") and len(sentence.split()) <= 45, chapter
    planted = copy.deepcopy(built["09_attention_sink"])
    planted["claims"][0]["verdict"] = "holds"
    with pytest.raises(StoryChanged):
        narrative.plain_answer("09_attention_sink", planted)


def test_a_page_built_on_other_models_says_the_text_is_not_its_own(built, summary):
    """A build on other models (GPT-2 and BERT from the hub, or the tests' random models)
    shows a note with the reason instead of the written text, when asked not to be strict."""
    other = copy.deepcopy(built)
    for results in other.values():
        for row in results.get("claims", []):
            row["model"] = {"smollm2-135m": "gpt2", "minilm-l6": "bert-base-cased"}.get(
                row["model"], row["model"])
    note = narrative.run_shows("01_geometry", other["01_geometry"], strict=False)
    assert note.startswith("*The written summary describes the book's own build")
    assert "smollm2-135m" in note and "narrative.py" not in note
    assert narrative.plain_answer("01_geometry", other["01_geometry"], strict=False) == ""
    assert narrative.conclusion(other, summary, strict=False).startswith("*The written summary")
    with pytest.raises(StoryChanged):
        narrative.run_shows("01_geometry", other["01_geometry"])


def test_the_split_layers_come_from_chapter_1s_per_layer_table(built, summary):
    planted = copy.deepcopy(built)
    for row in planted["01_geometry"]["layers"]:
        if row["model"] == "smollm2-135m" and row["control"] == "first word excluded":
            row["split"] = row["layer"] in (4, 5)
    assert "only layers 4-5 still split" in narrative.conclusion(planted, summary)
    for row in planted["01_geometry"]["layers"]:
        if row["model"] == "smollm2-135m" and row["control"] == "first word excluded":
            row["split"] = True  # the first word no longer makes the split
    with pytest.raises(StoryChanged, match="without the first word"):
        narrative.conclusion(planted, summary)
