"""odyssey.platforms: FPGA resource tables and per-dtype operator costs, as data.

The numbers live in the JSON files next to this module (one per platform, plus
``optable.json``); :mod:`odyssey.platforms.loader` validates and loads them.
"""

from __future__ import annotations

from odyssey.platforms.loader import (
    DEFAULT_PLATFORM,
    DEFAULT_USABLE_FRACTION,
    RESOURCES,
    Assumption,
    BramGeometry,
    MemoryInterface,
    OpCost,
    OpCosts,
    Platform,
    Resource,
    ResourceCounts,
    UramGeometry,
    UsableFractions,
    assumption,
    at_clock,
    available,
    default_op_costs,
    design_platform,
    list_platforms,
    load_op_costs,
    load_platform,
    mac_cost,
    op_cost,
    reload_name,
    with_kernel_resources,
)

__all__ = [
    "Assumption",
    "assumption",
    "at_clock",
    "DEFAULT_PLATFORM",
    "DEFAULT_USABLE_FRACTION",
    "design_platform",
    "reload_name",
    "RESOURCES",
    "BramGeometry",
    "MemoryInterface",
    "OpCost",
    "OpCosts",
    "Platform",
    "Resource",
    "ResourceCounts",
    "UramGeometry",
    "UsableFractions",
    "available",
    "default_op_costs",
    "list_platforms",
    "load_op_costs",
    "load_platform",
    "mac_cost",
    "op_cost",
    "with_kernel_resources",
]
