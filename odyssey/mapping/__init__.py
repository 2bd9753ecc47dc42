"""odyssey.mapping: space-time mappings, pruned loop orderings and the design space."""

from __future__ import annotations

from odyssey.mapping.space import Design, KernelSpace, Operand, TuningParam, analyse

__all__ = ["Design", "KernelSpace", "Operand", "TuningParam", "analyse"]
