"""Hidden states: word/piece alignment, batched extraction and the on-disk activation store."""
