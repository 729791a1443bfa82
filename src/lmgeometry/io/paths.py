"""Where lmgeometry keeps its caches, and how a path given by a user is read.

:func:`building` writes a cache folder atomically: a temporary sibling renamed into place.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lmgeometry.errors import PathError

__all__ = [
    "building",
    "cache_dir",
    "CACHE_ENV",
    "cache_root",
    "default_cache_root",
    "check_writable",
    "data_mirror",
    "folder_arg",
    "host",
    "is_checkout",
    "MIRROR_ENV",
    "publish",
    "refuse_checkout",
    "remove_stale",
    "TRUST_REMOTE_CODE_ENV",
    "user_path",
    "writable_folder",
]


CACHE_ENV = "LMGEOMETRY_CACHE"

MIRROR_ENV = "LMGEOMETRY_DATA_MIRROR"

#: Set to ``1`` to let models run their own Python code (transformers' ``trust_remote_code``;
#: ``lmgeometry --trust-remote-code``); off otherwise.
TRUST_REMOTE_CODE_ENV = "LMGEOMETRY_TRUST_REMOTE_CODE"


def user_path(path: str | os.PathLike[str]) -> Path:
    """A path as a user means it: ``~`` expanded (the shell leaves ``--out=~/x`` alone)."""
    return Path(path).expanduser()


def cache_root() -> Path:
    """The cache root: ``$LMGEOMETRY_CACHE`` when set, else the user's cache folder.

    The default is ``platformdirs.user_cache_dir("lmgeometry")``: on Linux
    ``$XDG_CACHE_HOME/lmgeometry`` when ``XDG_CACHE_HOME`` is set, else
    ``~/.cache/lmgeometry`` (the folder earlier versions used, so existing caches stay
    valid); ``~/Library/Caches/lmgeometry`` on macOS; the local AppData cache on Windows.

    Raises
    ------
    PathError
        If the root exists and is not a folder.
    """
    value = os.environ.get(CACHE_ENV)
    root = user_path(value) if value else default_cache_root()
    if root.exists() and not root.is_dir():
        raise PathError(f"the cache root {root} is a file, not a folder; point {CACHE_ENV} at "
                        f"a folder (or unset it to use {default_cache_root()})")
    return root


def default_cache_root() -> Path:
    """The cache root when ``$LMGEOMETRY_CACHE`` is not set: the platform's user cache folder
    (``platformdirs.user_cache_dir``; XDG_CACHE_HOME is respected), ``lmgeometry`` in it."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("lmgeometry"))


def cache_dir(*parts: str) -> Path:
    """Return (and create) a folder under the cache root (:func:`cache_root`).

    Raises
    ------
    PathError
        If the root is a file or the folder cannot be created.
    """
    root = cache_root()
    path = root.joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(f"cannot create the cache folder {path}: {exc.strerror or exc}; point "
                        f"{CACHE_ENV} at a writable folder") from exc
    return path


def folder_arg(path: str | os.PathLike[str], what: str) -> Path:
    """A path meant as a folder: ``~`` expanded, and refused if it is a file (nothing is
    created).

    Raises
    ------
    PathError
        If ``path`` is a file.
    """
    folder = user_path(path)
    if folder.exists() and not folder.is_dir():
        raise PathError(f"{what} {folder} is a file, not a folder; pass a folder")
    return folder


def is_checkout(folder: Path) -> bool:
    """Whether ``folder`` is a source checkout: a git work tree, or the book's sources
    (``_toc.yml`` beside ``notebooks/``)."""
    return (folder / ".git").exists() or ((folder / "_toc.yml").is_file()
                                          and (folder / "notebooks").is_dir())


