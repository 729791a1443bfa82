"""Everything the reader sees: plots, figure display, results files, prose helpers, the book."""
