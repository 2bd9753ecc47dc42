"""odyssey.polyhedral."""