def refuse_checkout(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a folder for generated files, refused when it is a source checkout.

    A generated book or a cache written into a checkout would overwrite its tracked files
    (``_toc.yml``, ``book/``) and lose uncommitted edits.

    Raises
    ------
    PathError
        If ``path`` is a file or a checkout (:func:`is_checkout`).
    """
    folder = folder_arg(path, what)
    if folder.is_dir() and is_checkout(folder.resolve()):
        raise PathError(f"{what} {folder} is a source checkout (it holds "
                        f"{'.git' if (folder / '.git').exists() else '_toc.yml and notebooks/'}"
                        "); writing there would replace its files. Pass a new or empty folder")
    return folder


def check_writable(path: str | os.PathLike[str], what: str) -> Path:
    """Check, creating nothing, that ``path`` is or can become a writable folder.

    The folder itself, or else its nearest existing parent, must be a folder this process
    may write to.

    Raises
    ------
    PathError
        If ``path`` (or that parent) is a file, or is not writable.
    """
    folder = folder_arg(path, what)
    existing = next(p for p in (folder.absolute(), *folder.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise PathError(f"{what} {folder} cannot be created: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PathError(f"{what} {folder} cannot be written ({existing} is not writable); "
                        "pass a folder you can write to")
    return folder


def writable_folder(path: str | os.PathLike[str], what: str) -> Path:
    """Create ``path`` if needed and check that files can be written in it.

    Parameters
    ----------
    path : str or path-like
        The folder (``~`` is expanded).
    what : str
        How the message names it, e.g. ``"the store root (--out)"``.

    Returns
    -------
    pathlib.Path
        The expanded folder.

    Raises
    ------
    PathError
        If ``path`` is a file, a source checkout (:func:`refuse_checkout`: every caller
        writes generated files), cannot be created, or is not writable.
    """
    folder = refuse_checkout(path, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise PathError(f"{what} {folder} cannot be written ({exc.strerror or exc}); pass a "
                        "folder you can write to") from exc
    return folder


def data_mirror() -> Path | None:
    """The local data mirror named by ``$LMGEOMETRY_DATA_MIRROR``, or None."""
    value = os.environ.get(MIRROR_ENV)
    return user_path(value) if value else None


TMP_PREFIX = ".tmp-"


def host() -> str:
    """This machine's name as temporary folders carry it."""
    return re.sub(r"[^A-Za-z0-9]+", "", socket.gethostname())[:32] or "host"


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(parent: Path) -> list[Path]:
    """Remove temporary folders under ``parent`` left by dead processes of this host.

    Temporary folders are named ``.tmp-<name>-<host>-<pid>-<token>``; one whose process is
    still running (or that belongs to another host) is left alone.

    Returns
    -------
    list[pathlib.Path]
        The folders removed.
    """
    here, removed = host(), []
    for tmp in user_path(parent).glob(TMP_PREFIX + "*"):
        parts = tmp.name.rsplit("-", 3)
        if len(parts) == 4 and parts[1] == here and parts[2].isdigit() \
                and not pid_alive(int(parts[2])):
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def publish(tmp: Path, final: Path, marker: str | None = None) -> None:
    """Rename the finished folder ``tmp`` into place as ``final``; when another process
    published ``final`` first (whole: it holds ``marker``, or is a folder when ``marker`` is
    None), discard ``tmp`` and keep theirs."""
    try:
        os.rename(tmp, final)
    except OSError:
        whole = (final / marker).is_file() if marker else final.is_dir()
        if not whole:
            raise
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def building(final: Path, marker: str | None = None) -> Iterator[Path]:
    """A temporary folder that becomes ``final`` when the ``with`` block ends without error.

    The folder is a sibling of ``final`` named ``.tmp-<name>-<host>-<pid>-<token>``; it is
    renamed into place (atomic on one file system) once the block has written everything, and
    removed when the block raises (Ctrl-C included), so a folder with the final name is always
    whole. Temporary folders of dead processes on this host are removed first. When another
    process published ``final`` first, this one's folder is discarded and theirs is kept
    (:func:`publish`; ``marker`` names the file that makes a published folder whole).

    Yields
    ------
    pathlib.Path
        The empty temporary folder to write into.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final.parent)
    tmp = final.with_name(f"{TMP_PREFIX}{final.name}-{host()}-{os.getpid()}-"
                          f"{secrets.token_hex(4)}")
    tmp.mkdir()
    try:
        yield tmp
        publish(tmp, final, marker)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise PathError(f"no space left on the device of {final.parent} while writing "
                            f"{final.name}; free some space, or point {CACHE_ENV} at a "
                            "folder on another disk") from exc
        raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
