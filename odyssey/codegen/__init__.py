"""odyssey.codegen."""
