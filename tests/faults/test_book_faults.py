"""Fault injection on the book pipeline (issue 44): hostile parameters, foreign ``--out``
folders, a partial book, two builds of one folder, Ctrl-C and SIGTERM while a chapter runs.

Each case asserts a clear error (one line, the right exit status) with nothing run, nothing
lost and nothing damaged; or a correct recovery. Chapters are the small fixture chapters of
``tests/fixtures``; subprocesses are waited for without a time budget (a deadlock guard only).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import run_cli
from fixtures.book_project import ROOT, make_project

from lmgeometry.errors import BookError, BookUsageError
from lmgeometry.report.book import (
    build_book,
    check_injection,
    load_book_params,
    parse_overrides,
    write_book_config,
)
from lmgeometry.report.book.folder import BOOK_MARKER, book_lock, claim_out

#: A deadlock guard for subprocesses (never reached by a working run), not a time budget.
GUARD_S = 900


def one_line(code: int, err: list[str], status: int, *fragments: str) -> str:
    assert code == status, err
    assert len(err) == 1 and err[0].startswith("lmgeometry book: error: "), err
    for fragment in fragments:
        assert fragment in err[0], (fragment, err[0])
    return err[0]


# ---------------------------------------------------------------------------------------------
# bad 2: a parameter never runs code


def test_the_binary_payload_of_the_issue_is_refused_and_runs_nothing(tmp_path, capsys):
    """`-p pooling "!!binary <base64 of x"+__import__("os").system(...)+">"`: papermill wrote
    the bytes' text into the parameters cell inside quotes it does not escape, and the shell
    command ran in the kernel. It is refused before anything runs or is created."""
    from papermill.translators import PythonTranslator

    canary = tmp_path / "CANARY"
    code = f'x"+__import__("os").system("touch {canary}")+"'.encode()
    payload = "!!binary " + base64.b64encode(code).decode()
    cell = PythonTranslator.codify({"pooling": code})  # what the old pipeline injected
    assert "__import__" in cell and "system(" in cell  # the hazard is real
    out = tmp_path / "book"
    status, stdout, err = run_cli(capsys, "book", "-p", "pooling", payload, "--chapters", "06",
                                  "--no-html", "--out", out)
    one_line(status, err, 2, "-p pooling", "the YAML tag !!binary", "without tags")
    assert stdout == "" and not out.exists() and not canary.exists()
    with pytest.raises(BookUsageError, match="is not a plain value"):
        check_injection("06_rogue_dimensions", {"pooling": code})  # the second wall


#: Text a kernel would run if it were pasted into the parameters cell unquoted, or quoted by
#: hand: quotes of every kind, newlines, backslashes, a NUL and a character beyond the BMP. The
#: ``{canary}`` is the file the code would create.
HOSTILE_TEXTS = [
    'x"+__import__("os").system("touch {canary}")+"',
    "x'+__import__('os').system('touch {canary}')+'",
    '"""\nimport os; os.system("touch {canary}")\n"""',
    "'''\n__import__('os').system('touch {canary}')\n'''",
    'ends with a backslash \\',
    '\\"; __import__("os").system("touch {canary}"); x = "\\',
    "tab\there, NUL \x00, bell \x07, \u2028 line separator, \U0001f600",
]


def echo_project(folder: Path, params: dict | None = None) -> Path:
    return make_project(folder, {"00_echo": "echo_chapter.py"}, params=params)


def echoed(out: Path) -> dict:
    return json.loads((out / "book" / "00_echo.results.json").read_text())


def test_hostile_text_through_p_arrives_as_the_same_text_and_runs_nothing(tmp_path, capsys,
                                                                          monkeypatch):
    """A `-p` text value with quotes, newlines and code is injected by papermill's own
    escaping: the kernel gets the same text back, and the code in it never runs (the file it
    would create does not exist)."""
    canary = tmp_path / "CANARY"
    texts = [t.format(canary=canary) for t in HOSTILE_TEXTS]
    project = echo_project(tmp_path / "project")
    monkeypatch.chdir(project)
    out = tmp_path / "book"
    status, _, err = run_cli(capsys, "book", "--no-html", "--out", out,
                             "-p", "label", json.dumps(texts[0]),
                             "-p", "labels", json.dumps(texts))
    assert status == 0, err
    assert echoed(out) == {"label": texts[0], "labels": texts}
    assert not canary.exists()


def test_hostile_text_through_book_params_arrives_as_the_same_text(tmp_path):
    canary = tmp_path / "CANARY"
    texts = [t.format(canary=canary) for t in HOSTILE_TEXTS]
    project = echo_project(tmp_path / "project", params={
        "defaults": {"labels": texts}, "chapters": {"00_echo": {"label": texts[2]}}})
    out = tmp_path / "book"
    build_book(root=project, out=out, html=False)
    assert echoed(out) == {"label": texts[2], "labels": texts}
    assert not canary.exists()


def test_the_binary_payload_in_book_params_is_refused_and_runs_nothing(tmp_path, capsys,
                                                                       monkeypatch):
    canary = tmp_path / "CANARY"
    code = f'x"+__import__("os").system("touch {canary}")+"'.encode()
    project = echo_project(tmp_path / "project")
    (project / "book_params.yml").write_text(
        f"defaults:\n  label: !!binary {base64.b64encode(code).decode()}\n")
    monkeypatch.chdir(project)
    out = tmp_path / "book"
    status, _, err = run_cli(capsys, "book", "--no-html", "--out", out)
    one_line(status, err, 1, "book_params.yml: a value has the YAML tag !!binary")
    assert not out.exists() and not canary.exists()
    assert not (project / "book").exists()


def test_papermill_itself_injects_hostile_text_as_data(tmp_path):
    """What the pipeline relies on, checked on papermill directly: a text parameter with
    quotes, newlines and backslashes is written into the parameters cell as a literal of the
    same text (read back by the kernel), and nothing in it runs."""
    import papermill

    from lmgeometry.report.book import read_chapter

    canary = tmp_path / "CANARY"
    texts = [t.format(canary=canary) for t in HOSTILE_TEXTS]
    source = tmp_path / "echo.ipynb"
    nbformat.write(read_chapter(ROOT / "tests" / "fixtures" / "echo_chapter.py"), source)
    results = tmp_path / "echo.results.json"
    papermill.execute_notebook(str(source), str(tmp_path / "done.ipynb"), kernel_name="python3",
                               parameters={"label": texts[5], "labels": texts,
                                           "results_path": str(results)},
                               progress_bar=False, cwd=str(tmp_path))
    assert json.loads(results.read_text()) == {"label": texts[5], "labels": texts}
    assert not canary.exists()
    for text in texts:
        check_injection("00_echo", {"label": text})  # the pipeline's own read-back agrees


ALIAS_BOMB = ('[&a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"],'
              '&b [*a,*a,*a,*a,*a,*a,*a,*a,*a],&c [*b,*b,*b,*b,*b,*b,*b,*b,*b],'
              '&d [*c,*c,*c,*c,*c,*c,*c,*c,*c],&e [*d,*d,*d,*d,*d,*d,*d,*d,*d],'
              '&f [*e,*e,*e,*e,*e,*e,*e,*e,*e],&g [*f,*f,*f,*f,*f,*f,*f,*f,*f],'
              '&h [*g,*g,*g,*g,*g,*g,*g,*g,*g],&i [*h,*h,*h,*h,*h,*h,*h,*h,*h]]')


@pytest.mark.parametrize(("value", "fragment"), [
    (ALIAS_BOMB, "uses a YAML anchor (&a)"),
    ("[*undefined]", "uses a YAML alias"),
    ("!!python/object/apply:os.system ['id']", "the YAML tag !!python/object/apply:os.system"),
    ("!!str 3", "the YAML tag !!str"),
    ("2024-01-01", "reads as a date"),
    (".nan", "which JSON has no number for"),
    ("{1: a}", "mapping key 1, which is not text"),
    ("[" * 30 + "]" * 30, "nested more than 20 levels deep"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ("x" * 20_001, "longer than 20,000 characters"),
    ('"a\\ud83d b"', "holds a lone UTF-16 surrogate"),
], ids=["alias-bomb", "alias", "python-tag", "str-tag", "date", "nan", "int-key",
        "deep", "very-deep", "long", "lone-surrogate"])
def test_hostile_parameter_values_are_refused_in_one_line(value, fragment):
    assert len(ALIAS_BOMB) < 400  # the issue's bomb was 342 bytes
    with pytest.raises(BookUsageError) as info:
        parse_overrides([("models", value)])
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert info.value.exit_code == 2


def test_a_surrogate_pair_as_json_writes_it_is_one_character():
    """JSON writes a character beyond the BMP as two \\u escapes, which YAML reads as two
    lone surrogates (a kernel could not take them): they are made the one character."""
    assert parse_overrides([("label", json.dumps("smile \U0001f600"))]) == {
        "label": "smile \U0001f600"}
    assert parse_overrides([("m", '{"\\ud83d\\ude00": ["\\ud83d\\ude00"]}')]) == {
        "m": {"\U0001f600": ["\U0001f600"]}}


def test_book_params_file_gets_the_same_rules(tmp_path):
    path = tmp_path / "book_params.yml"
    path.write_text("defaults:\n  models: !!binary eA==\n")
    with pytest.raises(BookError, match="the YAML tag !!binary"):
        load_book_params(path)
    path.write_text("defaults:\n  models: &m [a]\nchapters:\n  x:\n    models: *m\n")
    with pytest.raises(BookError, match="YAML anchor"):
        load_book_params(path)
    path.write_text("defaults:\n  models: [a, 'b']\n")
    assert load_book_params(path)["defaults"] == {"models": ["a", "b"]}


@pytest.mark.parametrize(("name", "value", "fragment"), [
    ("models", "[1, 2]", "models must be list[str]"),
    ("n_boot", '"many"', "n_boot is a whole number"),
    ("static_web_layers", "[paper]", "static_web_layers must be Union[str, list[int]]"),
    ("static_web_layers", "{a: 1}", "static_web_layers must be Union[str, list[int]]"),
    ("finetune_settings", "[]", "finetune_settings must be dict[str, dict[str, dict]]"),
], ids=["list-of-numbers", "text-for-int", "union-list", "union-map", "dict"])
def test_values_are_checked_against_the_declared_types_before_any_kernel(tmp_path, capsys, name,
                                                                       value, fragment):
    out = tmp_path / "book"
    status, stdout, err = run_cli(capsys, "book", "-p", name, value, "--no-html", "--out", out)
    one_line(status, err, 2, fragment)
    assert stdout == "" and not out.exists()


def test_plain_values_of_the_right_type_pass(tmp_path):
    from lmgeometry.report.book import parameter_types, read_chapter, resolve_parameters

    nb = read_chapter(ROOT / "notebooks" / "03_context_measures.py")
    types = parameter_types(nb)
    assert types["static_web_layers"] == "Union[str, list[int]]"
    declared = {"static_web_layers": "paper", "models": ["a"], "results_path": "x"}
    config = {"defaults": {}, "chapters": {}}
    for value in ("paper", [1, 2]):
        got = resolve_parameters("03", declared, config, {"static_web_layers": value}, types)
        assert got["static_web_layers"] == value


# ---------------------------------------------------------------------------------------------
# bad 3: --out never replaces a user's files


def user_folder(folder: Path) -> dict[Path, bytes]:
    """A folder with the user's own book files (the issue's case)."""
    files = {folder / "_config.yml": b"title: my own book\n",
             folder / "references.bib": b"@book{mine, title={Mine}}\n",
             folder / "pages" / "api.md": b"# my API notes\n",
             folder / "_toc.yml": b"format: jb-book\nroot: intro\n"}
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def test_out_refuses_a_folder_holding_someone_elses_files(tmp_path, capsys):
    files = user_folder(tmp_path / "mine")
    status, stdout, err = run_cli(capsys, "book", "--out", tmp_path / "mine", "--no-html",
                                  "--chapters", "99")
    one_line(status, err, 2, "holds files that lmgeometry did not write", "_config.yml",
             "Pass a new or empty folder")
    assert {p: p.read_bytes() for p in files} == files
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == [
        "_config.yml", "_toc.yml", "pages", "references.bib"]


@pytest.mark.parametrize("name", ["_config.yml", "references.bib", "pages/api.md", "_toc.yml"])
def test_out_refuses_a_folder_holding_any_one_of_the_books_files(tmp_path, capsys, name):
    """Each of the files a book writes at the top of its folder, alone and the user's, is
    refused in one line naming the fix (a user's _toc.yml gave KeyError: 'environment')."""
    mine = tmp_path / "mine"
    (mine / name).parent.mkdir(parents=True)
    (mine / name).write_bytes(b"format: jb-book\nroot: intro\n")
    status, stdout, err = run_cli(capsys, "book", "--out", mine, "--no-html", "--chapters", "99")
    one_line(status, err, 2, f"holds files that lmgeometry did not write ({name.split('/')[0]})",
             "Pass a new or empty folder")
    assert stdout == "" and (mine / name).read_bytes() == b"format: jb-book\nroot: intro\n"
    assert sorted(p.relative_to(mine).as_posix() for p in mine.rglob("*")) == sorted(
        {name, *(["pages"] if "/" in name else [])})


def test_the_about_page_facts_of_a_book_listing_no_chapter(tmp_path):
    """A _toc.yml beside the notebooks that lists none of them (a user's) leaves the About
    page with no chapter to describe: empty tables, not KeyError: 'environment'."""
    from lmgeometry.report import about

    (tmp_path / "book").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    chapters = about.book_chapters(tmp_path / "book")
    facts = about.build_facts(tmp_path / "book", chapters)
    assert chapters == [] and facts["environment"] == [] and facts["machines"] == []
    assert facts["chapters"].empty and facts["chapters"]["seconds"].dropna().sum() == 0


def test_a_marked_book_never_loses_a_file_edited_since(tmp_path):
    """In a book folder the pipeline wrote, a file it wrote and the user changed since is not
    replaced: one line names it; an unchanged one is written again."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"},
                           pages={"api": ROOT / "pages" / "api.md"})
    out = tmp_path / "out"
    (out / "book").mkdir(parents=True)
    (out / BOOK_MARKER).write_text(json.dumps({"format": 1, "written": {}}))
    (out / "book" / "00_fixture.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    write_book_config(project, out)
    written = json.loads((out / BOOK_MARKER).read_text())["written"]
    assert set(written) == {"_config.yml", "references.bib", "pages/api.md", "_toc.yml"}
    write_book_config(project, out)  # as written: replaced without a word
    (out / "references.bib").write_text("@book{my, title={My edit}}\n")
    with pytest.raises(BookUsageError, match="references.bib was not written by lmgeometry, "
                                             "or was changed since"):
        write_book_config(project, out)
    assert (out / "references.bib").read_text() == "@book{my, title={My edit}}\n"


def test_a_book_of_an_earlier_version_is_taken_over(tmp_path):
    from lmgeometry.report.book.folder import TOC_HEADER

    out = tmp_path / "old"
    out.mkdir()
    (out / "_toc.yml").write_text(f"{TOC_HEADER}: ...\nformat: jb-book\nroot: book/00_x\n")
    (out / "_config.yml").write_text("title: x\n")
    claim_out(out)
    written = json.loads((out / BOOK_MARKER).read_text())["written"]
    assert set(written) == {"_toc.yml", "_config.yml"}


def test_a_partial_book_does_not_execute_its_root_page_again(tmp_path, capsys):
    """`--out X --chapters 00`: the root page's link to a chapter X lacks becomes text after
    its execution; the chapter's manifest records the notebook so changed, so the next build
    skips it (the issue: it was executed on every build). The link comes back (and the chapter
    is still skipped) once the other chapter is in the book."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py",
                                                  "01_other": "slider_chapter.py"},
                           params={"defaults": {"n_points": 20, "n_steps": 2}})
    source = project / "notebooks" / "00_fixture.py"
    source.write_text(source.read_text() + "\n# %% [markdown]\n# See [the other "
                      "chapter](01_other.ipynb).\n")
    out = tmp_path / "out"
    build_book(root=project, out=out, chapters=["00"], html=False)
    notebook = out / "book" / "00_fixture.ipynb"
    assert "See the other chapter." in notebook.read_text()
    capsys.readouterr()
    build_book(root=project, out=out, chapters=["00"], html=False)
    assert "[book] skipping 00_fixture: unchanged" in capsys.readouterr().out
    build_book(root=project, out=out, chapters=["01"], html=False)
    nb = nbformat.read(notebook, as_version=4)
    assert "See [the other chapter](01_other.ipynb)." in nb.cells[-1].source  # linked again
    capsys.readouterr()
    build_book(root=project, out=out, chapters=["00", "01"], html=False)
    out_text = capsys.readouterr().out
    assert "skipping 00_fixture: unchanged" in out_text
    assert "skipping 01_other: unchanged" in out_text


