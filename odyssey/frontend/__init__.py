"""odyssey.frontend."""
