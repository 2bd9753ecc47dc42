"""odyssey.platforms."""
