"""What ``lmgeometry book`` says while chapters run: start, section and end lines."""

from __future__ import annotations

import copy
import json
import re
import time
from pathlib import Path

import nbformat
import pytest
from fixtures.book_project import make_project

from lmgeometry.report.book import build_book, execution_order, toc_chapters
from lmgeometry.report.book.progress import (
    cell_sections,
    chapter_id,
    clock,
    end_line,
    heading_title,
    last_seconds,
    section_hook,
    section_line,
    section_starts,
    start_line,
)


@pytest.mark.parametrize(("seconds", "shown"), [
    (0, "0:00"), (0.4, "0:00"), (59.6, "1:00"), (203.0, "3:23"), (600, "10:00"),
    (3725, "1:02:05"), (-3, "0:00"),
])
def test_clock(seconds: float, shown: str) -> None:
    assert clock(seconds) == shown


def _record(folder: Path, name: str, content: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content)
    (folder / f"{name}.run.json").write_text(text)


def test_start_lines_from_a_chapter_list_and_run_records(tmp_path: Path) -> None:
    """The book's own record first, else the project's; no record, a broken one or one
    without seconds: no estimate."""
    own, project = tmp_path / "out" / "book", tmp_path / "project" / "book"
    _record(own, "01_geometry", {"seconds": 54.2})
    _record(project, "01_geometry", {"seconds": 999})  # the book's own record wins
    _record(project, "03_context_measures", {"chapter": "03_context_measures", "seconds": 203})
    _record(own, "05_senses", "{not json")
    _record(own, "08_model_zoo", {"chapter": "08_model_zoo"})
    names = ["01_geometry", "03_context_measures", "05_senses", "08_model_zoo", "99_about"]
    lines = [start_line(i, len(names), name, last_seconds(name, [own, project]))
             for i, name in enumerate(names, start=1)]
    assert lines == [
        "chapter 1 of 5: 01_geometry (last run took 0:54)",
        "chapter 2 of 5: 03_context_measures (last run took 3:23)",
        "chapter 3 of 5: 05_senses (no earlier run)",
        "chapter 4 of 5: 08_model_zoo (no earlier run)",
        "chapter 5 of 5: 99_about (no earlier run)",
    ]
    assert last_seconds("01_geometry", []) is None


def test_section_and_end_lines_name_their_chapter() -> None:
    assert chapter_id("03_context_measures") == "03" and chapter_id("intro") == "intro"
    assert section_line("03_context_measures", "Self-similarity", 62.2) == \
        "03: Self-similarity (elapsed 1:02)"
    assert end_line("03_context_measures", 201, 203.0) == \
        "03_context_measures: done in 3:21 (estimate 3:23, from the last run)"
    assert end_line("00_x", 5, None) == "00_x: done in 0:05 (no estimate: no earlier run)"


@pytest.mark.parametrize(("markdown", "title"), [
    ("# Context measures: how contextual?", "Context measures: how contextual?"),
    ("Some text\n\n## Self-similarity (seed 001) ##\nmore", "Self-similarity (seed 001)"),
    ("## A\ntext\n### B", "B"),  # the last heading of the cell
    ("## [Stopwords](03_x.ipynb#stop) and `the`", "Stopwords and the"),
    ("## **Bold** *words*", "Bold words"),
    ("Text only, #hashtag and a #\n", None),
    ("```python\n# a comment in a fence\n```", None),
    ("## Real\n```\n# not a heading\n```", "Real"),
])
def test_heading_title(markdown: str, title: str | None) -> None:
    assert heading_title(markdown) == title


def _notebook() -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    return nbformat.v4.new_notebook(cells=[
        code("import x"),                      # 0: before any heading
        md("# The chapter\nIntro text."),      # 1
        code("models = []", metadata={"tags": ["parameters"]}),  # 2: first code after title
        code("analyse()"),                     # 3
        md("## Anisotropy"),                   # 4
        md("Why it matters."),                 # 5: text, not a heading
        code(""),                              # 6: blank, never executed
        code("show(fig)"),                     # 7: Anisotropy starts here
        md("## Empty section"),                # 8: no code before the next heading
        md("## Verdicts"),                     # 9
        code("verdicts()"),                    # 10
        code("save()"),                        # 11
    ])


