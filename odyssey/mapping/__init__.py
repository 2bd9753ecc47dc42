"""odyssey.mapping."""
