"""The book pipeline: parameters, execution, size cap, failures, offline HTML."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml
from fixtures.book_project import ROOT, make_project

from lmgeometry.activations.store import Store
from lmgeometry.cli import build_parser, main
from lmgeometry.errors import BookUsageError
from lmgeometry.report import book, cache, profile
from lmgeometry.report.book import (
    BookError,
    Chapter,
    ChapterExecutionError,
    build_book,
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
from lmgeometry.report.book.execution import PARAMETERS_PROMPT
from lmgeometry.report.figures import PLOTLY_MIME

CHAPTER = '''# %% [markdown]
# # A chapter

# %% tags=["parameters"]
models = ["a"]
n: int = 10
seed = 0
results_path = ""

# %%
from lmgeometry.report.results import save_results

print(models, n, seed)
_ = save_results(results_path, {"n": n})
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


def test_chapter_parameters_read_annotated_cells(tmp_path: Path) -> None:
    """Typed parameters (papermill --help-notebook shows the types): an import, annotations,
    a value over several lines and help comments are read as the plain cell is."""
    source = tmp_path / "01_x.py"
    source.write_text(CHAPTER.replace('models = ["a"]\n', """from typing import Union

models: list[str] = ["a"]  # offline aliases, hub ids or folders
layers: Union[str, list[int]] = "paper"
settings: dict[str, dict] = {
    "encoder": {"epochs": 2},
}
""").replace('results_path = ""', 'results_path: str = ""  # relative to the working dir'))
    assert chapter_parameters(read_chapter(source)) == {
        "models": ["a"], "layers": "paper", "settings": {"encoder": {"epochs": 2}}, "n": 10,
        "seed": 0, "results_path": ""}


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
    assert config["defaults"]["models"] == ["minilm-l6", "mpnet-base", "smollm2-135m",
                                            "gemma3-270m"]
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


def test_a_separate_book_gets_its_root_and_about_pages(tmp_path: Path) -> None:
    """The root page and the About page (its bibliography resolves every chapter's citations)
    join a separate book's chapters unless they are executed there already; a toc without an
    About page gets none."""
    toc = [Chapter(n, f"book/{n}", Path(f"{n}.py"))
           for n in ("00_intro", "01_geo", "02_pos", "99_about")]
    names = [c.name for c in book.with_required_pages(toc, [toc[2]], tmp_path)]
    assert names == ["00_intro", "02_pos", "99_about"]
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "99_about.ipynb").write_text("{}")
    assert [c.name for c in book.with_required_pages(toc, [toc[2]], tmp_path)] == [
        "00_intro", "02_pos"]
    assert book.with_required_pages(toc[:2], [toc[1]], tmp_path) == toc[:2]


def test_a_separate_book_gets_the_bibliography(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"})
    out = tmp_path / "out"
    (out / "book").mkdir(parents=True)
    (out / "book" / "00_fixture.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    book.write_book_config(project, out)
    assert (out / "references.bib").read_bytes() == (ROOT / "references.bib").read_bytes()
    assert cache.html_inputs(out, ["book/00_fixture"])["references"] is not None


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
    assert params.metadata["mystnb"]["code_prompt_show"] == PARAMETERS_PROMPT
    ids = [c.id for c in nb.cells]
    nb.cells[0]["id"], nb.cells[1]["id"] = "random1", "random2"
    assert [c.id for c in clean_notebook(nb).cells] == ids  # ids depend on sources only
    nbformat.validate(nb)


def test_injected_parameters_are_the_one_parameters_box() -> None:
    nb = nbformat.v4.new_notebook()
    defaults = nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]})
    injected = nbformat.v4.new_code_cell("# Parameters\nn = 2",
                                         metadata={"tags": ["injected-parameters"]})
    nb.cells = [defaults, injected, nbformat.v4.new_code_cell("print(n)")]
    clean_notebook(nb)
    assert defaults.metadata["tags"] == ["parameters", "remove-cell"]
    assert "mystnb" not in defaults.metadata
    assert injected.metadata["tags"] == ["injected-parameters", "hide-input"]
    assert injected.metadata["mystnb"]["code_prompt_show"] == PARAMETERS_PROMPT
    assert nb.cells[2].metadata == {}
    clean_notebook(nb)  # idempotent
    assert injected.metadata["tags"] == ["injected-parameters", "hide-input"]


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
    # no papermill/execution timing; the parameters box carries its labels
    assert all(set(c.metadata) <= {"tags"} for c in nb.cells if c is not injected)
    assert set(injected.metadata) == {"tags", "mystnb"}
    text = (project / "book" / "00_fixture.ipynb").read_text()
    assert "start_time" not in text and str(project) not in text and str(ROOT) not in text
    assert nb.metadata["kernelspec"]["name"] == "python3"

    page = (html_dir / "book" / "00_fixture.html").read_text()
    # every figure's output carries plotly's mime bundle for notebook viewers; the book's
    # pages keep the compact HTML only
    figure_outputs = [o for c in nb.cells for o in c.get("outputs", [])
                      if "lmgFigure(" in o.get("data", {}).get("text/html", "")]
    assert len(figure_outputs) == 6
    assert all(PLOTLY_MIME in o.data for o in figure_outputs)
    assert PLOTLY_MIME not in page and '"bdata"' not in page
    # the build's archive, linked from each page, holds the HTML and the executed chapter
    [archive] = html_dir.glob("lmgeometry-book-*.tar.gz")
    assert f'href="../{archive.name}" download>Download this build' in page
    assert "How this chapter was built" not in page  # this book has no About page
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    top = archive.name.removesuffix(".tar.gz")
    assert {f"{top}/html/index.html", f"{top}/html/book/00_fixture.html",
            f"{top}/book/00_fixture.ipynb", f"{top}/book/00_fixture.results.json",
            f"{top}/book/00_fixture.exec.json", f"{top}/book/00_fixture.run.json"} <= names
    run = json.loads((project / "book" / "00_fixture.run.json").read_text())
    assert run["seconds"] > 0 and run["machine"]["cores"] == os.cpu_count()
    assert page.count("plotly.min.js") == 1 and page.count("lmgeometry_figures.js") == 1
    assert page.count('class="plotly-graph-div"') == 6
    assert [f"Figure {i}." for i in range(1, 7)] == re.findall(r'lmg-label">(Figure \d+\.)<', page)
    assert (html_dir / "_static" / "lmgeometry_figures.js").read_text().count(
        "window.lmgFigure.template = {") == 1
    # pages without a figure load neither plotly.js nor the decoder (4.8 MB saved each)
    for other in html_dir.glob("*.html"):
        text = other.read_text()
        assert "lmgFigure(" in text or "plotly.min.js" not in text, other.name
    assert (html_dir / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    assert (html_dir / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert external_references(html_dir) == []
    assert not (html_dir / "_sources").exists()


@pytest.mark.slow
def test_rerun_gives_identical_notebook(fixture_book: tuple[Path, Path]) -> None:
    project, _ = fixture_book
    path = project / "book" / "00_fixture.ipynb"
    before = path.read_bytes()
    manifest = path.with_suffix(".exec.json").read_bytes()
    build_book({"n_points": 25}, root=project, html=False, force=True)
    assert path.read_bytes() == before
    assert path.with_suffix(".exec.json").read_bytes() == manifest


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
def test_a_chapter_whose_kernel_wrote_no_results_file_beside_it_stops_the_build(
        tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project = make_project(tmp_path / "project", {"01_stray": "stray_results_chapter.py"},
                           params={"chapters": {"01_stray": {"elsewhere": str(elsewhere)}}})
    with pytest.raises(BookError, match="01_stray: its results file .* is missing"):
        build_book(root=project, html=False)
    assert (elsewhere / "01_stray.results.json").is_file()  # where the kernel wrote it
    # a results file left from an earlier run does not pass for this run's
    (project / "book" / "01_stray.results.json").write_text("{}")
    os.utime(project / "book" / "01_stray.results.json", (1.0, 1.0))
    with pytest.raises(BookError, match="left from an earlier run"):
        build_book(root=project, html=False, force=True)
    assert not (project / "book" / "01_stray.ipynb").exists()


@pytest.mark.slow
def test_failing_chapter_stops_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py",
                                                  "01_failing": "failing_chapter.py",
                                                  "02_after": "slider_chapter.py",
                                                  "90_gathering": "slider_chapter.py"})
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

    with pytest.raises(ChapterExecutionError) as info:  # two at a time
        build_book(root=project, html=False, chapters=["01", "02", "90"], jobs=2)
    assert info.value.chapter == "01_failing"
    assert not (project / "book" / "90_gathering.ipynb").exists()  # runs after the others

    monkeypatch.setattr(book.build, "project_root", lambda: project)
    assert main(["book", "--chapters", "01", "--no-html"]) == 1
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


# --------------------------------------------------------------------------- warm rebuilds


def _inputs(**changes: object) -> cache.BookInputs:
    """Build facts as BookInputs.current() computes them, with some replaced."""
    facts = {"version": "0.1.0", "environment": {"python": "3.11", "numpy": "2.0.0"}}
    facts.update(changes)
    return cache.BookInputs(**facts)


def _model_folder(folder: Path, weights: bytes) -> Path:
    """A folder that io.models fingerprints like a saved model (config, weights, tokenizer)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    return folder


def _executed(tmp_path: Path, params: dict | None = None) -> tuple[Path, Path, Path]:
    """A chapter source, its 'executed' notebook and results file."""
    source = tmp_path / "notebooks" / "01_x.py"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(CHAPTER.replace('models = ["a"]', "models = []"))
    notebook = tmp_path / "book" / "01_x.ipynb"
    notebook.parent.mkdir(parents=True, exist_ok=True)
    notebook.write_text("{}")
    results = notebook.with_name("01_x.results.json")
    results.write_text('{"n": 10}')
    return source, notebook, results


def _package(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A two-file package the manifest's ``code`` refers to; its digests."""
    from lmgeometry import sources

    (folder / "io").mkdir(parents=True)
    (folder / "stats.py").write_text('def mean(x):\n    """The mean."""\n    return sum(x)\n')
    (folder / "io" / "manifest.json").write_text("{}")
    monkeypatch.setattr(cache, "PACKAGE_DIR", folder)
    return {name: sources.file_digest(folder / name) for name in ("io/manifest.json", "stats.py")}


def test_a_file_edited_while_the_chapter_ran_makes_it_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's record digests the package files after its last cell: one edited during
    the run is recorded as edited, not with content the kernel may not have run."""
    import os
    import time

    source, notebook, results = _executed(tmp_path)
    declared = chapter_parameters(read_chapter(source))
    values = {"results_path": "01_x.results.json"}
    key = cache.chapter_key(source, values, declared, _inputs())
    code = _package(tmp_path / "pkg", monkeypatch)
    began = time.time()
    before = began - 60
    os.utime(tmp_path / "pkg" / "io" / "manifest.json", (before, before))  # not touched since
    os.utime(tmp_path / "pkg" / "stats.py", (began + 1, began + 1))  # edited during the run
    recorded_code = cache.unedited_since(code, began)
    assert recorded_code == {"io/manifest.json": code["io/manifest.json"],
                             "stats.py": cache.EDITED_DURING_RUN}
    cache.write_manifest(notebook, key, [], results, code=recorded_code)
    reasons = cache.stale_reasons(cache.read_manifest(notebook), key, notebook, results,
                                  _inputs())
    assert reasons == ["code edited while it ran: stats.py"]
    # the same file unedited: the chapter is current
    cache.write_manifest(notebook, key, [], results, code=cache.unedited_since(code, began + 2))
    assert cache.stale_reasons(cache.read_manifest(notebook), key, notebook, results,
                               _inputs()) == []


def test_manifest_is_deterministic_and_holds_until_an_input_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, notebook, results = _executed(tmp_path)
    model = _model_folder(tmp_path / "model", b"weights-1")
    declared = chapter_parameters(read_chapter(source))
    values = {"models": [str(model)], "results_path": "01_x.results.json"}
    inputs = _inputs()
    code = _package(tmp_path / "pkg", monkeypatch)
    key = cache.chapter_key(source, values, declared, inputs)
    assert key["models"] == {str(model): inputs.fingerprint(str(model))}
    path = cache.write_manifest(notebook, key, [], results, code=code)
    assert path == tmp_path / "book" / "01_x.exec.json"
    first = path.read_bytes()
    assert b"time" not in first and str(tmp_path / "book").encode() not in first
    cache.write_manifest(notebook, cache.chapter_key(source, values, declared, _inputs()), [],
                         results, code=code)
    assert path.read_bytes() == first  # same inputs, same bytes

    def reasons(**kw: object) -> list[str]:
        new_values = kw.pop("values", values)
        inp = _inputs(**kw)
        return cache.stale_reasons(cache.read_manifest(notebook),
                                   cache.chapter_key(source, new_values, declared, inp),
                                   notebook, results, inp)

    assert reasons() == []
    assert reasons(values={**values, "n": 5}) == ["parameters changed: n '(default)' -> 5"]
    assert reasons(version="0.2.0") == ["lmgeometry 0.1.0 -> 0.2.0"]
    stats = tmp_path / "pkg" / "stats.py"
    stats.write_text('def mean(x):\n    """The mean of x."""  # a comment\n    return sum(x)\n')
    assert reasons() == []  # docstrings and comments are not code
    stats.write_text("def mean(x):\n    return sum(x) / len(x)\n")
    (tmp_path / "pkg" / "io" / "manifest.json").write_text("{ }")
    assert reasons() == ["code it ran changed: io/manifest.json, stats.py"]
    stats.unlink()
    assert reasons() == ["code it ran changed: io/manifest.json, stats.py"]
    stats.write_text('def mean(x):\n    """The mean."""\n    return sum(x)\n')
    (tmp_path / "pkg" / "io" / "manifest.json").write_text("{}")
    assert reasons() == []
    assert reasons(environment={"python": "3.11", "numpy": "2.1.0"}) == [
        "environment changed: numpy '2.0.0' -> '2.1.0'"]

    gone = str(tmp_path / "gone")
    assert f"cannot fingerprint model {gone} (ModelSpecError: no such folder" in "; ".join(
        reasons(values={**values, "models": [gone]}))
    (model / "model.safetensors").write_bytes(b"weights-2")
    assert reasons()[0].startswith("models changed: ")
    (model / "model.safetensors").write_bytes(b"weights-1")
    text = source.read_text()
    source.write_text(text + "print(1)\n")
    assert reasons() == ["source notebooks/01_x.py changed"]
    source.write_text(text)
    results.unlink()
    assert reasons() == ["results file 01_x.results.json missing since the execution"]
    results.write_text('{"n": 11}')
    notebook.write_text("{ }")
    assert reasons() == ["executed notebook 01_x.ipynb changed since the execution",
                         "results file 01_x.results.json changed since the execution"]
    path.unlink()
    assert reasons()[0].startswith("no execution manifest 01_x.exec.json")


def test_book_files_a_chapter_read_decide_too(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A chapter that read another chapter's results file runs again when that file changes;
    files outside the book folder are not its inputs."""
    from lmgeometry import trace
    from lmgeometry.report.results import load_results, save_results

    source, notebook, results = _executed(tmp_path)
    other = save_results(notebook.with_name("00_other.results.json"), {"claims": [1]})
    outside = save_results(tmp_path / "elsewhere.json", {"x": 1})
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(trace.TRACE_ENV, str(events))
    assert load_results(other) == {"claims": [1]} and load_results(outside) == {"x": 1}
    recorded = cache.input_records(trace.read_events(events), notebook.parent)
    assert recorded == [{"path": "00_other.results.json",
                         "sha256": cache.file_digest(other)}]
    declared = chapter_parameters(read_chapter(source))
    values = {"results_path": "01_x.results.json"}
    key = cache.chapter_key(source, values, declared, _inputs())
    code = _package(tmp_path / "pkg", monkeypatch)
    cache.write_manifest(notebook, key, [], results, recorded, code)

    def reasons() -> list[str]:
        return cache.stale_reasons(cache.read_manifest(notebook), key, notebook, results,
                                   _inputs())

    assert reasons() == []
    save_results(outside, {"x": 2})
    assert reasons() == []
    save_results(other, {"claims": [1, 2]})
    assert reasons() == ["input 00_other.results.json changed since the execution"]
    other.unlink()
    assert reasons() == ["input 00_other.results.json missing since the execution"]


def test_store_entries_recorded_in_the_trace_decide_too(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed model file behind a store entry the chapter read re-executes it."""
    from conftest import array_store

    from lmgeometry import trace
    from lmgeometry.activations.entry import write_meta
    from lmgeometry.io.models import resolve_fingerprint

    model = _model_folder(tmp_path / "model", b"weights-1")
    name = "sts-" + "0123" * 5  # the entry name of its key (Store checks it)
    entry = array_store(tmp_path / "store" / name, [np.zeros((2, 3), np.float16)],
                        {"text": ["a", "b"]})
    meta = json.loads((entry.path / "meta.json").read_text())
    meta.update(key="0123" * 16, fingerprint=resolve_fingerprint(str(model)),
                model={"spec": str(model)}, corpus={"name": "sts", "digest": "c" * 64})
    write_meta(entry.path, meta)
    events_file = tmp_path / "trace.jsonl"
    monkeypatch.setenv(trace.TRACE_ENV, str(events_file))
    Store(entry.path)
    Store(entry.path, label=str(model))  # opened twice: recorded once
    with trace.timed("figure", name="f"):
        pass
    monkeypatch.delenv(trace.TRACE_ENV)
    Store(entry.path)  # outside the pipeline: not recorded
    events = trace.read_events(events_file)
    assert [e["event"] for e in events] == ["store", "store", "figure"]
    stores = cache.store_records(events)
    assert stores == [{"entry": name, "key": "0123" * 16, "model": str(model),
                       "fingerprint": meta["fingerprint"], "corpus": "sts",
                       "corpus_digest": "c" * 64}]

    source, notebook, results = _executed(tmp_path)
    declared = chapter_parameters(read_chapter(source))
    values = {"results_path": "01_x.results.json"}
    key = cache.chapter_key(source, values, declared, _inputs())
    cache.write_manifest(notebook, key, stores, results, code=_package(tmp_path / "pkg",
                                                                       monkeypatch))
    recorded = cache.read_manifest(notebook)
    assert cache.stale_reasons(recorded, key, notebook, results, _inputs()) == []
    (model / "model.safetensors").write_bytes(b"weights-2")
    [reason] = cache.stale_reasons(recorded, key, notebook, results, _inputs())
    assert reason.startswith(f"model {model} behind store entry {name} changed")


def test_html_build_depends_on_its_own_code_only() -> None:
    """The HTML build runs the pipeline's Sphinx configuration and the extension; a change to
    another module (a chapter's measure, the command line) does not rebuild it."""
    code = cache.html_code()
    assert {"report/book/build.py", "report/book/html.py", "report/toc.py", "report/offline.py",
            "report/_ext/lmgeometry_figures.js",
            "report/_ext/lmgeometry.css", "report/_ext/plotly_offline.py"} <= set(code)
    assert not any(name.startswith(("measures/", "cli.py")) for name in code)


def test_environment_libraries_are_declared_dependencies() -> None:
    import tomllib
    from importlib import metadata

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=\[ ]", d)[0].lower()
             for d in declared["dependencies"] + declared["optional-dependencies"]["book"]}
    assert set(cache.LIBRARIES) <= names
    for dist in cache.HTML_LIBRARIES:  # jupyter-book's own dependencies among them
        assert metadata.version(dist)


def test_figure_bundle_mode_is_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build with another LMGEOMETRY_FIGURE_BUNDLE must not reuse notebooks of the old mode."""
    monkeypatch.delenv("LMGEOMETRY_FIGURE_BUNDLE", raising=False)
    compact = cache.BookInputs.current().environment
    monkeypatch.setenv("LMGEOMETRY_FIGURE_BUNDLE", "full")
    full = cache.BookInputs.current().environment
    assert compact["figure_bundle"] == "compact" and full["figure_bundle"] == "full"
    assert {k: v for k, v in compact.items() if k != "figure_bundle"} == {
        k: v for k, v in full.items() if k != "figure_bundle"}


def test_profile_rows_and_table() -> None:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("\nstores = {m: activations(m) for m in models}",
                                  metadata={"papermill": {"duration": 12.5}}),
        nbformat.v4.new_code_cell("show(fig, 'x')", metadata={"papermill": {"duration": 0.4}}),
    ])
    cells = profile.cell_times(nb)
    assert [(c.index, c.seconds, c.first_line) for c in cells] == [
        (1, 12.5, "stores = {m: activations(m) for m in models}"), (2, 0.4, "show(fig, 'x')")]
    events = [{"event": "activations", "hit": False, "seconds": 10.0},
              {"event": "activations", "hit": True, "seconds": 0.25},
              {"event": "figure", "seconds": 0.1}, {"event": "store", "entry": "x"}]
    row = profile.ChapterProfile.measured("01_x", 14.0, cells, events, 300 * 2**20)
    assert (row.extract_built, row.extract_built_s, row.extract_hits, row.figures) == (1, 10.0,
                                                                                       1, 1)
    assert row.peak_rss_mib == 300.0 and row.cells_s == 12.9
    skipped = profile.ChapterProfile(chapter="02_y", status="skipped")
    table = profile.profile_table([row, skipped])
    assert "01_x" in table and "02_y" in table and "10.0 (1)" in table
    assert "cell 1: stores = {m: activations(m) for m in models}" in table
    assert profile.kernel_peak_rss(os.getpid()) > 10 * 2**20  # this process, from /proc
    assert profile.kernel_peak_rss(None) is None


def test_cli_has_force_and_profile() -> None:
    args = build_parser().parse_args(["book", "--force", "--profile", "--no-html"])
    assert args.force and args.profile and args.no_html
    args = build_parser().parse_args(["book"])
    assert not args.force and not args.profile
    assert args.jobs == min(2, os.cpu_count() or 1)
    assert build_parser().parse_args(["book", "--jobs", "3"]).jobs == 3


def test_stages_run_gathering_chapters_last_and_alone() -> None:
    chapters = [book.Chapter(name=n, docname=f"book/{n}", source=Path(f"notebooks/{n}.py"))
                for n in ["90_scorecard", "00_intro", "99_about", "05_b", "01_a"]]
    stages = [[c.name for c in stage] for stage in book.execution_stages(chapters)]
    assert stages == [["00_intro", "01_a", "05_b"], ["90_scorecard"], ["99_about"]]
    assert book.execution_stages(chapters[:1])[0][0].name == "90_scorecard"


def test_the_introduction_gathers_after_the_chapters_and_before_the_scorecard() -> None:
    names = ["90_scorecard", "00_introduction", "99_about", "05_b", "01_a"]
    chapters = [book.Chapter(name=n, docname=f"book/{n}", source=Path(f"notebooks/{n}.py"))
                for n in names]
    stages = [[c.name for c in stage] for stage in book.execution_stages(chapters)]
    assert stages == [["01_a", "05_b"], ["00_introduction"], ["90_scorecard"], ["99_about"]]
    assert [c.name for c in book.execution_order(chapters)] == [
        "01_a", "05_b", "00_introduction", "90_scorecard", "99_about"]


def test_parallel_runs_stop_at_the_first_failure_in_chapter_order() -> None:
    import threading

    started: list[str] = []
    gate = threading.Barrier(2, timeout=600)  # a deadlock guard, not a time budget

    def execute(item: tuple) -> str:
        name = item[0].name
        started.append(name)
        if name in ("01_a", "02_b"):
            gate.wait()  # both run at once, then both fail
            raise ValueError(name)
        return name

    todo = [(book.Chapter(name=n, docname=n, source=Path(n)),) for n in ["01_a", "02_b", "03_c"]]
    with pytest.raises(ValueError, match="01_a"):
        book.execution.run_parallel(execute, todo, jobs=2)
    assert "03_c" not in started  # cancelled before it started
    assert book.execution.run_parallel(lambda item: item[0].name, todo, jobs=2) == {
        n: n for n in ["01_a", "02_b", "03_c"]}


def test_kernel_threads_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert book.execution.kernel_threads(1) == {}
    assert book.execution.kernel_threads(2) == {"OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
    assert book.execution.kernel_threads(16)["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the user's choice stands
    assert book.execution.kernel_threads(2) == {}


def _log(capsys: pytest.CaptureFixture[str]) -> tuple[list[str], list[str], str]:
    """(executed chapters, skipped chapters, stdout) of the last build."""
    out = capsys.readouterr().out
    executed = re.findall(r"^\[book\] executing (\S+) ", out, flags=re.MULTILINE)
    skipped = re.findall(r"^\[book\] skipping (\S+):", out, flags=re.MULTILINE)
    return executed, skipped, out


def _save_tiny_bert(folder: Path, seed: int) -> Path:
    """A real 2-layer BERT with random weights and MiniLM's tokenizer (as in test_store)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from lmgeometry.io._offline import alias_folder

    tok = AutoTokenizer.from_pretrained(alias_folder("minilm-l6"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=48,
                        max_position_embeddings=64)
    BertModel(config).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.mark.slow
@pytest.mark.data
def test_warm_rebuild_reexecutes_exactly_what_changed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    model = _save_tiny_bert(tmp_path / "tiny-bert", seed=0)
    project = make_project(
        tmp_path / "project",
        {"00_fixture": "slider_chapter.py", "01_store": "store_chapter.py",
         "02_plain": "slider_chapter.py"},
        params={"chapters": {"01_store": {"model": str(model),
                                          "store_root": str(tmp_path / "store")}}},
    )
    plain = CHAPTER.replace('models = ["a"]', "models = []")  # "a" is no model
    (project / "notebooks" / "02_plain.py").write_text(plain)
    names = ["00_fixture", "01_store", "02_plain"]
    nb = {name: project / "book" / f"{name}.ipynb" for name in names}

    def build(**kw: object) -> tuple[list[str], list[str], str]:
        build_book(root=project, html=False, **kw)
        return _log(capsys)

    assert sorted(build(jobs=2)[0]) == names  # two at a time: each kernel its own trace
    manifest = json.loads((project / "book" / "01_store.exec.json").read_text())
    [entry] = manifest["stores"]  # recorded while the chapter ran
    for name in ("00_fixture", "02_plain"):
        assert json.loads(nb[name].with_suffix(".exec.json").read_text())["stores"] == []
    assert entry["model"] == str(model) and entry["corpus"] == "book-fixture"
    rows = {r["chapter"]: r for r in json.loads(
        (project / "_build" / "profile.json").read_text())["chapters"]}
    assert (rows["01_store"]["extract_built"], rows["01_store"]["extract_hits"]) == (1, 0)
    before = {n: (nb[n].stat().st_mtime_ns, nb[n].with_suffix(".exec.json").read_bytes())
              for n in names}

    executed, skipped, out = build()  # nothing changed
    assert executed == [] and skipped == names, out
    assert "1 store entry" in out
    assert {n: (nb[n].stat().st_mtime_ns, nb[n].with_suffix(".exec.json").read_bytes())
            for n in names} == before

    source = project / "notebooks" / "02_plain.py"
    source.write_text(plain + "\n# %%\nprint('one more cell')\n")
    executed, skipped, out = build()
    assert (executed, skipped) == (["02_plain"], ["00_fixture", "01_store"])
    assert "because: source notebooks/02_plain.py changed" in out

    assert build(params={"n": 5})[0] == ["02_plain"]  # only 02_plain declares n
    assert build(params={"n": 5})[0] == []
    assert build()[0] == ["02_plain"]  # back to its default

    _save_tiny_bert(model, seed=1)  # the model behind 01_store's entry changes
    executed, _, out = build()
    assert executed == ["01_store"], out
    assert f"model {model} behind store entry {entry['entry']} changed" in out
    [new_entry] = json.loads((project / "book" / "01_store.exec.json").read_text())["stores"]
    assert new_entry["key"] != entry["key"] and new_entry["fingerprint"] != entry["fingerprint"]

    copy = tmp_path / "src" / "lmgeometry"
    shutil.copytree(cache.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE_DIR", copy)
    monkeypatch.setenv("PYTHONPATH", str(copy.parent))  # the kernels import the copy
    assert build()[0] == []  # the same files elsewhere: same package source
    manifests = {n: json.loads(nb[n].with_suffix(".exec.json").read_text()) for n in names}
    assert "activations/extract.py" in manifests["01_store"]["code"]  # the entry's code
    assert "report/plots.py" in manifests["00_fixture"]["code"]
    assert not any("activations/extract.py" in manifests[n]["code"]
                   for n in ("00_fixture", "02_plain"))
    for module in ("cli.py", "measures/stats.py"):  # imported by no chapter kernel
        assert all(module not in m["code"] for m in manifests.values())
        with (copy / module).open("a") as handle:
            handle.write("\nCHANGED = True\n")
    with (copy / "report" / "plots.py").open("a") as handle:
        handle.write("# a comment is not code\n")
    assert build()[0] == []  # neither a module no chapter ran nor a comment re-executes
    with (copy / "activations" / "extract.py").open("a") as handle:
        handle.write("\nCHANGED = True\n")
    executed, skipped, out = build()
    assert (executed, skipped) == (["01_store"], ["00_fixture", "02_plain"]), out
    assert "code it ran changed: activations/extract.py" in out
    rebuilt = json.loads((project / "book" / "01_store.exec.json").read_text())
    assert rebuilt["stores"][0]["key"] != new_entry["key"]  # the entry's key has the code
    assert rows_of(project)["01_store"]["extract_built"] == 1
    with (copy / "report" / "plots.py").open("a") as handle:
        handle.write("\nCHANGED = True\n")
    executed, skipped, out = build()
    assert (executed, skipped) == (["00_fixture"], ["01_store", "02_plain"]), out


def rows_of(project: Path) -> dict[str, dict]:
    """The last build's profile rows by chapter."""
    return {r["chapter"]: r for r in json.loads(
        (project / "_build" / "profile.json").read_text())["chapters"]}


@pytest.mark.slow
def test_force_and_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py",
                                                  "01_other": "slider_chapter.py"})
    names = ["00_fixture", "01_other"]
    build_book(root=project, profile=True)
    executed, _, out = _log(capsys)
    assert executed == names and "[book] HTML in" in out
    table = out[out.index("[book] profile"):]
    for name in names:
        assert re.search(rf"^{name} +executed +[0-9.]+ ", table, flags=re.MULTILINE), table
    assert "slowest cells" in table and "figures s" in table and "peak MiB" in table
    rows = json.loads((project / "_build" / "profile.json").read_text())["chapters"]
    assert [r["chapter"] for r in rows] == names
    assert all(r["figures"] == 6 and r["peak_rss_mib"] > 50 for r in rows)
    executed_nb = nbformat.read(project / "book" / "00_fixture.ipynb", as_version=4)
    # timings: profile only; only the parameters box carries more (its labels)
    [box] = [c for c in executed_nb.cells if not set(c.metadata) <= {"tags"}]
    assert set(box.metadata) == {"tags", "mystnb"} and "hide-input" in box.metadata["tags"]

    build_book(root=project, profile=True)
    executed, skipped, out = _log(capsys)
    assert executed == [] and skipped == names
    assert "[book] HTML unchanged" in out and "HTML build: skipped (unchanged)" in out
    assert re.search(r"^01_other +skipped +[0-9.]+ ", out, flags=re.MULTILINE), out

    monkeypatch.setattr(book.build, "project_root", lambda: project)
    assert main(["book", "--force", "--profile"]) == 0
    executed, skipped, out = _log(capsys)
    assert executed == names and skipped == [] and "[book] HTML in" in out
    assert "because: --force" in out


@pytest.mark.parametrize(("value", "match"), [
    ("-5", "cannot be negative"), ("2.5", "is a whole number"), ("many", "is a whole number"),
    ("true", "is a whole number"),
])
def test_numeric_parameters_are_checked_before_any_kernel_starts(tmp_path: Path, value: str,
                                                                  match: str) -> None:
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"})
    (project / "notebooks" / "01_x.py").write_text(CHAPTER)
    toc = yaml.safe_load((project / "_toc.yml").read_text())
    toc.setdefault("chapters", []).append({"file": "book/01_x"})
    (project / "_toc.yml").write_text(yaml.safe_dump(toc))
    with pytest.raises(BookUsageError, match=match):
        build_book(params=parse_overrides([["n", value]]), root=project, html=False,
                   chapters=["01_x"])
    assert not (project / "book" / "01_x.ipynb").exists()


def test_links_to_chapters_a_separate_book_lacks_become_text(tmp_path: Path) -> None:
    from lmgeometry.report.book import unlink_absent

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("See [Geometry](01_geometry.ipynb) and "
                                      "[Senses](05_senses.ipynb#views) and [a site](x.html)."),
        nbformat.v4.new_code_cell("print('[Geometry](01_geometry.ipynb)')")])
    path = tmp_path / "00_introduction.ipynb"
    nbformat.write(nb, path)
    assert unlink_absent(path, {"book/00_introduction", "book/05_senses"})
    cells = nbformat.read(path, as_version=4).cells
    assert cells[0].source == ("See Geometry and [Senses](05_senses.ipynb#views) and "
                               "[a site](x.html).")
    assert cells[1].source == "print('[Geometry](01_geometry.ipynb)')"  # code is not text
    assert not unlink_absent(path, {"book/00_introduction", "book/05_senses"})


def test_the_book_is_built_from_the_checkout_you_stand_in(tmp_path: Path, capsys,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Not the checkout the package happens to be installed from; the log says which."""
    project = make_project(tmp_path / "other-checkout", {"00_fixture": "slider_chapter.py"})
    monkeypatch.chdir(project / "notebooks")
    assert book.project_root() == project.resolve()
    assert f"building the checkout {project.resolve()}" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)  # no checkout here: the installed one
    assert book.project_root() == Path(book.__file__).resolve().parents[4]


def test_a_checkout_is_never_built_with_another_checkouts_code(tmp_path: Path) -> None:
    from lmgeometry import sources
    from lmgeometry.errors import BookError

    checkout = tmp_path / "checkout"
    own = checkout / "src" / "lmgeometry"
    shutil.copytree(sources.PACKAGE_DIR, own, ignore=shutil.ignore_patterns("__pycache__"))
    book.check_package(checkout)  # the same code: fine
    with (own / "cli.py").open("a") as handle:
        handle.write("# a comment is not code\n")
    book.check_package(checkout)
    with (own / "cli.py").open("a") as handle:
        handle.write("CHANGED = 1\n")
    with pytest.raises(BookError, match="1 files differ .*cli.py.*make venv"):
        book.check_package(checkout)
    book.check_package(tmp_path)  # no src/lmgeometry: nothing to compare


def test_markdown_pages_are_not_chapters_and_travel_to_a_separate_book(tmp_path: Path) -> None:
    """A toc entry pages/name is the Markdown page pages/name.md: not a chapter, copied into
    an --out book, and its documented modules are inputs of the HTML build."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"},
                           pages={"api": ROOT / "pages" / "api.md"})
    assert [c.name for c in toc_chapters(project)] == ["00_fixture"]
    assert book.toc_pages(project) == ["pages/api"]
    out = tmp_path / "out"
    (out / "book").mkdir(parents=True)
    (out / "book" / "00_fixture.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    book.write_book_config(project, out)
    assert (out / "pages" / "api.md").read_bytes() == (ROOT / "pages" / "api.md").read_bytes()
    assert "pages/api" in (out / "_toc.yml").read_text()
    inputs = cache.html_inputs(out, ["book/00_fixture", "pages/api"])
    assert inputs["notebooks"]["pages/api"] == cache.file_digest(out / "pages" / "api.md")
    assert {"__init__.py", "api.py", "measures/contextual.py", "report/export.py"} <= set(
        inputs["documented"])
    assert cache.html_inputs(out, ["book/00_fixture"])["documented"] == {}
    (project / "pages" / "api.md").unlink()
    with pytest.raises(BookError, match="pages/api but .* does not exist"):
        toc_chapters(project)


def test_the_api_page_documents_every_top_level_name() -> None:
    """pages/api.md (the book's Python API page) has an autodoc directive for each lazy
    top-level name of lmgeometry, and the repository's toc lists it."""
    import lmgeometry

    text = (ROOT / "pages" / "api.md").read_text()
    documented = set(re.findall(r"^\.\. auto(?:function|class):: lmgeometry\.(\w+)\s*$", text,
                                re.MULTILINE))
    assert documented == set(lmgeometry.__all__) - {"__version__"}
    assert "pages/api" in book.toc_pages(ROOT)


def test_api_page_docstring_bars_stay_text() -> None:
    """The docstrings' plain-text formulas (|V|, ||x||) are escaped for reStructuredText, but
    not inside inline literals, roles or the body of a math directive."""
    from lmgeometry.report._ext.api_docs import escape_bars

    lines = ["W - 1 mu^T, mu = sum_w e(w) / |V|, ``||x||`` and :math:`|a|`", "",
             ".. math:: x", "", "   |b|", "after |u_1^T mu|"]
    assert escape_bars(lines) == [
        "W - 1 mu^T, mu = sum_w e(w) / \\|V\\|, ``||x||`` and :math:`|a|`", "",
        ".. math:: x", "", "   |b|", "after \\|u_1^T mu\\|"]


@pytest.mark.slow
def test_the_api_page_builds_in_a_book_of_some_chapters(tmp_path: Path) -> None:
    """`--out X --chapters 00` with the API page: autodoc and napoleon render the package's
    docstrings under the strict build (a warning fails it), and nothing loads from another
    host."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py",
                                                  "01_other": "slider_chapter.py"},
                           params={"defaults": {"n_points": 20, "n_steps": 2}},
                           pages={"api": ROOT / "pages" / "api.md"})
    html = build_book(root=project, out=tmp_path / "out", chapters=["00"])
    page = (html / "pages" / "api.html").read_text()
    for name in ("hidden_states", "self_similarity", "linear_cka", "save", "export_results"):
        assert f'id="lmgeometry.{name}"' in page, name
    assert "Parameters" in page and "A worked example" in page
    assert "How this chapter was built" not in page
    assert "pages/api.html" in (html / "book" / "00_fixture.html").read_text()  # in the nav
    assert external_references(html) == []


@pytest.mark.slow
def test_a_book_of_one_chapter_builds_its_html(tmp_path: Path) -> None:
    """`--out X --chapters 00`: the root page links to a chapter the separate book lacks; the
    link becomes text and the strict HTML build succeeds."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py",
                                                  "01_other": "slider_chapter.py"})
    source = project / "notebooks" / "00_fixture.py"
    source.write_text(source.read_text() + "\n# %% [markdown]\n# See [the other "
                      "chapter](01_other.ipynb) for more.\n")
    html = build_book(root=project, out=tmp_path / "out", chapters=["00"])
    page = (html / "book" / "00_fixture.html").read_text()
    assert "the other chapter" in page and "01_other" not in page
    assert not (tmp_path / "out" / "book" / "01_other.ipynb").exists()
