"""The About page's facts (lmgeometry.report.about) and the build's archive name."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
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
    """Changed sources make the tree dirty; the book's own outputs (book/, _build/) do not."""
    book = _book(tmp_path)
    commit = about.project_state(tmp_path)["commit"]
    assert archive_name(tmp_path).startswith(f"lmgeometry-book-{commit[:12]}-20")
    (book / "00_a.results.json").write_text("{}")  # a chapter executed again
    (book / "01_b.ipynb").unlink()
    assert about.project_state(tmp_path) == {"commit": commit, "clean": True, "changed": []}
    assert source_state(tmp_path) == commit[:12]
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/00_a\n")  # a source
    assert about.project_state(tmp_path) == {"commit": commit, "clean": False,
                                             "changed": ["_toc.yml"]}
    assert source_state(tmp_path) == f"{commit[:12]} with uncommitted changes"
    assert archive_name(tmp_path).startswith(f"lmgeometry-book-{commit[:12]}-dirty-")


def test_the_source_sentence_names_the_commit_and_the_changed_files() -> None:
    commit = "0123456789abcdef" * 2 + "01234567"
    clean = about.source_sentence({"commit": commit, "clean": True, "changed": []})
    assert clean == ('from the code and chapter sources of commit '
                     f'<code title="{commit}">0123456789ab</code>')
    dirty = about.source_sentence({"commit": commit, "clean": False,
                                   "changed": ["src/a.py", "b", "c", "d", "e"]})
    assert dirty.endswith("**with uncommitted changes** to `src/a.py`, `b`, `c` and 2 more")
    assert "commit can be named" in about.source_sentence({"commit": None, "clean": None})


@pytest.mark.parametrize(("seconds", "text"), [
    (12.34, "12.3 s"), (0.04, "0.0 s"), (59.94, "59.9 s"), (59.96, "1 min 0 s"),
    (240.4, "4 min 0 s"), (1441.6, "24 min 2 s"), (3725.0, "1 h 2 min"), (None, "–"),
    (float("nan"), "–"),
])
def test_durations_read_as_seconds_minutes_or_hours(seconds: float | None, text: str) -> None:
    assert about.duration(seconds) == text


def test_shown_tables_drop_empty_columns_cut_hashes_and_format_wall_time() -> None:
    from lmgeometry.report.figures import Abbreviated, table_html

    table = pd.DataFrame({"model": ["a", "b"], "kind": ["–", None], "caveats": ["", ""],
                          "fingerprint": ["f" * 64, None], "seconds": [240.4, None]})
    out = about.shown(table, hashes=["fingerprint"])
    assert list(out.columns) == ["model", "fingerprint", "wall time"]
    assert out["fingerprint"][0] == Abbreviated("f" * 64, 12) and out["fingerprint"][1] is None
    assert list(out["wall time"]) == ["4 min 0 s", "–"]
    page = table_html(out, "caption")
    assert f'<code title="{"f" * 64}">{"f" * 12}</code>' in page and "240.400" not in page
    assert list(about.shown(table.iloc[:0]).columns) == ["model", "kind", "caveats",
                                                          "fingerprint", "wall time"]


def test_a_separate_books_about_page_names_the_projects_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An --out book lies outside the checkout; the pipeline names the project it ran."""
    _book(tmp_path / "project")
    commit = about.project_state(tmp_path / "project")["commit"]
    out = _book(tmp_path / "out")
    shutil.rmtree(tmp_path / "out" / ".git")
    assert about.build_facts(out, ["00_a"])["project"]["commit"] is None
    monkeypatch.setenv(about.PROJECT_ENV, str(tmp_path / "project"))
    assert about.build_facts(out, ["00_a"])["project"]["commit"] == commit


def test_outside_a_checkout(tmp_path: Path) -> None:
    assert about.project_state(tmp_path) == {"commit": None, "clean": None, "changed": []}
    assert archive_name(tmp_path).startswith("lmgeometry-book-nocommit-")
    with pytest.raises(Exception, match="not a git checkout"):
        source_state(tmp_path)


def test_the_committed_about_page_lists_what_the_chapters_used() -> None:
    """Every model fingerprint of every chapter's execution record (the models it named and
    those behind the store entries it read) and every data file's sha256 are on the page."""
    folder = Path(__file__).resolve().parents[2] / "book"
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


def test_every_citation_is_in_the_bibliography_the_about_page_lists() -> None:
    """The chapters' {cite:p}/{cite:t} keys are entries of references.bib, which _config.yml
    names and whose every entry the About page lists; each entry has a DOI or URL but the
    seed without one and a 1963 textbook."""
    import re

    import pybtex.database
    import yaml

    root = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "_config.yml").read_text())
    assert config["bibtex_bibfiles"] == ["references.bib"]
    assert "sphinxcontrib.bibtex" in config["sphinx"]["config"]["extensions"]
    entries = pybtex.database.parse_file(root / "references.bib").entries
    cited = set()
    for source in (root / "notebooks").glob("*.py"):
        for keys in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", source.read_text()):
            cited |= {k.strip() for k in keys.split(",")}
    assert cited and not cited - set(entries), sorted(cited - set(entries))
    assert "```{bibliography}\n# :all:" in (root / "notebooks" / "99_about.py").read_text()
    undated = {k for k, e in entries.items() if not {"doi", "url"} & set(e.fields)}
    assert undated == {"gptology", "hays1963"}


def test_the_page_shows_no_absolute_path_of_the_building_machine():
    """A model folder (the controlled pair's checkpoints) is shown by its run and checkpoint,
    not by the cache path of the machine that built the book; the results file keeps it."""
    from lmgeometry.report.about import shown

    table = pd.DataFrame({"model": ["/root/.cache/lmgeometry/pretrained/mlm-L4-x/step-000001",
                                    "minilm-l6"],
                          "resolved name": ["/root/.cache/lmgeometry/pretrained/mlm-L4-x/"
                                            "step-000001", "all-MiniLM-L6-v2"]})
    page = shown(table)
    assert page["model"].tolist() == ["…/mlm-L4-x/step-000001", "minilm-l6"]
    assert not any("/root" in str(v) for v in page.to_numpy().ravel())
    assert table["model"].iloc[0].startswith("/root")  # the facts themselves are unchanged
