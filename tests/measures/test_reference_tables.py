"""The seeds' reference tables: shapes, spot values, self-consistency and the seed texts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from lmgeometry.measures.reference_tables import (
    BIS2021_WORDSIM,
    ETHAYARAJH2019_COLUMNS,
    ETHAYARAJH2019_TABLE1,
    reference_frame,
)

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


def test_ethayarajh_table_shape_and_spot_values():
    assert len(ETHAYARAJH2019_TABLE1) == 12
    assert all(len(row) == 9 for row in ETHAYARAJH2019_TABLE1.values())
    assert ETHAYARAJH2019_TABLE1["BERT, Layer 1"]["simlex999"] == 0.315
    assert ETHAYARAJH2019_TABLE1["GPT-2, Layer 12"]["men"] == -0.009
    assert ETHAYARAJH2019_TABLE1["GloVe"]["ap"] == 0.308
    frame = reference_frame("ethayarajh2019_table1")
    assert len(frame) == 12 * 9


def test_bis_table2_averages_equal_table3_means():
    """The transcription is self-consistent: each Table 2 cell is the mean of five Table 3 cells."""
    t2, t3 = BIS2021_WORDSIM["table2"], BIS2021_WORDSIM["table3"]
    checked = 0
    for model, variants in t3.items():
        for variant, benches in variants.items():
            assert len(benches) == 5
            for score in ("cosine", "dot"):
                mean = np.mean([cells[score] for cells in benches.values()])
                assert t2[model][variant][score] == pytest.approx(mean, abs=0.006)
                checked += 1
    assert checked == 6 * 3 * 2
    assert len(reference_frame("bis2021_table2")) == 6 * 4 * 2
    assert len(reference_frame("bis2021_table3")) == 6 * 3 * 5 * 2


def _seed(prefix: str) -> str:
    files = sorted(SEEDS.glob(f"{prefix}_*.txt"))
    if not files:
        pytest.skip("seed texts not available")
    return files[0].read_text(encoding="utf-8")


def test_ethayarajh_table_matches_seed_text():
    lines = _seed("001").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Static Embedding\t"))
    columns = lines[header].split("\t")[1:]
    assert [ETHAYARAJH2019_COLUMNS[c] for c in columns] == list(ETHAYARAJH2019_COLUMNS.values())
    parsed = {}
    for line in lines[header + 1:]:
        if not line.strip():
            break
        name, *values = line.split("\t")
        parsed[name] = dict(zip(ETHAYARAJH2019_COLUMNS.values(), map(float, values), strict=True))
    assert parsed == ETHAYARAJH2019_TABLE1


def test_bis_table3_matches_seed_text():
    lines = _seed("004").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Bert-base-cased\t"))
    model = None
    seen = 0
    for line in lines[start:]:
        if not line.strip():
            break
        name, *cells = line.split("\t")
        if not name.startswith("+"):
            model = name.replace("Bert-", "BERT-")
            variant = "original"
        else:
            variant = name[2:].lower().replace("-", "_")
        expected = BIS2021_WORDSIM["table3"][model][variant]
        for bench, cell in zip(expected, cells, strict=True):
            dot, cos = (float(x) for x in cell.split(" / "))
            assert expected[bench] == {"dot": dot, "cosine": cos}
            seen += 1
    assert seen == 6 * 3 * 5


def test_bis_table2_matches_seed_text():
    text = _seed("004")
    lines = text.splitlines()
    start = 1 + next(i for i, line in enumerate(lines) if line.startswith("Model\tCosSim\t"))
    seen = 0
    models = [None, None]
    for line in lines[start:]:
        if not line.strip():
            break
        fields = line.split("\t")
        for half in (0, 1):
            name, cos, dot = fields[3 * half: 3 * half + 3]
            if not name.startswith("+"):
                models[half] = name
                variant = "original"
            else:
                variant = name[2:].lower().replace("-", "_")
            number = [float(re.sub(r"</?u>", "", x).split()[0]) for x in (cos, dot)]
            assert BIS2021_WORDSIM["table2"][models[half]][variant] == {
                "cosine": number[0], "dot": number[1]
            }
            seen += 1
    assert seen == 24
