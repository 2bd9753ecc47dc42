"""DRAM channels: which channel each array's ports use, and each port's share of it.

A platform's kernel memory (:attr:`~odyssey.platforms.Platform.kernel_memory`: DDR4 on the
U200/U250/VU9P, HBM2 on the U280) has ``channels`` independent channels (DDR4 channels, HBM
pseudo-channels) of ``R`` bytes per kernel cycle each (``GB/s * 1000 / clock_mhz``: 64 for
DDR4-2400 at 300 MHz, 47.9 for an HBM2 pseudo-channel).

**Assignment rule.** The operands are ranked by the elements of their array at the problem
size (largest first; ties keep the operand order: inputs, then the output) and dealt
round-robin over the channels: the ``k``-th gets channel ``k mod channels``. Every port of an
operand uses its channel (the output's partial-sum port reads the buffer the output port
writes, so both sit in the same bank). So MM and CNN (three arrays) get a DDR channel per array
on the U250 and one HBM pseudo-channel per array on the U280; a fourth array on the U280's two
DDR channels would share. The rank uses the problem sizes only, not the tiling, so one
descriptor's assignment holds for every tiling the model evaluates (an array's traffic, which
depends on the tiling, would not).

**Sharing rule.** Ports on one channel split its ``R`` bytes per cycle in proportion to the
bytes each moves in a busy pass (``b_p``: a pass that takes every branch, i.e. one that
reads partial sums back, where the output's two ports are both at work): port ``p`` gets ``R * b_p / B`` with ``B`` the channel's
bytes per pass, so a port moving ``W_p``-byte words is paced at ``W_p * B / (R * b_p)``
cycles per word, and every port of a channel that runs at its pace takes ``B / R`` for its
bytes: the channel's traffic over its rate bounds the pass. A port alone on its channel is
paced at ``W_p / R``. The model (:mod:`odyssey.model.latency`) charges each pipelined DRAM
loop ``max(II, pace)`` per iteration; the timed simulation paces each port's accesses by the
same figure (``include/odyssey_timed.h``). The split is static: a port that is slower than
its share (issue-bound) does not hand the rest to the others, and in a pass that does not read
partial sums back the output port keeps the share of a busy pass (pessimistic there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey.expr import Expr, const, emax, from_json, substitute

if TYPE_CHECKING:  # the schema imports the array IR, which imports this module
    from odyssey.codegen.descriptor_schema import StmtJson


def assign_channels(sizes: Sequence[tuple[str, int]], channels: int) -> dict[str, int]:
    """The channel of each operand: ``sizes`` lists ``(operand, elements of its array)`` in
    operand order; ranked by elements (largest first, stable), dealt round-robin over
    ``channels`` (module docstring)."""
    ranked = sorted(range(len(sizes)), key=lambda i: -sizes[i][1])
    return {sizes[i][0]: rank % channels for rank, i in enumerate(ranked)}


def bundle_name(channel: int) -> str:
    """The m_axi bundle of ``channel``: one AXI master per channel (``gmem0``, ``gmem1``, ...)."""
    return f"gmem{channel}"


@dataclass(frozen=True, slots=True)
class PortTraffic:
    """A DRAM port, its channel, its word in bytes and its accesses per pass (expressions)."""

    name: str
    channel: int
    word_bytes: Expr
    accesses: Expr


def port_paces(ports: Sequence[PortTraffic], bytes_per_cycle: float) -> dict[str, Expr]:
    """Cycles per word of each port at its share of its channel (the sharing rule of the
    module docstring): ``W_p / R`` alone on the channel, else ``B / (R * a_p)`` with ``B``
    the channel's bytes per pass and ``a_p`` the port's accesses per pass (at least 1)."""
    by_channel: dict[int, list[PortTraffic]] = {}
    for p in ports:
        by_channel.setdefault(p.channel, []).append(p)
    out: dict[str, Expr] = {}
    for group in by_channel.values():
        if len(group) == 1:
            out[group[0].name] = group[0].word_bytes / const(bytes_per_cycle)
            continue
        total: Expr = const(0)
        for p in group:
            total = total + p.accesses * p.word_bytes
        for p in group:
            out[p.name] = total / (const(bytes_per_cycle) * emax(p.accesses, 1))
    return out


def dram_counts(stmts: Sequence[StmtJson], subst: Mapping[str, Expr], times: Expr, *,
                busy: bool = False) -> list[tuple[str, Expr]]:
    """``(port, executions)`` of every DRAM access in ``stmts`` run ``times`` times: over the
    loops around it, weighted by the frequency of the branches it sits in (``busy``: every
    branch that records a frequency taken)."""
    out: list[tuple[str, Expr]] = []
    for s in stmts:
        t = s.get("type")
        if t in ("dram_read", "dram_write"):
            out.append((s["port"], times))
        elif t == "for":
            out.extend(dram_counts(s["body"], subst, times * substitute(from_json(s["trip"]), subst), busy=busy))
        elif t == "if":
            recorded = s.get("freq")
            freq = substitute(from_json(recorded), subst) if recorded is not None and not busy else const(1)
            out.extend(dram_counts(s["then"], subst, times * freq, busy=busy))
            out.extend(dram_counts(s.get("else", []), subst, times * (const(1) - freq), busy=busy))
        elif t == "block":
            out.extend(dram_counts(s["body"], subst, times, busy=busy))
    return out


def accesses_per_pass(modules: Sequence[tuple[Sequence[str], Sequence[StmtJson]]],
                      subst: Mapping[str, Expr]) -> dict[str, Expr]:
    """Accesses of each port in a busy pass (every branch with a frequency taken), summed over
    the modules ``(template, ast)`` (the head instance of each: position parameters 0, as the
    model takes them)."""
    out: dict[str, Expr] = {}
    for template, ast in modules:
        local = dict(subst)
        for tp in template:
            local[tp.split()[-1]] = const(0)
        for port, count in dram_counts(ast, local, const(1), busy=True):
            out[port] = out.get(port, const(0)) + count
    return out


__all__ = ["PortTraffic", "accesses_per_pass", "assign_channels", "bundle_name", "dram_counts", "port_paces"]
