"""Publish the built book to a ``gh-pages``-style branch with ghp-import.

``lmgeometry publish --remote URL`` (``make publish REMOTE=URL``) commits the HTML book in
``_build/html`` to a branch (default ``gh-pages``) of the project's git repository with
`ghp-import <https://github.com/c-w/ghp-import>`_, the tool Jupyter Book documents for
GitHub Pages, with a ``.nojekyll`` file, and force-pushes that branch to ``URL`` (a remote
name or any URL git accepts, a local bare repository included). It refuses a book that is
not the successful build of the current sources:

- no ``_build/html/index.html``: never built;
- the HTML stamp (written only after every chapter executed and the HTML built, see
  :func:`lmgeometry.report.cache.html_is_current`) does not match the current notebooks,
  configuration, package and renderer versions: a chapter failed, or something changed
  since the build;
- a page loads a file from another host
  (:func:`lmgeometry.report.offline.external_references`): the published book must work
  offline.

The branch's commit message names the project's commit and says when the working tree had
uncommitted changes.
"""

from __future__ import annotations

import datetime as _dt
import subprocess
import sys
from pathlib import Path

from lmgeometry.errors import BookError
from lmgeometry.report.about import project_state
from lmgeometry.report.offline import external_references
from lmgeometry.report.toc import toc_docnames

__all__ = ["ARCHIVE_ENV", "ARCHIVE_PREFIX", "archive_name", "publish",
           "publishable_html", "source_state", "write_archive"]

ARCHIVE_PREFIX = "lmgeometry-book-"

#: Set by ``lmgeometry book`` during the HTML build to the archive's file name (relative to
#: the HTML root), so that each page can link to it (``report/_ext/build_links.py``).
ARCHIVE_ENV = "LMGEOMETRY_BOOK_ARCHIVE"



def source_state(repo: Path) -> str:
    """``"<commit>"`` or ``"<commit> with uncommitted changes"`` of the git checkout ``repo``.

    Raises
    ------
    BookError
        If ``repo`` is not inside a git work tree or has no commit.
    """
    state = project_state(repo)
    if state["commit"] is None:
        raise BookError(f"{repo} is not a git checkout with a commit: ghp-import commits the "
                        "book to a branch of the project's repository; publish from a clone "
                        "of the project")
    return state["commit"][:12] + ("" if state["clean"] else " with uncommitted changes")


def archive_name(book_dir: Path) -> str:
    """``lmgeometry-book-<commit>[-dirty]-<YYYY-MM-DD>.tar.gz``: a build's archive, named by the
    project's commit (12 hex digits; ``-dirty`` with uncommitted changes) and the UTC date."""
    state = project_state(book_dir)
    commit = (state["commit"] or "nocommit")[:12] + ("" if state["clean"] in (True, None)
                                                     else "-dirty")
    return f"{ARCHIVE_PREFIX}{commit}-{_dt.datetime.now(_dt.UTC):%Y-%m-%d}.tar.gz"


def write_archive(book_dir: Path, html_dir: Path, name: str) -> Path:
    """Write a build's archive into ``html_dir`` (beside ``index.html``, so it is published).

    It holds the HTML (``html/``), and the executed notebooks, results files, execution
    manifests and run records (``book/``), under one folder named like the archive, so that a
    reader can diff two builds' numbers. Older archives in ``html_dir`` are removed.

    Returns
    -------
    pathlib.Path
        The archive.
    """
    import tarfile

    for old in html_dir.glob(f"{ARCHIVE_PREFIX}*.tar.gz"):
        old.unlink()
    top = name.removesuffix(".tar.gz")
    target = html_dir / name
    tmp = target.with_name(f".{name}.tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for path in sorted(html_dir.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                tar.add(path, f"{top}/html/{path.relative_to(html_dir).as_posix()}")
        for pattern in ("*.ipynb", "*.results.json", "*.exec.json", "*.run.json"):
            for path in sorted((book_dir / "book").glob(pattern)):
                tar.add(path, f"{top}/book/{path.name}")
    tmp.replace(target)
    return target


def publishable_html(book_dir: Path) -> Path:
    """The HTML folder of ``book_dir`` if it may be published (see the module docstring).

    Raises
    ------
    BookError
        Naming the reason and the command that fixes it.
    """
    from lmgeometry.report.cache import html_inputs, html_is_current

    html_dir = book_dir / "_build" / "html"
    if not (html_dir / "index.html").is_file():
        raise BookError(f"no built book in {html_dir} (no index.html): run `make book` first")
    current = html_inputs(book_dir, toc_docnames(book_dir / "_toc.yml"))
    if not html_is_current(book_dir, html_dir, current):
        raise BookError(f"{html_dir} is not the build of the current chapters (a chapter "
                        "failed, or notebooks, _config.yml, _toc.yml or the package changed "
                        "since it was built): run `make book` and publish after it succeeds")
    external = external_references(html_dir)
    if external:
        raise BookError(f"{len(external)} reference(s) in {html_dir} load from another host "
                        f"(first: {external[0]}): the published book must work offline; "
                        "not published")
    return html_dir


def publish(book_dir: Path, remote: str, branch: str = "gh-pages") -> str:
    """Commit ``book_dir``'s built HTML to ``branch`` with ghp-import and push it to ``remote``.

    Parameters
    ----------
    book_dir : pathlib.Path
        The project (or ``--out``) folder whose ``_build/html`` is published; it must be in a
        git checkout.
    remote : str
        A git remote name or URL (``git push`` accepts either).
    branch : str
        The branch to replace (ghp-import keeps its history and adds one commit).

    Returns
    -------
    str
        The commit message of the published branch.

    Raises
    ------
    BookError
        If the book may not be published (:func:`publishable_html`), ``book_dir`` is not in a
        git checkout, or ghp-import fails (its message is included).
    """
    for what, value in (("remote", remote), ("branch", branch)):
        if not value or value.startswith("-"):
            raise BookError(f"the {what} {value!r} is not a git {what} name or URL (it may not "
                            "be empty or begin with '-', which git would read as an option)")
    book_dir = book_dir.resolve()
    html_dir = publishable_html(book_dir)
    message = f"lmgeometry book built from {source_state(book_dir)}"
    reached = _git(book_dir, "ls-remote", "--heads", "--", remote)
    if reached.returncode != 0:
        raise BookError(f"cannot reach the remote {remote!r}: "
                        f"{_last_line(reached)}; pass a git remote name or URL you can push to")
    ref = f"refs/heads/{branch}"
    before = _git(book_dir, "rev-parse", "--verify", "--quiet", ref).stdout.strip()
    done = subprocess.run(
        [sys.executable, "-m", "ghp_import", "--no-jekyll", "--push", "--force",
         "--remote", remote, "--branch", branch, "--message", message, str(html_dir)],
        cwd=book_dir, capture_output=True, text=True, check=False)
    if done.returncode != 0:  # leave the local branch as it was: no commit for a failed push
        _git(book_dir, "update-ref", ref, before) if before else _git(
            book_dir, "update-ref", "-d", ref)
        raise BookError(f"could not publish {html_dir} to {remote} {branch}: "
                        f"{_last_line(done)}")
    return message


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True,
                          check=False)


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    """The last non-empty line of a command's output (its error, not a traceback)."""
    lines = [x.strip() for x in (done.stderr or done.stdout or "").splitlines() if x.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"
