"""lmgeometry: measure how language models lay out their embedding spaces.

The tree is the path a reader follows, ``model id -> activations -> measure -> figure``:

* :mod:`lmgeometry.io` -- data files, corpora (sentences -> word table), models
  (``io.models.load_model``);
* :mod:`lmgeometry.activations` -- hidden states of every word at every layer, cached on disk
  (``activations.store.activations``);
* :mod:`lmgeometry.measures` -- pure measures: arrays in, numbers out;
* :mod:`lmgeometry.chapters` -- one module per chapter of the book;
* :mod:`lmgeometry.report` -- plots, figures, results files and the book pipeline.
"""

__version__ = "0.1.0"
