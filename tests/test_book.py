"""The book pipeline: parameters, execution, size cap, failures, offline HTML."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from fixtures.book_project import ROOT, make_project

from lmgeometry.cli import build_parser
from lmgeometry.report import book
from lmgeometry.report.book import (
    BookError,
    Chapter,
    ChapterExecutionError,
    build_book,
    build_book_cli,
    chapter_parameters,
    check_parameter_names,
    clean_notebook,
    external_references,
    load_book_params,
    parse_overrides,
    read_chapter,
    resolve_parameters,
    select_chapters,
    toc_chapters,
)

CHAPTER = '''# %% [markdown]
# # A chapter

# %% tags=["parameters"]
models = ["a"]
n: int = 10
seed = 0
results_path = ""

# %%
print(models, n, seed)
'''


def _config(defaults: dict | None = None, chapters: dict | None = None) -> dict:
    return {"defaults": defaults or {}, "chapters": chapters or {}}


# --------------------------------------------------------------------------- parameters


def test_overrides_are_parsed_as_yaml() -> None:
    parsed = parse_overrides([
        ["models", '["gpt2", "bert-base-cased"]'],
        ["flow", "[gpt2, bert-base-cased]"],
        ["n", "300"],
        ["rate", "0.5"],
        ["name", "gpt2"],
        ["nothing", "null"],
        ["n", "400"],  # a later -p wins
    ])
    assert parsed == {
        "models": ["gpt2", "bert-base-cased"],
        "flow": ["gpt2", "bert-base-cased"],
        "n": 400,
        "rate": 0.5,
        "name": "gpt2",
        "nothing": None,
    }
    with pytest.raises(BookError, match="not valid YAML"):
        parse_overrides([["models", "[gpt2, "]])
    with pytest.raises(BookError, match="identifier"):
        parse_overrides([["point-budget", "3"]])


def test_chapter_defaults_come_from_the_parameters_cell(tmp_path: Path) -> None:
    source = tmp_path / "01_x.py"
    source.write_text(CHAPTER)
    nb = read_chapter(source)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert "jupytext" not in nb.metadata
    assert chapter_parameters(nb) == {"models": ["a"], "n": 10, "seed": 0, "results_path": ""}

    source.write_text(CHAPTER.replace(' tags=["parameters"]', ""))
    with pytest.raises(BookError, match="tagged 'parameters'"):
        chapter_parameters(read_chapter(source), "01_x")


def test_precedence_defaults_config_chapter_section_overrides() -> None:
    declared = {"models": ["a"], "n": 10, "seed": 0, "results_path": ""}
    config = _config(
        defaults={"models": ["b"], "seed": 1, "point_budget": 5},
        chapters={"01_x": {"seed": 2, "n": 20}},
    )
    merged = resolve_parameters("01_x", declared, config, {"n": 30})
    # models from defaults, seed from the chapter's section, n from -p; point_budget is not
    # declared by this chapter and is not passed; results_path is the pipeline's
    assert merged == {"models": ["b"], "seed": 2, "n": 30,
                      "results_path": "01_x.results.json"}
    # without config and overrides only results_path is injected (the chapter keeps its own)
    assert resolve_parameters("01_x", declared, _config(), {}) == {
        "results_path": "01_x.results.json"}


def test_parameter_errors_are_explicit() -> None:
    declared = {"models": ["a"], "results_path": ""}
    with pytest.raises(BookError, match="chapters.01_x sets seed"):
        resolve_parameters("01_x", declared, _config(chapters={"01_x": {"seed": 1}}), {})
    with pytest.raises(BookError, match="set by the pipeline"):
        resolve_parameters("01_x", declared, _config(), {"results_path": "x.json"})
    with pytest.raises(BookError, match=r"models is a list .* -p models '\[gpt2\]'"):
        resolve_parameters("01_x", declared, _config(), {"models": "gpt2"})
    with pytest.raises(BookError, match="must declare results_path"):
        resolve_parameters("01_x", {"models": []}, _config(), {})

    chapters = [Chapter("01_x", "book/01_x", Path("notebooks/01_x.py"))]
    params = {"01_x": declared, "02_y": {"seed": 0, "results_path": ""}}
    check_parameter_names(chapters, params, _config(defaults={"seed": 3}), {"models": []})
    with pytest.raises(BookError, match=r"-p seed: not a parameter of the chapters being"):
        check_parameter_names(chapters, params, _config(), {"seed": 1})
    with pytest.raises(BookError, match="defaults point_budget are parameters of no chapter"):
        check_parameter_names(chapters, params, _config(defaults={"point_budget": 1}), {})
    with pytest.raises(BookError, match="chapters 03_z are not in _toc.yml"):
        check_parameter_names(chapters, params, _config(chapters={"03_z": {}}), {})


def test_book_params_file_shape(tmp_path: Path) -> None:
    path = tmp_path / "book_params.yml"
    assert load_book_params(path) == _config()
    path.write_text("defaults:\n  models: [a]\nchapters:\n  01_x:\n")
    assert load_book_params(path) == _config({"models": ["a"]}, {"01_x": {}})
    path.write_text("models: [a]\n")
    with pytest.raises(BookError, match="'defaults' and 'chapters'"):
        load_book_params(path)


def test_repository_book_config_is_consistent() -> None:
    """The repository's _toc.yml, chapter sources and book_params.yml fit together."""
    chapters = toc_chapters(ROOT)
    assert chapters[0].name == "00_introduction"
    declared = {c.name: chapter_parameters(read_chapter(c.source), c.name) for c in chapters}
    config = load_book_params(ROOT / "book_params.yml")
    assert config["defaults"]["models"] == ["mpnet-base", "smollm2-135m"]
    check_parameter_names(chapters, declared, config, {})
    for chapter in chapters:
        assert "results_path" in declared[chapter.name]
        resolve_parameters(chapter.name, declared[chapter.name], config, {})


