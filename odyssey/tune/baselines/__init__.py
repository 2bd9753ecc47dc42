"""The baseline tuners the Odyssey paper compares against (docs/tuners.md) and their shared helpers."""
