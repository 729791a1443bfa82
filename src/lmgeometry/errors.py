"""The package's own errors: each message names the problem and how to fix it.

Every error that a user's input or environment can cause derives from :class:`LmgeometryError`,
so the command line can print its message in one line instead of a traceback. Each class says
with :attr:`LmgeometryError.exit_code` how the command ends: 2 for a usage error (an argument
or setting that cannot work; :class:`UsageError` and its subclasses), 1 for a run that failed.
"""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AlignmentError",
    "BookError",
    "BookUsageError",
    "ChapterExecutionError",
    "ChecksumMismatch",
    "CorpusError",
    "DataError",
    "DataFileMissing",
    "DataUnavailable",
    "environment_error",
    "LmgeometryError",
    "ModelLoadError",
    "ModelSpecError",
    "one_line",
    "OptionalDependencyError",
    "PathError",
    "SentenceTooLongError",
    "StoreError",
    "UnsealedEntryError",
    "UsageError",
]


def one_line(message: object) -> str:
    """A message on one line: its non-blank lines stripped and joined by spaces."""
    return " ".join(line.strip() for line in str(message).splitlines() if line.strip())


class LmgeometryError(Exception):
    """Base class of lmgeometry's errors; the message says what went wrong and what to do.

    Attributes
    ----------
    exit_code : int
        The ``lmgeometry`` command's exit status for this error: 1 (the run failed).
    """

    exit_code: int = 1


class UsageError(LmgeometryError, ValueError):
    """An argument or setting that cannot work (exit status 2); nothing was done."""

    exit_code = 2


class PathError(UsageError):
    """A path that cannot serve: a file where a folder is needed, a folder that cannot be
    written (``--out``, ``root=``, ``$LMGEOMETRY_CACHE``)."""


class OptionalDependencyError(LmgeometryError, ImportError):
    """A feature needs a library or program that is not installed (an optional extra, such as
    kaleido for image files); the message names the command that installs it."""


class CorpusError(UsageError):
    """A corpus cannot be built from the name, size or sentences given."""


class ModelLoadError(LmgeometryError, RuntimeError):
    """A model spec could not be resolved or loaded; the message says why and what to do."""


class ModelSpecError(ModelLoadError, UsageError):
    """The spec names no usable model: an unknown alias or hub id, a missing folder, a file,
    or a folder without config.json, weights or tokenizer files (exit status 2)."""

    exit_code = 2


class StoreError(LmgeometryError, RuntimeError):
    """A store entry is damaged or incomplete; the message names the file and the fix.

    Attributes
    ----------
    path : pathlib.Path or None
        The entry's folder.
    file : str or None
        The damaged file's name (``layer_03.npy``, ``words.parquet``, ``meta.json``).
    problem : str
        What is wrong with it, in a few words ("is missing", "has 10 bytes instead of 20").
    """

    def __init__(self, message: str, *, path: Path | None = None,
                 file: str | None = None, problem: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.file = file
        self.problem = problem


class UnsealedEntryError(StoreError):
    """A store entry written before ``meta.json`` carried a checksum (``meta.sha256``): its
    metadata cannot be verified until ``lmgeometry store upgrade`` has checked and sealed it."""


class DataError(LmgeometryError, RuntimeError):
    """A data file could not be provided; the message says which file and how to fix it."""


class DataFileMissing(DataError, FileNotFoundError):
    """The file is not where the configured data mirror should hold it."""


class ChecksumMismatch(DataError, ValueError):
    """The file exists but its sha256 differs from the manifest's.

    Attributes
    ----------
    expected, actual : str or None
        The manifest's sha256 and the file's (None where pooch reported a download mismatch).
    """

    def __init__(self, message: str, *, expected: str | None = None,
                 actual: str | None = None) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class DataUnavailable(DataError):
    """No mirror holds the file and it could not be downloaded (no URL or no network)."""


class AlignmentError(LmgeometryError, ValueError):
    """A word of the word table has no token piece."""


class SentenceTooLongError(LmgeometryError, ValueError):
    """A sentence has more tokens than the model's window."""


class BookError(LmgeometryError, RuntimeError):
    """A problem that stops the book build; its message says what to change."""


class BookUsageError(BookError, UsageError):
    """A book option that cannot work (``-p``, ``--chapters``, ``--out``; exit status 2)."""

    exit_code = 2


class ChapterExecutionError(BookError):
    """A chapter raised while papermill executed it.

    Attributes
    ----------
    chapter : str
        Chapter name, e.g. ``"01_geometry"``.
    cell_index : int
        Index of the failing cell in the executed notebook.
    source : str
        Source of the failing cell.
    ename, evalue : str
        Exception name and value.
    traceback : str
        The kernel's traceback, ANSI colours removed.
    notebook : pathlib.Path
        The partially executed notebook, kept for inspection.
    """

    def __init__(
        self,
        chapter: str,
        cell_index: int,
        source: str,
        ename: str,
        evalue: str,
        traceback: str,
        notebook: Path,
    ) -> None:
        self.chapter = chapter
        self.cell_index = cell_index
        self.source = source
        self.ename = ename
        self.evalue = evalue
        self.traceback = traceback
        self.notebook = notebook
        rule = "-" * 78
        super().__init__(
            f"chapter {chapter} failed in cell {cell_index}: {ename}: {evalue}\n"
            f"{rule}\nfailing cell:\n{source.rstrip()}\n{rule}\ntraceback:\n"
            f"{traceback.rstrip()}\n{rule}\n"
            f"the partially executed notebook is {notebook}"
        )


#: What a file system refusing a write means, what the user can do about it, and where else
#: the file could go.
_WRITE_FAULTS = {
    errno.ENOSPC: ("no space left on the device", "free some space", "on another disk"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space within your quota",
                   "on another disk"),
    errno.EFBIG: ("the file is larger than this process may write (file-size limit)",
                  "raise the limit (`ulimit -f unlimited`)", "on a disk without the limit"),
    errno.EACCES: ("permission denied", "make it writable", "you can write to"),
    errno.EPERM: ("operation not permitted", "make it writable", "you can write to"),
    errno.EROFS: ("the file system is read-only", "use a writable file system",
                  "you can write to"),
}


def environment_error(exc: OSError, where: str = "",
                      setting: str = "LMGEOMETRY_CACHE") -> PathError | None:
    """The one-line error for a write the file system refused, or None for another error.

    Parameters
    ----------
    exc : OSError
        The error (``errno`` ENOSPC, EDQUOT, EFBIG, EACCES, EPERM or EROFS).
    where : str
        What was being written, when the error names no file.
    setting : str
        The setting (or option) that points the writes elsewhere.

    Returns
    -------
    PathError or None
        The error (exit status 2: the fix is a setting, a limit or another folder).
    """
    fault = _WRITE_FAULTS.get(exc.errno or 0)
    if fault is None:
        return None
    problem, fix, elsewhere = fault
    target = exc.filename or where
    message = f"cannot write {target}: {problem}" if target else f"cannot write: {problem}"
    return PathError(f"{message}; {fix}, or point {setting} at a folder {elsewhere}")
