"""Looking after the activation store (lmgeometry.activations.maintenance, `lmgeometry store`).

Entries are written from arrays with the store's own writer (``write_meta``: meta.json and its
seal) and keyed as the store keys them, so their names are the store's; the folders around
them are what a user might keep under a store root.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import array_store

from lmgeometry.activations import maintenance, store
from lmgeometry.cli import main


def keyed_entry(root: Path, code: dict | None, *, corpus: str = "sts", seal: bool = True,
                pooling: str = "mean", backend: str = "torch") -> Path:
    """An entry written from arrays under the name its recorded inputs key it as."""
    words = pd.DataFrame({"sentence_id": np.arange(4, dtype=np.int32),
                          "word_index": np.zeros(4, np.int32), "text": list("abcd")})
    scratch = array_store(root / f"scratch-{secrets.token_hex(4)}",
                          [np.ones((4, 3), np.float32)], words).path
    meta = json.loads((scratch / "meta.json").read_text())
    options = {"pooling": pooling, "prepend_bos": None, "too_long": "error", "dtype": "float32"}
    keyed = {**options, "backend": backend}
    if backend != "torch":  # as the store records it: only a backend other than torch
        options["backend"] = backend
    meta.update(fingerprint="f" * 64, options=options,
                corpus={"name": corpus, "digest": "d" * 64, "params": {}})
    if code is None:
        meta.pop("code", None)
        key = "0123456789abcdef" * 4
    else:
        meta["code"] = code
        key = store.store_key("f" * 64, "d" * 64, **keyed, code=code)
    meta["key"] = key
    store.write_meta(scratch, meta)
    if not seal:
        (scratch / store.SEAL_FILE).unlink()
    final = root / store.entry_name(corpus, key)
    scratch.rename(final)
    return final


def names(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    return root


def test_list_names_each_entrys_backend(root: Path, capsys) -> None:
    torch_entry = keyed_entry(root, store.extraction_code())
    onnx_entry = keyed_entry(root, store.extraction_code("onnxruntime"), backend="onnxruntime")
    table = maintenance.list_entries([root]).set_index("entry")
    assert table.loc[str(torch_entry), "backend"] == "torch"
    assert table.loc[str(onnx_entry), "backend"] == "onnxruntime"
    assert (table["current"] == "yes").all()
    assert main(["store", "list", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "backend" in out[0].split()
    assert {line.split()[0]: line.split()[3] for line in out[1:3]} == {
        torch_entry.name: "torch", onnx_entry.name: "onnxruntime"}


def test_list_and_clean_keep_what_the_current_code_reads(root: Path, capsys) -> None:
    current = keyed_entry(root, store.extraction_code())
    older = keyed_entry(root, {"activations/extract.py": "0" * 16}, pooling="first")
    unknown = keyed_entry(root, None)
    aside = root / f"{maintenance.SET_ASIDE_PREFIX}{current.name}-1234abcd"
    aside.mkdir()
    (aside / store.SET_ASIDE_MARKER).write_text(json.dumps(
        {"entry": current.name, "reason": "damaged", "store_written": True}))

    table = maintenance.list_entries([root]).set_index("entry")
    assert table.loc[str(current), "current"] == "yes"
    assert table.loc[str(current), "sealed"] == "yes"
    assert table.loc[str(older), "current"] == "no: older extraction code"
    assert table.loc[str(unknown), "current"].startswith("no: written before")
    assert len(table) == 3 and table["size"].gt(0).all()
    assert set(table["backend"]) == {"torch"}

    dry = maintenance.clean_entries([root], dry_run=True)
    assert set(dry["entry"]) == {str(older), str(unknown), str(aside)}
    assert older.exists() and aside.exists()  # a dry run removes nothing
    assert main(["store", "clean", str(root), "--yes"]) == 0
    assert "removed 3 folders" in capsys.readouterr().out
    assert names(root) == [current.name]
    assert main(["store", "list", str(root)]) == 0
    assert "1 entries" in capsys.readouterr().out
    gone = maintenance.clean_entries([root], everything=True)
    assert list(gone["reason"]) == ["removed on request (--all)"] and not current.exists()


def foreign_folders(root: Path) -> dict[str, Path]:
    """What a user may keep under a store root: folders with a meta.json that is not JSON,
    not lmgeometry's, a store-like one under another name, and one without meta.json."""
    made = {}
    for name, text in (("ds", "not json at all\n"),
                       ("theirs", json.dumps({"format": 2, "kind": "their own tool"})),
                       ("plain", None)):
        folder = root / name
        folder.mkdir()
        if text is not None:
            (folder / "meta.json").write_text(text)
        (folder / "data.bin").write_bytes(b"precious" * 4)
        made[name] = folder
    return made


