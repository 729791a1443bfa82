"""Sphinx extensions used by the book (see ``lmgeometry.report.book``)."""
