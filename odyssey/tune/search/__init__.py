"""Odyssey's own searches: the evolutionary search and its operators, the bound-guided search, the Odyssey tuner that combines them with the MP seed, random search."""
