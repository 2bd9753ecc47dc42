"""What each kind of module does in the array: its role.

A module's *kind* says which generator built it (``io_l3_in``, ``io_buf_intra``, ...); its
*role* says what it does for the data, which is what the models reason about:

* ``reader``: reads an operand (or the partial sums) from DRAM;
* ``chain``: forwards an operand's tiles along a chain of I/O modules, keeping its own share;
* ``loader``: fills a lowest-level block (the ``_inter`` half of a ping-pong pair);
* ``feeder``: streams a block to its PE in the PE's iteration order (the ``_intra`` half);
* ``pe``: computes;
* ``drain``: moves finished output blocks from the PEs towards DRAM (PE drains and the drain
  I/O levels);
* ``writer``: writes the output to DRAM.
"""

from __future__ import annotations

from typing import Literal, get_args

ModuleKind = Literal["io_l3_in", "io_l3_cin", "io_l2_in", "io_buf_inter", "io_buf_intra", "pe", "pe_drain",
                     "io_drain", "io_l3_out"]
MODULE_KINDS: tuple[ModuleKind, ...] = get_args(ModuleKind)
ModuleRole = Literal["reader", "chain", "loader", "feeder", "pe", "drain", "writer"]

#: the role of every module kind the generator builds
ROLE_OF_KIND: dict[ModuleKind, ModuleRole] = {
    "io_l3_in": "reader",
    "io_l3_cin": "reader",
    "io_l2_in": "chain",
    "io_buf_inter": "loader",
    "io_buf_intra": "feeder",
    "pe": "pe",
    "pe_drain": "drain",
    "io_drain": "drain",
    "io_l3_out": "writer",
}


def module_kind(kind: str) -> ModuleKind:
    """``kind`` as a :data:`ModuleKind` (``KeyError`` for a kind the generator does not build)."""
    for k in MODULE_KINDS:
        if k == kind:
            return k
    raise KeyError(kind)


def role_of(kind: str) -> ModuleRole:
    """The role of a module kind (``KeyError`` for a kind the generator does not build)."""
    return ROLE_OF_KIND[module_kind(kind)]


__all__ = ["MODULE_KINDS", "ROLE_OF_KIND", "ModuleKind", "ModuleRole", "module_kind", "role_of"]
