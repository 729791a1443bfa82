"""The About page's facts (lmgeometry.report.about) and the build's archive name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lmgeometry.io import data
from lmgeometry.report import about, cache
from lmgeometry.report.publish import archive_name, source_state


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _book(folder: Path) -> Path:
    """A project with two executed chapters' records (a git checkout, one commit)."""
    book = folder / "book"
    book.mkdir(parents=True)
    (folder / "_toc.yml").write_text("format: jb-book\nroot: book/00_a\nchapters:\n"
                                     "  - file: book/01_b\n  - file: book/99_about\n")
    for name, models, stores in (
        ("00_a", {"minilm-l6": "f" * 64}, []),
        ("01_b", {"minilm-l6": "f" * 64, "smollm2-135m": "e" * 64},
         [{"entry": "sts-abc", "key": "k", "model": "smollm2-135m", "fingerprint": "e" * 64,
           "corpus": "sts", "corpus_digest": "d" * 64},
          {"entry": "sts-old", "key": "k2", "model": "smollm2-135m", "fingerprint": "c" * 64,
           "corpus": "sts", "corpus_digest": "d" * 64}]),
    ):
        notebook = book / f"{name}.ipynb"
        notebook.write_text("{}")
        results = book / f"{name}.results.json"
        results.write_text(json.dumps({"chapter": name}))
        key = {"source": {"path": f"notebooks/{name}.py", "sha256": "a" * 64},
               "parameters": {"models": list(models), "results_path": results.name},
               "package": {"version": "1", "files": {}},
               "environment": {"python": "3.11", "numpy": "2.4.6"}, "models": models}
        cache.write_manifest(notebook, key, stores, results)
        about.write_run_record(notebook, 12.34, 300 * 2**20)
    _git(folder, "init", "-q")
    _git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "book")
    return book


def test_facts_list_every_model_fingerprint_store_and_data_checksum(tmp_path: Path) -> None:
    book = _book(tmp_path)
    chapters = about.book_chapters(book, exclude=["99_about"])
    assert chapters == ["00_a", "01_b"]
    (tmp_path / "_toc.yml").rename(tmp_path / "toc.yml")  # an --out book before its toc
    assert about.book_chapters(book, exclude=["99_about"]) == chapters
    (tmp_path / "toc.yml").rename(tmp_path / "_toc.yml")
    facts = about.build_facts(book, chapters, [{"spec": "minilm-l6", "name": "MiniLM",
                                                "kind": "encoder", "caveats": ["c1", "c2"]}])
    assert facts["project"]["clean"] is True and len(facts["project"]["commit"]) == 40
    table = facts["chapters"].set_index("chapter")
    assert table.loc["01_b", "seconds"] == 12.3 and table.loc["01_b", "peak memory (MiB)"] == 300
    assert table.loc["01_b", "parameters"] == "models=['minilm-l6', 'smollm2-135m']"
    recorded = json.loads((book / "01_b.exec.json").read_text())["outputs"]["results"]
    assert table.loc["01_b", "results sha256"] == recorded
    models = facts["models"].set_index(["model", "fingerprint"])
    assert set(models.index) == {("minilm-l6", "f" * 64), ("smollm2-135m", "e" * 64),
                                 ("smollm2-135m", "c" * 64)}  # a store's older model too
    assert models.loc[("minilm-l6", "f" * 64), "caveats"] == "c1; c2"
    assert models.loc[("minilm-l6", "f" * 64), "chapters"] == "00, 01"
    assert models.loc[("smollm2-135m", "c" * 64), "chapters"] == "01"
    assert list(facts["stores"]["entry"]) == ["sts-abc", "sts-old"]
    assert set(facts["data"]["sha256"]) == set(data.manifest()["sha256"])
    assert facts["environment"] == [{"python": "3.11", "numpy": "2.4.6"}]
    [machine] = facts["machines"]
    assert machine["cores"] >= 1 and machine["accelerator"]


def test_uncommitted_changes_are_reported(tmp_path: Path) -> None:
    book = _book(tmp_path)
    commit = about.project_state(tmp_path)["commit"]
    assert archive_name(tmp_path).startswith(f"lmgeometry-book-{commit[:12]}-20")
    (book / "00_a.results.json").write_text("{}")
    assert about.project_state(tmp_path)["clean"] is False
    assert source_state(tmp_path) == f"{commit[:12]} with uncommitted changes"
    assert archive_name(tmp_path).startswith(f"lmgeometry-book-{commit[:12]}-dirty-")


def test_outside_a_checkout(tmp_path: Path) -> None:
    assert about.project_state(tmp_path) == {"commit": None, "clean": None}
    assert archive_name(tmp_path).startswith("lmgeometry-book-nocommit-")
    with pytest.raises(Exception, match="not a git checkout"):
        source_state(tmp_path)


def test_the_committed_about_page_lists_what_the_chapters_used() -> None:
    """Every model fingerprint of every chapter's execution record (the models it named and
    those behind the store entries it read) and every data file's sha256 are on the page."""
    folder = Path(__file__).resolve().parents[1] / "book"
    facts = json.loads((folder / "99_about.results.json").read_text())
    listed = {(m["model"], m["fingerprint"]) for m in facts["models"]}
    used = set()
    for path in folder.glob("*.exec.json"):
        if path.name.startswith("99_"):
            continue
        record = json.loads(path.read_text())
        used |= set(record["models"].items())
        used |= {(s["model"], s["fingerprint"]) for s in record["stores"] if s["fingerprint"]}
    assert used and used <= listed
    assert {d["sha256"] for d in facts["data"]} == set(data.manifest()["sha256"])
    assert facts["project"]["commit"]