def test_select_chapters() -> None:
    chapters = [Chapter(n, f"book/{n}", Path(f"{n}.py")) for n in ("00_intro", "01_geo")]
    assert select_chapters(chapters, None) == chapters
    assert [c.name for c in select_chapters(chapters, ["01"])] == ["01_geo"]
    assert [c.name for c in select_chapters(chapters, ["book/01_geo", "00_intro"])] == [
        "00_intro", "01_geo"]
    with pytest.raises(BookError, match="matches no chapter"):
        select_chapters(chapters, ["02"])


def test_makefile_args_reach_the_cli() -> None:
    """`make book ARGS=...` as documented in the introduction passes a YAML list."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    args = "-p models '[\"gpt2\",\"bert-base-cased\"]' --out /tmp/hub-book"
    dry = subprocess.run(["make", "-n", "book", f"ARGS={args}"], cwd=ROOT, text=True,
                         capture_output=True, check=True).stdout
    line = next(x for x in dry.splitlines() if "lmgeometry book" in x)
    argv = shlex.split(line)[1:]
    parsed = build_parser().parse_args(argv)
    assert parse_overrides(parsed.param) == {"models": ["gpt2", "bert-base-cased"]}
    assert parsed.out == "/tmp/hub-book"


# --------------------------------------------------------------------------- notebooks


def test_clean_notebook_drops_volatile_metadata() -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"start_time": "2025", "duration": 1.0, "input_path": "/x",
                                "parameters": {"n": 1}}
    nb.metadata["jupytext"] = {"text_representation": {}}
    params = nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]})
    code = nbformat.v4.new_code_cell("print(n)", metadata={
        "papermill": {"duration": 1.2}, "execution": {"iopub.execute_input": "2025"}})
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("stream", name="stderr", text="/home/me/.venv/x.py: warning\n"),
    ]
    nb.cells = [params, code]
    clean_notebook(nb)
    assert nb.metadata["papermill"] == {"parameters": {"n": 1}}
    assert "jupytext" not in nb.metadata
    assert code.metadata == {}
    assert [o.name for o in code.outputs] == ["stdout"]
    assert params.metadata["tags"] == ["parameters", "hide-input"]
    ids = [c.id for c in nb.cells]
    nb.cells[0]["id"], nb.cells[1]["id"] = "random1", "random2"
    assert [c.id for c in clean_notebook(nb).cells] == ids  # ids depend on sources only
    nbformat.validate(nb)


def test_external_references_are_found(tmp_path: Path) -> None:
    (tmp_path / "_static").mkdir()
    (tmp_path / "page.html").write_text(
        '<html><head><script src="_static/plotly.min.js"></script>'
        '<link rel="stylesheet" href="https://fonts.example.org/css">'
        '<style>body { background: url("//cdn.example.org/bg.png") }</style></head>'
        '<body><a href="https://example.org/paper">a paper</a>'
        '<img src="data:image/png;base64,AAAA"><img srcset="a.png 1x, http://x.org/b.png 2x">'
        '<script src="http://cdn.example.org/x.js"></script></body></html>'
    )
    (tmp_path / "_static" / "theme.css").write_text(
        "@import url(https://fonts.example.org/f.css);\n.x { background: url(../img.png) }"
    )
    found = external_references(tmp_path)
    assert len(found) == 5, found
    assert not any("example.org/paper" in item for item in found)  # plain links are fine
    (tmp_path / "page.html").write_text('<a href="https://example.org">x</a>')
    (tmp_path / "_static" / "theme.css").write_text(".x { background: url(../img.png) }")
    assert external_references(tmp_path) == []


# --------------------------------------------------------------------------- execution


@pytest.fixture(scope="module")
def fixture_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fixture project executed and built once: (project folder, HTML folder)."""
    project = make_project(
        tmp_path_factory.mktemp("book") / "project",
        {"00_fixture": "slider_chapter.py"},
        params={"defaults": {"n_points": 30}, "chapters": {"00_fixture": {"n_steps": 3}}},
    )
    html_dir = build_book({"n_points": 25}, root=project)
    return project, html_dir