def test_clean_never_touches_a_folder_without_the_stores_signature(root, tmp_path, capsys):
    """The issue's case: `store clean PATH` removed every subfolder holding a meta.json. Now a
    meta.json that is not JSON, not lmgeometry's, or a store entry's under another name keeps
    its folder; each is named once as left alone, with the reason."""
    older = keyed_entry(root, {"activations/extract.py": "0" * 16})
    foreign = foreign_folders(root)
    renamed = root / "my-copy"
    keyed_entry(root, {"activations/extract.py": "1" * 16}, pooling="last").rename(renamed)
    before = {p: p.read_bytes() for f in [*foreign.values(), renamed] for p in f.rglob("*")
              if p.is_file()}

    code = main(["store", "clean", str(root), "--all", "--yes"])
    out = capsys.readouterr().out
    assert code == 0 and f"removed {older}" in out and "removed 1 folders" in out
    alone = "left alone: {}: not a store entry: {}"
    assert alone.format(foreign["ds"], "its meta.json is not JSON") in out
    assert alone.format(foreign["theirs"], "its meta.json records no store key") in out
    assert alone.format(renamed, "its name is not the entry name") in out
    assert alone.format(foreign["plain"], "it holds no meta.json") in out
    assert {p: p.read_bytes() for p in before} == before  # nothing lost, nothing changed
    assert names(root) == ["ds", "my-copy", "plain", "theirs"]


def test_symlinks_under_a_store_root_are_never_followed(root, tmp_path, capsys):
    """A link to a big folder (the issue: /usr, 8.3 GiB walked and offered for cleaning) and a
    link to a real entry: `store list` does not walk them, `store clean --all` removes neither
    the links nor what they point to."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "meta.json").write_text("{}")
    (outside / "big.bin").write_bytes(b"x" * 4096)
    entry = keyed_entry(tmp_path / "elsewhere", store.extraction_code())
    (root / "usr").symlink_to(outside, target_is_directory=True)
    (root / entry.name).symlink_to(entry, target_is_directory=True)

    table = maintenance.list_entries([root])
    assert table["size"].tolist() == [0, 0]  # not walked
    assert all(c.startswith("not a store entry: a symbolic link") for c in table["current"])
    assert main(["store", "clean", str(root), "--all", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "removed 0 folders" not in out and "nothing to remove" in out
    assert (root / "usr").is_symlink() and (outside / "big.bin").is_file()
    assert (root / entry.name).is_symlink() and (entry / "meta.json").is_file()


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_clean_of_a_root_with_nothing_to_remove_says_so(tmp_path, capsys, dry_run):
    """A root holding only current entries (here none at all) plans no row: clean says
    "nothing to remove" and exits 0 (it crashed on the empty plan's columns)."""
    empty = tmp_path / "empty-store"
    empty.mkdir()
    assert main(["store", "clean", str(empty), *dry_run]) == 0
    assert capsys.readouterr().out.strip() == "nothing to remove"


def test_clean_lists_first_and_asks_or_needs_yes(root, capsys, monkeypatch):
    older = keyed_entry(root, {"activations/extract.py": "0" * 16})
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code = main(["store", "clean", str(root)])
    out, err = capsys.readouterr()
    assert code == 2 and f"would remove {older}" in out
    assert err.strip().endswith("pass --yes to remove them (nothing was removed)")
    assert older.exists()

    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["store", "clean", str(root)]) == 0
    assert "nothing removed" in capsys.readouterr().out and older.exists()
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert main(["store", "clean", str(root)]) == 0
    assert f"removed {older}" in capsys.readouterr().out and not older.exists()