def test_the_section_of_each_cell_and_where_each_starts() -> None:
    nb = _notebook()
    assert cell_sections(nb) == [
        None, "The chapter", "The chapter", "The chapter", "Anisotropy", "Anisotropy",
        "Anisotropy", "Anisotropy", "Empty section", "Verdicts", "Verdicts", "Verdicts"]
    assert section_starts(nb) == {2: "The chapter", 7: "Anisotropy", 10: "Verdicts"}
    assert section_starts(nbformat.v4.new_notebook()) == {}


def test_the_hook_finds_sections_by_cell_id_after_papermill_inserts_a_cell() -> None:
    nb = _notebook()
    executed = copy.deepcopy(nb)  # papermill executes a copy with its parameters cell added
    executed.cells.insert(3, nbformat.v4.new_code_cell("models = ['a']"))
    written: list[str] = []
    hook = section_hook("05_senses", nb, time.perf_counter(), written.append)
    for index, cell in enumerate(executed.cells):
        if cell.cell_type == "code" and cell.source.strip():  # what nbclient executes
            hook(cell=cell, cell_index=index)
    assert written == ["[book] 05: The chapter (elapsed 0:00)",
                       "[book] 05: Anisotropy (elapsed 0:00)", "[book] 05: Verdicts (elapsed 0:00)"]


CHAPTER = '''# %% [markdown]
# # A chapter with sections

# %% tags=["parameters"]
results_path = ""

# %%
from tqdm.auto import tqdm  # warns in a kernel without ipywidgets, unless silenced

# %% [markdown]
# ## First part

# %%
print("first")

# %% [markdown]
# ## Second part

# %%
print("second")

# %%
from lmgeometry.report.results import save_results

_ = save_results(results_path, {"sections": 2})
'''


@pytest.mark.slow
def test_a_build_says_which_chapter_and_section_runs(tmp_path: Path, capfd) -> None:
    """Plain lines on stdout, each naming its chapter; the kernel prints neither ipykernel's
    unencrypted-TCP warning nor tqdm's IProgress warning (both on the kernel's own stderr)."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"})
    (project / "notebooks" / "01_sections.py").write_text(CHAPTER)
    (project / "_toc.yml").write_text((project / "_toc.yml").read_text()
                                      + "chapters:\n- file: book/01_sections\n")
    _record(project / "book", "01_sections", {"seconds": 83})
    assert [c.name for c in execution_order(toc_chapters(project))] == ["00_fixture",
                                                                         "01_sections"]
    build_book(root=project, html=False, chapters=["01"])
    out, err = capfd.readouterr()
    lines = out.splitlines()
    at = {line: i for i, line in enumerate(lines)}
    assert "[book] chapter 1 of 1: 01_sections (last run took 1:23)" in at, out
    sections = [re.sub(r"\(elapsed \d+:\d\d\)$", "(elapsed)", line) for line in lines
                if line.startswith("[book] 01: ")]
    assert sections == ["[book] 01: A chapter with sections (elapsed)",
                        "[book] 01: First part (elapsed)", "[book] 01: Second part (elapsed)"]
    assert re.search(r"^\[book\] 01_sections: done in \d+:\d\d \(estimate 1:23, from the last "
                     r"run\), [0-9.]+ MB -> ", out, flags=re.MULTILINE), out
    # the build's own time closes its output
    assert re.search(r"\[book\] done in \d+:\d\d \(1 chapter\(s\) executed, 0 unchanged\)\n$",
                     out), out
    assert "\r" not in out + err
    assert "without encryption" not in err and "IProgress" not in out + err, err
    executed = nbformat.read(project / "book" / "01_sections.ipynb", as_version=4)
    assert [o.get("text") for c in executed.cells if c.cell_type == "code"
            for o in c.get("outputs", [])] == ["first\n", "second\n"]
    record = json.loads((project / "book" / "01_sections.run.json").read_text())
    assert record["seconds"] != 83  # this run's record replaced the last one
