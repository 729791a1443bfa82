"""Where lmgeometry keeps its caches, and how a path given by a user is read.

:func:`building` writes a cache folder atomically: a temporary sibling renamed into place,
under a lock per folder (:func:`folder_lock`). A temporary folder's name records the host, the
process id and the process's start time, so that a folder left by a dead process is told apart
from one of a live process that got the same id (:func:`stale_builds`).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lmgeometry.errors import PathError, environment_error

__all__ = [
    "building",
    "cache_dir",
    "CACHE_ENV",
    "cache_root",
    "default_cache_root",
    "check_writable",
    "data_mirror",
    "folder_arg",
    "folder_lock",
    "host",
    "is_checkout",
    "MIRROR_ENV",
    "process_start",
    "publish",
    "refuse_checkout",
    "remove_stale",
    "stale_builds",
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


def _absolute_env(name: str) -> Path | None:
    """The folder named by environment variable ``name``, made absolute once.

    A relative value (``LMGEOMETRY_CACHE=relcache``) would name another folder in every
    process that starts elsewhere (the book's kernels run in ``book/``); it is resolved against
    the working directory when first read and written back, absolute, so that this process
    and its children all use the same folder.
    """
    value = os.environ.get(name)
    if not value:
        return None
    path = user_path(value)
    if not path.is_absolute():
        path = Path.cwd() / path
        os.environ[name] = str(path)
    return path


def cache_root() -> Path:
    """The cache root: ``$LMGEOMETRY_CACHE`` when set, else the user's cache folder.

    The default is ``platformdirs.user_cache_dir("lmgeometry")``: on Linux
    ``$XDG_CACHE_HOME/lmgeometry`` when ``XDG_CACHE_HOME`` is set, else
    ``~/.cache/lmgeometry`` (the folder earlier versions used, so existing caches stay
    valid); ``~/Library/Caches/lmgeometry`` on macOS; the local AppData cache on Windows.
    A relative ``$LMGEOMETRY_CACHE`` is made absolute once, against the working directory
    (:func:`_absolute_env`).

    Raises
    ------
    PathError
        If the root exists and is not a folder, or is a symbolic link to nothing.
    """
    root = _absolute_env(CACHE_ENV) or default_cache_root()
    fix = f"point {CACHE_ENV} at a folder (or unset it to use {default_cache_root()})"
    _refuse_dangling(root, "the cache root", fix)
    if root.exists() and not root.is_dir():
        raise PathError(f"the cache root {root} is a file, not a folder; {fix}")
    return root


def _refuse_dangling(path: Path, what: str, fix: str) -> None:
    """Refuse a symbolic link whose target does not exist (``mkdir`` says only "File
    exists"), naming the target."""
    if path.is_symlink() and not path.exists():
        raise PathError(f"{what} {path} is a symbolic link to {os.readlink(path)}, which does "
                        f"not exist; create that folder, or {fix}")


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
    _refuse_dangling(folder, what, "pass another folder")
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
    """The local data mirror named by ``$LMGEOMETRY_DATA_MIRROR`` (made absolute once, as
    the cache root is), or None."""
    return _absolute_env(MIRROR_ENV)


TMP_PREFIX = ".tmp-"

#: The lock file of a folder being built or written: a hidden sibling (:func:`folder_lock`).
LOCK_PREFIX = ".lock-"


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


def process_start(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat``, field
    22), as digits; ``"0"`` where the system does not say (no ``/proc``) or no such process
    runs. With the id it names one process: an id is reused, an id and start time are not."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return "0"
    fields = text.rpartition(")")[2].split()  # the command name may hold spaces
    return fields[19] if len(fields) > 19 and fields[19].isdigit() else "0"


def _owner(tmp: Path) -> tuple[str, int, str] | None:
    """(host, pid, start time) of a temporary folder's name, or None when the name is not
    one :func:`building` gives: ``.tmp-<name>-<host>-<pid>-<start>-<token>``, or
    ``.tmp-<name>-<host>-<pid>-<token>`` as earlier versions named them (start ``"0"``:
    unknown)."""
    if not tmp.name.startswith(TMP_PREFIX):
        return None
    parts = tmp.name.rsplit("-", 4)
    if len(parts) == 5 and parts[2].isdigit() and parts[3].isdigit() \
            and re.fullmatch(r"[0-9a-f]+", parts[4]):
        return parts[1], int(parts[2]), parts[3]
    parts = tmp.name.rsplit("-", 3)
    if len(parts) == 4 and parts[2].isdigit() and re.fullmatch(r"[0-9a-f]+", parts[3]):
        return parts[1], int(parts[2]), "0"
    return None


def stale_builds(parent: Path) -> list[Path]:
    """The temporary folders under ``parent`` left by dead processes of this host.

    A folder's name records its process (:func:`_owner`); the process is dead when no process
    has that id, or the one that has it started at another time (the id was reused). A folder
    of a live process, of another host, a symbolic link or a name :func:`building` does not
    give is left out.
    """
    here, found = host(), []
    for tmp in sorted(user_path(parent).glob(TMP_PREFIX + "*")):
        owner = _owner(tmp)
        if owner is None or owner[0] != here or tmp.is_symlink() or not tmp.is_dir():
            continue
        _, pid, start = owner
        alive = pid_alive(pid) and (start == "0" or process_start(pid) in (start, "0"))
        if not alive:
            found.append(tmp)
    return found


def remove_stale(parent: Path) -> list[Path]:
    """Remove the temporary folders under ``parent`` left by dead processes of this host
    (:func:`stale_builds`).

    Returns
    -------
    list[pathlib.Path]
        The folders removed.
    """
    removed = stale_builds(parent)
    for tmp in removed:
        shutil.rmtree(tmp, ignore_errors=True)
    return removed


@contextmanager
def folder_lock(final: Path, what: str = "the folder") -> Iterator[None]:
    """Hold the lock of the folder ``final`` (built, or written by one process at a time).

    The lock is ``flock`` on the hidden sibling file ``.lock-<name>`` (:mod:`filelock`; the
    kernel releases it when the holder dies, so a killed process never leaves it held), removed
    again by its last holder (filelock takes a lock whose file was removed meanwhile anew). The
    same process may take it again inside (the lock object is one per file). When another
    process holds it, one line says so on stderr and this one waits.
    """
    import sys

    from filelock import FileLock, Timeout

    final = Path(final)
    path = final.parent / f"{LOCK_PREFIX}{final.name}"
    lock = FileLock(path, is_singleton=True)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"lmgeometry: {what} {final} is being written by another process; waiting for "
              "it to finish", file=sys.stderr, flush=True)
        lock.acquire()
    try:
        yield
    finally:
        if lock.lock_counter == 1:  # the outermost hold: nothing left behind
            path.unlink(missing_ok=True)
        lock.release()


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

    The folder is a sibling of ``final`` named ``.tmp-<name>-<host>-<pid>-<start>-<token>``
    (``start``: :func:`process_start`); it is renamed into place (atomic on one file system)
    once the block has written everything, and removed when the block raises (Ctrl-C and, under
    the command line, SIGTERM included), so a folder with the final name is always whole. The
    lock of ``final`` (:func:`folder_lock`) is held meanwhile. Temporary folders of dead
    processes on this host are removed first. When another process published ``final`` first,
    this one's folder is discarded and theirs is kept (:func:`publish`; ``marker`` names the
    file that makes a published folder whole). A write the file system refuses (a full disk, a
    quota, a file-size limit, a read-only folder) becomes one :class:`PathError` or
    :class:`~lmgeometry.errors.LmgeometryError` line naming the file.

    Yields
    ------
    pathlib.Path
        The empty temporary folder to write into.
    """
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise environment_error(exc, str(final.parent), CACHE_ENV) or exc from exc
    with folder_lock(final, "the cache folder"):
        remove_stale(final.parent)
        tmp = final.with_name(f"{TMP_PREFIX}{final.name}-{host()}-{os.getpid()}-"
                              f"{process_start(os.getpid())}-{secrets.token_hex(4)}")
        try:
            tmp.mkdir()
            yield tmp
            publish(tmp, final, marker)
        except OSError as exc:
            fault = environment_error(exc, f"{final.name} in {final.parent}", CACHE_ENV)
            if fault is not None:
                raise fault from exc
            raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
