"""odyssey.tune."""
