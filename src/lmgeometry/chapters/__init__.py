"""One module per chapter of the book: the measures run over the chapter's activation stores."""