def test_set_aside_folders_go_only_when_the_store_marked_them(root, capsys):
    """A folder the store moved aside carries its marker (store_written); one named like it
    by hand, or one the store moved aside but did not write, stays."""
    ours = root / f"{maintenance.SET_ASIDE_PREFIX}sts-aaaa-1234abcd"
    ours.mkdir()
    (ours / store.SET_ASIDE_MARKER).write_text(json.dumps(
        {"entry": "sts-aaaa", "reason": "damaged", "store_written": True}))
    foreign = root / f"{maintenance.SET_ASIDE_PREFIX}holiday-photos-1234abcd"
    foreign.mkdir()
    (foreign / "photo.jpg").write_bytes(b"jpg")
    moved = root / f"{maintenance.SET_ASIDE_PREFIX}sts-bbbb-1234abcd"
    moved.mkdir()
    (moved / store.SET_ASIDE_MARKER).write_text(json.dumps(
        {"entry": "sts-bbbb", "reason": "incomplete", "store_written": False}))
    gone = maintenance.clean_entries([root])
    assert gone["entry"].tolist() == [str(ours)]
    assert foreign.exists() and moved.exists() and not ours.exists()


def test_an_entry_set_aside_by_activations_is_marked_its_own(root, capsys):
    """_move_aside marks a store-written folder as such, and a user's folder that sat at an
    entry's name as not (so clean keeps it)."""
    entry = keyed_entry(root, store.extraction_code())
    user = root / "sts-0123456789abcdef0123"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    store._move_aside(entry, "damaged (test)")
    store._move_aside(user)
    capsys.readouterr()
    plan = maintenance.clean_plan([root]).set_index("entry")
    marks = {json.loads((Path(e) / store.SET_ASIDE_MARKER).read_text())["entry"]: bool(r)
             for e, r in plan["remove"].items()}
    assert marks == {entry.name: True, user.name: False}


def test_a_dead_builds_temp_folder_is_seen_even_when_its_pid_was_reused(root):
    """A temporary folder names its process by host, pid and start time: this process's own
    pid with another start time is a dead process whose id was reused (the issue: it survived
    `store clean --all` unseen)."""
    from lmgeometry.io import paths

    here, pid = paths.host(), os.getpid()
    start = paths.process_start(pid)
    assert start != "0"
    reused = root / f".tmp-sts-x-{here}-{pid}-{int(start) + 1}-abcd1234"
    live = root / f".tmp-sts-y-{here}-{pid}-{start}-abcd1234"
    other_host = root / f".tmp-sts-z-{here}x-{pid}-{int(start) + 1}-abcd1234"
    for folder in (reused, live, other_host):
        folder.mkdir()
    assert paths.stale_builds(root) == [reused]
    plan = maintenance.clean_plan([root])
    assert plan["entry"].tolist() == [str(reused)]
    assert plan["reason"].tolist() == ["an unfinished build of a dead process"]
    maintenance.remove_planned(plan)
    assert names(root) == sorted([live.name, other_host.name])


def test_store_clean_help_is_its_own(capsys):
    with pytest.raises(SystemExit) as info:
        main(["store", "clean", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0 and out.startswith("usage: lmgeometry store clean")
    assert "--yes" in out and "list:" not in out and "verify:" not in out


def test_upgrade_seals_a_verified_entry_and_refuses_a_changed_one(root, capsys):
    """Entries written before meta.json was sealed: Store() refuses them with the command that
    fixes it; `store upgrade` seals one whose key, name and files verify, and refuses one whose
    meta.json was changed (the key no longer follows from its recorded inputs)."""
    from lmgeometry.errors import UnsealedEntryError

    good = keyed_entry(root, store.extraction_code(), seal=False)
    bad = keyed_entry(root, store.extraction_code(), seal=False, pooling="first")
    text = (bad / "meta.json").read_text().replace('"pooling": "first"', '"pooling": "last"')
    (bad / "meta.json").write_text(text)
    with pytest.raises(UnsealedEntryError, match="lmgeometry store upgrade"):
        store.Store(good)
    code = main(["store", "upgrade", str(root)])
    out, err = capsys.readouterr()
    assert code == 1 and f"{bad.name} refused" in " ".join(out.split())
    assert "its recorded inputs give" in err
    assert (good / store.SEAL_FILE).is_file() and not (bad / store.SEAL_FILE).exists()
    assert store.Store(good).n_words == 4
    assert store.upgrade_entry(good) is False  # sealed already: nothing to do
