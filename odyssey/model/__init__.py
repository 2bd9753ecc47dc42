"""odyssey.model."""
