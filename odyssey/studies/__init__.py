"""odyssey.studies."""
