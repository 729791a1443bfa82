"""Where things come from: paths, data files (manifest and loaders), corpora, models."""