@pytest.mark.slow
def test_fixture_book_is_executed_and_rendered(fixture_book: tuple[Path, Path]) -> None:
    project, html_dir = fixture_book
    nb = nbformat.read(project / "book" / "00_fixture.ipynb", as_version=4)
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    # book_params.yml sets n_steps for this chapter; -p beats the defaults for n_points
    assert "n_steps = 3" in injected.source and "n_points = 25" in injected.source
    assert 'results_path = "00_fixture.results.json"' in injected.source
    assert json.loads((project / "book" / "00_fixture.results.json").read_text()) == {
        "n_points": 25, "n_steps": 3}
    assert set(nb.metadata["papermill"]) == {"parameters"}  # no times, durations, paths
    assert all(set(c.metadata) <= {"tags"} for c in nb.cells)  # no papermill/execution timing
    text = (project / "book" / "00_fixture.ipynb").read_text()
    assert "start_time" not in text and str(project) not in text and str(ROOT) not in text
    assert nb.metadata["kernelspec"]["name"] == "python3"

    page = (html_dir / "book" / "00_fixture.html").read_text()
    assert page.count("plotly.min.js") == 1
    assert page.count('class="plotly-graph-div"') == 3
    assert (html_dir / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    assert (html_dir / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert external_references(html_dir) == []
    assert not (html_dir / "_sources").exists()


@pytest.mark.slow
def test_rerun_gives_identical_notebook(fixture_book: tuple[Path, Path]) -> None:
    project, _ = fixture_book
    path = project / "book" / "00_fixture.ipynb"
    before = path.read_bytes()
    build_book({"n_points": 25}, root=project, html=False)
    assert path.read_bytes() == before


@pytest.mark.slow
def test_separate_book_leaves_the_project_alone(fixture_book: tuple[Path, Path],
                                                tmp_path: Path) -> None:
    project, _ = fixture_book
    committed = (project / "book" / "00_fixture.ipynb").read_bytes()
    out = tmp_path / "other"
    html_dir = build_book({"n_steps": 2}, out=out, root=project)
    assert html_dir == out / "_build" / "html"
    assert (html_dir / "book" / "00_fixture.html").is_file()
    assert (out / "_config.yml").read_text() == (project / "_config.yml").read_text()
    assert yaml.safe_load((out / "_toc.yml").read_text())["root"] == "book/00_fixture"
    assert json.loads((out / "book" / "00_fixture.results.json").read_text())["n_steps"] == 2
    assert (project / "book" / "00_fixture.ipynb").read_bytes() == committed


@pytest.mark.slow
def test_size_cap_names_the_point_budget(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"})
    with pytest.raises(BookError, match=r"over the 0.02 MB cap.*point_budget"):
        build_book(root=project, html=False, max_notebook_bytes=20_000)
    assert not (project / "book" / "00_fixture.ipynb").exists()
    assert (project / "_build" / "executing" / "00_fixture.ipynb").is_file()


@pytest.mark.slow
def test_failing_chapter_stops_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py",
                                                  "01_failing": "failing_chapter.py",
                                                  "02_after": "slider_chapter.py"})
    with pytest.raises(ChapterExecutionError) as info:
        build_book(root=project, html=False)
    error = info.value
    assert error.chapter == "01_failing" and error.ename == "ValueError"
    message = str(error)
    assert 'raise ValueError(f"fixture failure, answer={answer}")' in message  # the cell
    assert "fixture failure, answer=42" in message  # the exception
    assert "Traceback" in message or "----> " in message  # the kernel's traceback
    assert "\x1b[" not in message  # without colour codes
    assert error.notebook.is_file()
    assert (project / "book" / "00_fixture.ipynb").is_file()
    assert not (project / "book" / "01_failing.ipynb").exists()
    assert not (project / "book" / "02_after.ipynb").exists()  # the build stopped

    monkeypatch.setattr(book, "project_root", lambda: project)
    args = argparse.Namespace(param=[], out=None, chapters=["01"], no_html=True)
    assert build_book_cli(args) == 1
    err = capsys.readouterr().err
    assert "lmgeometry book: error: chapter 01_failing failed" in err
    assert "fixture failure, answer=42" in err


@pytest.mark.slow
def test_nbval_sanitize_masks_volatile_output_only(tmp_path: Path) -> None:
    """book/nbval_sanitize.cfg hides addresses, paths, timings, float noise; not real changes."""
    volatile = nbformat.v4.new_code_cell(
        "# NBVAL_CHECK_OUTPUT\nimport os, time\n"
        "print(object())\n"
        "print(os.path.join(os.getcwd(), 'results.json'))\n"
        "print(f'took {time.perf_counter() % 7 + 0.01:.3f} s, {time.perf_counter() % 9:.1f} ms')\n"
        "print(1 / 3 + time.time() * 1e-16)\n",
        outputs=[nbformat.v4.new_output("stream", name="stdout", text=(
            "<object object at 0x7f3a2b1c0d90>\n/home/someone/book/results.json\n"
            "took 2.345 s, 8.1 ms\n0.33333349999\n"))],
    )
    changed = nbformat.v4.new_code_cell(
        "# NBVAL_CHECK_OUTPUT\nprint('layers: 13, mean cosine 0.4180')",
        outputs=[nbformat.v4.new_output("stream", name="stdout",
                                        text="layers: 12, mean cosine 0.4180\n")],
    )
    volatile.execution_count, changed.execution_count = 1, 2
    nb = nbformat.v4.new_notebook(cells=[volatile, changed])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / "check.ipynb")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "book" / "nbval_sanitize.cfg"),
         "-p", "no:cacheprovider", "-rA", "--rootdir", str(tmp_path), "check.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    summary = [line.split(" - ")[0] for line in done.stdout.splitlines()
               if line.startswith(("PASSED", "FAILED"))]
    assert summary == ["PASSED check.ipynb::Cell 0", "FAILED check.ipynb::Cell 1"], done.stdout
