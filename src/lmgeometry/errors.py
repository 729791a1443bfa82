"""The package's own errors: each message names the problem and how to fix it.

Every error that a user's input or environment can cause derives from :class:`LmgeometryError`,
so the command line can print its message in one line instead of a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AlignmentError",
    "BookError",
    "ChapterExecutionError",
    "ChecksumMismatch",
    "DataError",
    "DataFileMissing",
    "DataUnavailable",
    "LmgeometryError",
    "ModelLoadError",
    "SentenceTooLongError",
]


class LmgeometryError(Exception):
    """Base class of lmgeometry's errors; the message says what went wrong and what to do."""


class ModelLoadError(LmgeometryError, RuntimeError):
    """A model spec could not be resolved or loaded; the message says why and what to do."""


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
