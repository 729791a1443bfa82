"""The introduction's findings box (lmgeometry.report.findings)."""

import json
import re
import shutil
from pathlib import Path

import pandas as pd

from lmgeometry.report.findings import SEED_DOCUMENTS, book_findings, seed_lines

BOOK = Path(__file__).resolve().parents[2] / "book"


def _committed_results(folder: Path) -> tuple[dict[str, str], list[str]]:
    """The committed analysis chapters' results files, and the build's model kinds."""
    for path in BOOK.glob("*.results.json"):
        if path.name[:2] not in ("90", "99"):
            shutil.copy(path, folder / path.name)
    intro = json.loads((BOOK / "00_introduction.results.json").read_text())
    return {f["spec"]: f["kind"] for f in intro["models"]}, [f["spec"] for f in intro["models"]]


def test_the_box_counts_what_the_committed_scorecard_counts(tmp_path):
    from lmgeometry.report.findings import _TIER_WORDS

    kinds, models = _committed_results(tmp_path)
    (tmp_path / "00_introduction.results.json").write_text("{ not json")  # its own: never read
    box = book_findings(tmp_path, kinds, models, own="00_introduction.results.json")
    assert 'class="admonition note lmg-findings"' in box
    scorecard = json.loads((BOOK / "90_scorecard.results.json").read_text())
    for row in scorecard["summary"]:
        line = re.search(rf'Seed {row["seed"]}</a>[^<]*', box).group(0)
        claims = f'{row["claims"]} claim{"" if row["claims"] == 1 else "s"}'
        words = _TIER_WORDS[row["calibration"]]
        # the tier's own bracket: its counts are never mixed with the other tier's
        part = line.split(f"{claims} {words} (", 1)[1].split(")", 1)[0]
        for outcome in ("reproduced", "also true of an untrained model",
                        "also true with labels permuted", "held without a null run",
                        "contradicted", "inconclusive", "not testable here"):
            if row.get(outcome, 0):
                assert f"{row[outcome]} {outcome}" in part, (outcome, part)
            else:
                assert f" {outcome}" not in f" {part.removeprefix('per claim and kind of model ')}"
    assert set(SEED_DOCUMENTS) == {row["seed"] for row in scorecard["summary"]}


def test_the_box_says_so_when_no_chapter_has_written_claims(tmp_path):
    box = book_findings(tmp_path, {"m": "encoder"}, ["m"], own="00_introduction.results.json")
    assert "No chapter of this build has written its claims yet" in box


def test_seed_lines_link_each_seed_to_its_scorecard_table():
    summary = pd.DataFrame([{"seed": "004", "calibration": "numeric", "claims": 1,
                             "reproduced": 0, "contradicted": 0, "inconclusive": 0,
                             "not testable here": 0, "seed silent": 1}])
    line = seed_lines(summary, "90_scorecard.html")[0]
    assert line.startswith('<a href="90_scorecard.html#seed-004">Seed 004</a>, Biš et al.')
    assert line.endswith("1 claim checked on the seed's numbers (per claim and kind of model "
                         "nothing testable).")
