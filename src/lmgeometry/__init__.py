"""lmgeometry: measure how language models lay out their embedding spaces.

The path a reader follows: ``models.load_model`` (model id -> model) ->
``corpus`` (sentences -> word table) -> ``store.activations`` (hidden states of every word
at every layer, cached) -> ``measures`` / ``isotropy`` / ``senses`` (numbers) -> chapters.
"""

__version__ = "0.1.0"
