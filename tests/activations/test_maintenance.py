"""Looking after the activation store (lmgeometry.activations.maintenance, `lmgeometry store`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from conftest import array_store

from lmgeometry.activations import maintenance, store
from lmgeometry.cli import main


def _entry(root: Path, name: str, code: dict | None) -> Path:
    words = pd.DataFrame({"sentence_id": np.arange(4, dtype=np.int32),
                          "word_index": np.zeros(4, np.int32), "text": list("abcd")})
    entry = array_store(root / name, [np.ones((4, 3), np.float32)], words)
    meta = json.loads((entry.path / "meta.json").read_text())
    if code is None:
        meta.pop("code", None)
    else:
        meta["code"] = code
    (entry.path / "meta.json").write_text(json.dumps(meta))
    return entry.path


def test_list_and_clean_keep_what_the_current_code_reads(tmp_path: Path, capsys) -> None:
    root = tmp_path / "store"
    current = _entry(root, "sts-current", store.extraction_code())
    older = _entry(root, "sts-older", {"activations/extract.py": "0" * 16})
    unknown = _entry(root, "sts-unknown", None)
    aside = root / f"{maintenance.SET_ASIDE_PREFIX}sts-x-1234"
    aside.mkdir()
    (aside / "layer_00.npy").write_bytes(b"x" * 10)

    table = maintenance.list_entries([root]).set_index("entry")
    assert table.loc[str(current), "current"] == "yes"
    assert table.loc[str(older), "current"] == "no: older extraction code"
    assert table.loc[str(unknown), "current"].startswith("no: written before")
    assert len(table) == 3 and table["size"].gt(0).all()

    dry = maintenance.clean_entries([root], dry_run=True)
    assert set(dry["entry"]) == {str(older), str(unknown), str(aside)}
    assert older.exists() and aside.exists()  # a dry run removes nothing
    assert main(["store", "clean", str(root)]) == 0
    assert "removed 3 folders" in capsys.readouterr().out
    assert sorted(p.name for p in root.iterdir()) == ["sts-current"]
    assert main(["store", "list", str(root)]) == 0
    assert "1 entries" in capsys.readouterr().out
    gone = maintenance.clean_entries([root], everything=True)
    assert list(gone["reason"]) == ["removed on request (--all)"] and not current.exists()
