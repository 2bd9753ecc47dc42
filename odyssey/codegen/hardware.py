"""What a module instantiates, in no backend's language: its operators and its instance count.

The resource model prices what is listed here, and the static resource witness of
``odyssey check`` counts the same things in the printed C++ without reading this file, so the
two can be compared module by module.

* :class:`OperatorUse`: ``count`` copies of one arithmetic operator on one element type in a
  module (an unrolled loop's copies counted; a pipelined loop's iterations share one copy);
* :class:`RegisterUse`: the registers of a PE's pipeline that are not inside an operator core:
  one enable per stage, the operand words read, the floating-point results, and the delay
  lines of values that wait for the other operand of an operator;
* :func:`position_count`: how many positions ``0 <= p < n`` of a row of modules satisfy the
  conditions that pick a variant (first, last, not first, not last), as an expression of
  ``n``, so a module's instances are counted at every tiling from the same rule that placed
  them at one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from odyssey.expr import Expr, const, emax, le, where

OperatorKind = Literal["add", "sub", "mul", "neg"]
OPERATOR_KINDS: tuple[OperatorKind, ...] = ("add", "sub", "mul", "neg")
#: where an operator is built: the tool's default core for its type (``optable.json``), LUT
#: fabric (``BIND_OP ... impl=fabric``; ``fabric.json``'s ``mul_fabric`` rows), or fused into
#: the DSP48E2 of the integer multiply it follows (its post-adder: no DSP, LUT or FF of its own)
OperatorImpl = Literal["auto", "fabric", "fused"]

#: a condition on a position ``p`` in a row of ``n`` modules
PositionCond = Literal["first", "last", "not_first", "not_last"]


@dataclass(frozen=True, slots=True)
class OperatorUse:
    """``count`` hardware copies of operator ``op`` on elements of C type ``dtype`` in one
    instance of a module (an expression of the tiling, e.g. the SIMD lanes)."""

    op: OperatorKind
    dtype: str
    count: Expr
    impl: OperatorImpl = "auto"


#: what a pipeline register holds: ``stage``, one enable bit per pipeline stage; ``word``, an
#: operand word read from a stream; ``result``, a floating-point operator's result (the core's
#: own registers are in its row); ``hold``, a value delayed ``cycles`` cycles
RegisterKind = Literal["stage", "word", "result", "hold"]


@dataclass(frozen=True, slots=True)
class RegisterUse:
    """``count`` registers (or delay lines) of ``bits`` bits in one instance of a module, an
    expression of the tiling; ``cycles`` is the delay of a ``hold``."""

    kind: RegisterKind
    bits: Expr
    count: Expr
    cycles: int = 0


@dataclass(frozen=True, slots=True)
class StreamOut:
    """A FIFO one instance of a module writes: items of ``bits`` bits (at every tiling),
    ``depth`` items deep. Each FIFO has one producer, so a module's ``count`` times its
    outputs are all the FIFOs of that kind."""

    bits: Expr
    depth: int
    #: a deep FIFO's depth at every tiling, stored in memory as ``storage`` binds it (``rule``:
    #: the bank rule; ``bram``) (None: a shift register of ``depth`` items)
    depth_sym: Expr | None = None
    storage: Literal["rule", "bram", "uram"] = "rule"


@dataclass(frozen=True, slots=True)
class ModuleHardware:
    """One module function: ``count`` instances at every tiling, each with ``operators``,
    writing ``outputs``, with the pipeline ``registers`` outside its operator cores."""

    name: str
    count: Expr
    operators: tuple[OperatorUse, ...]
    outputs: tuple[StreamOut, ...]
    registers: tuple[RegisterUse, ...] = ()


def position_count(n: Expr, conds: Iterable[PositionCond]) -> Expr:
    """Positions ``0 <= p < n`` (``n >= 1``) meeting every condition of ``conds``:

    ``n`` (none), ``1`` (first, or last), ``n - 1`` (not first, or not last),
    ``[n = 1]`` (first and last), ``[n >= 2]`` (first and not last, or last and not first),
    ``max(n - 2, 0)`` (neither first nor last), ``0`` (contradictory)."""
    c = set(conds)
    if {"first", "not_first"} <= c or {"last", "not_last"} <= c:
        return const(0)
    first = "first" in c
    last = "last" in c
    not_first = "not_first" in c
    not_last = "not_last" in c
    if first and last:
        return where(le(n, 1), 1, 0)
    if (first and not_last) or (last and not_first):
        return where(le(n, 1), 0, 1)
    if first or last:
        return const(1)
    if not_first and not_last:
        return emax(n - 2, 0)
    if not_first or not_last:
        return n - 1
    return n


__all__ = ["OPERATOR_KINDS", "ModuleHardware", "OperatorKind", "OperatorUse", "PositionCond", "StreamOut",
           "position_count"]