# ---------------------------------------------------------------------------------------------
# a lock per book folder; Ctrl-C and SIGTERM stop a running chapter


def _default_sigint() -> None:
    """In the child before it starts: Ctrl-C as a user's terminal delivers it. A pytest-xdist
    worker ignores SIGINT, and a child inherits the ignored signal, so under ``make test`` the
    build would never see the test's Ctrl-C (it did under -n 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _book_process(project: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lmgeometry.cli", "book", "--no-html",
                             *args], cwd=project, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint)


def test_two_builds_of_one_folder_take_turns(tmp_path):
    """While a build holds the book folder, a second one says it waits, then builds (its
    chapter is current by then, or it executes it: either way neither deletes the other's
    trace mid-run)."""
    project = make_project(tmp_path / "project", {"00_fixture": "slider_chapter.py"},
                           params={"defaults": {"n_points": 20, "n_steps": 2}})
    out = claim_out(tmp_path / "out")  # as the first build does before it takes the lock
    with book_lock(out):
        second = _book_process(project, "--out", str(out))
        line = second.stderr.readline()
        while "[book]" in line or not line.strip():  # the pipeline's own lines come first
            line = second.stderr.readline()
        assert "is being written by another process; waiting" in line
    _, err = second.communicate(timeout=GUARD_S)
    assert second.returncode == 0, err
    assert (out / "book" / "00_fixture.ipynb").is_file()


@pytest.mark.parametrize(("signum", "status", "said"), [
    (signal.SIGTERM, 143, "lmgeometry book: terminated (SIGTERM)"),
    (signal.SIGINT, 130, "lmgeometry book: interrupted"),
], ids=["sigterm", "ctrl-c"])
def test_a_signal_stops_a_running_chapter_and_its_kernel(tmp_path, signum, status, said):
    """The issue: Ctrl-C was ignored until the running chapter ended (chapter 7 runs about 30
    minutes). The chapter here would run an hour; the build stops, the kernel is gone, the
    cache folder it was writing is removed, and no notebook or manifest is written."""
    project = make_project(tmp_path / "project", {"00_sleeping": "sleeping_chapter.py"})
    started, cache_root = tmp_path / "started.txt", tmp_path / "cache"
    build = _book_process(project, "-p", "started_file", json.dumps(str(started)),
                          "-p", "cache_folder", json.dumps(str(cache_root)))
    while not started.exists():  # the fixture writes it whole, by a rename
        assert build.poll() is None, build.communicate()
        time.sleep(0.05)
    kernel = int(started.read_text())
    assert any(p.name.startswith(".tmp-entry-") for p in cache_root.iterdir())
    build.send_signal(signum)
    _, err = build.communicate(timeout=GUARD_S)
    lines = [line for line in err.splitlines() if line.strip()]
    assert build.returncode == status, err
    assert lines[-1].startswith(said) and not any("Traceback" in line for line in lines)
    with pytest.raises(ProcessLookupError):
        os.kill(kernel, 0)
    assert [p.name for p in cache_root.iterdir()] == []  # the half-written folder went
    assert not (project / "book" / "00_sleeping.ipynb").exists()
    assert not (project / "book" / "00_sleeping.exec.json").exists()
