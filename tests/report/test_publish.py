"""Publishing the built book to a gh-pages branch of a local bare repository (ghp-import)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fixtures.book_project import bare_remote, copy_project, git, git_project, make_project

from lmgeometry.cli import main
from lmgeometry.errors import BookError
from lmgeometry.report.book import build_book, external_references
from lmgeometry.report.publish import publish, source_state

pytestmark = pytest.mark.slow


@pytest.fixture
def project(built_fixture_project: Path, tmp_path: Path) -> Path:
    """The fixture book project (a git checkout, sources committed) with its book built: a
    copy of the session's built project, so a test's own ``build_book`` is a rebuild that
    finds nothing changed (the chapter is executed and rendered once per test process, not
    once per test)."""
    return copy_project(built_fixture_project, tmp_path / "project")


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_remote(tmp_path / "site.git")


def _branch_files(remote: Path, branch: str = "gh-pages") -> list[str]:
    return git(remote, "ls-tree", "-r", "--name-only", branch).splitlines()


def test_published_branch_holds_the_offline_book(project: Path, remote: Path,
                                                 tmp_path: Path) -> None:
    build_book(root=project)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "executed book")
    head = git(project, "rev-parse", "--short=12", "HEAD")
    message = publish(project, str(remote))
    assert message == f"lmgeometry book built from {head}"
    files = _branch_files(remote)
    assert {"index.html", ".nojekyll", "book/00_fixture.html",
            "_static/plotly.min.js", "_static/lmgeometry_figures.js"} <= set(files)
    assert any(f.startswith("lmgeometry-book-") and f.endswith(".tar.gz") for f in files)
    assert git(remote, "log", "-1", "--format=%s", "gh-pages") == message
    # what a reader gets from the branch loads nothing from another host
    site = tmp_path / "site"
    subprocess.run(["git", "clone", "-q", "-b", "gh-pages", str(remote), str(site)], check=True)
    assert (site / "index.html").is_file() and external_references(site) == []
    # publishing again adds a commit on top (ghp-import keeps the branch's history)
    publish(project, str(remote))
    assert git(remote, "rev-list", "--count", "gh-pages") == "2"


def test_uncommitted_changes_are_said_in_the_commit_message(project: Path,
                                                            remote: Path) -> None:
    build_book(root=project)
    (project / "notebooks" / "00_fixture.py").write_text(
        (project / "notebooks" / "00_fixture.py").read_text() + "\n")
    assert source_state(project).endswith(" with uncommitted changes")
    assert publish(project, str(remote)).endswith(" with uncommitted changes")


def test_refuses_an_unbuilt_stale_or_online_book(tmp_path: Path, remote: Path) -> None:
    project = git_project(tmp_path / "project")
    with pytest.raises(BookError, match=r"no built book .* run `make book` first"):
        publish(project, str(remote))
    build_book(root=project)
    notebook = project / "book" / "00_fixture.ipynb"
    original = notebook.read_text()
    notebook.write_text(original.replace("Test fixture", "Test fixture, edited"))
    with pytest.raises(BookError, match="not the build of the current chapters"):
        publish(project, str(remote))
    notebook.write_text(original)
    page = project / "_build" / "html" / "book" / "00_fixture.html"
    page.write_text(page.read_text().replace(
        "</head>", '<script src="https://cdn.example.org/x.js"></script></head>'))
    with pytest.raises(BookError, match="load from another host .*cdn.example.org"):
        publish(project, str(remote))
    assert git(remote, "branch", "--list") == ""  # nothing was pushed


def test_outside_a_git_checkout_the_error_says_so(tmp_path: Path, remote: Path) -> None:
    folder = make_project(tmp_path / "loose", {"00_fixture": "slider_chapter.py"},
                          params={"defaults": {"n_points": 20, "n_steps": 2}})
    build_book(root=folder)
    with pytest.raises(BookError, match="not a git checkout"):
        publish(folder, str(remote))


def test_cli_publishes_an_out_folder(project: Path, remote: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    build_book(root=project)
    assert main(["publish", "--remote", str(remote), "--branch", "site",
                 "--out", str(project)]) == 0
    assert f"to {remote} site: lmgeometry book built from" in capsys.readouterr().out
    assert "index.html" in _branch_files(remote, "site")
    assert main(["publish", "--remote", str(remote), "--out", str(project / "nowhere")]) == 1
    assert "no built book" in capsys.readouterr().err


def test_a_failed_publish_leaves_no_commit_and_options_cannot_be_injected(
        project: Path, remote: Path, tmp_path: Path) -> None:
    build_book(root=project)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "executed book")
    with pytest.raises(BookError, match="not a git remote name or URL"):
        publish(project, "--upload-pack=touch /tmp/x")
    with pytest.raises(BookError, match="cannot reach the remote 'nowhere'"):
        publish(project, "nowhere")
    missing = tmp_path / "missing.git"
    with pytest.raises(BookError, match="cannot reach the remote"):
        publish(project, str(missing))
    branches = git(project, "branch", "--list", "gh-pages")
    assert branches == ""  # no local commit waits to go out with the next publish
    publish(project, str(remote))
    assert git(remote, "rev-list", "--count", "gh-pages") == "1"


def test_a_rejected_push_rolls_the_local_branch_back(project: Path, remote: Path) -> None:
    build_book(root=project)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "executed book")
    publish(project, str(remote))
    before = git(project, "rev-parse", "gh-pages")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho refused by the remote >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(BookError, match="could not publish"):
        publish(project, str(remote))
    assert git(project, "rev-parse", "gh-pages") == before  # the failed commit is gone
