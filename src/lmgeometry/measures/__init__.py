"""Pure measures: arrays in, numbers out (no file or model I/O, no prose, no plotting)."""
