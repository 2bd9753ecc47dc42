"""Models of designs straight from the design space: generate a descriptor, build the model.

The descriptor is symbolic in the tuning parameters (loop trips, packing lanes, the PE's
II, instance counts), so one descriptor, generated at any tiling that instantiates every
kind of module, yields the model of every tiling of the design.
"""

from __future__ import annotations

from collections.abc import Mapping

from odyssey.codegen.generate import generate_descriptor
from odyssey.codegen.geometry import Layout
from odyssey.errors import ModelError
from odyssey.mapping.space import Design, KernelSpace
from odyssey.model.build import model_from_descriptor
from odyssey.model.design_model import DesignModel
from odyssey.platforms import Platform
from odyssey.polyhedral.affine import count_points


def representative_tiling(design: Design) -> dict[str, int]:
    """A small legal tiling with at least two PEs along every space loop that allows it, so
    the generated descriptor contains the non-boundary variant of every module."""
    out: dict[str, int] = {}
    for p in design.params:
        if p.level == "array_part":
            out[p.name] = min(p.upper, 4)
        else:
            out[p.name] = 1
    return out


def build_model(space: KernelSpace, design: Design, *, platform: Platform, variant: str = "accurate",
                layouts: Mapping[str, Layout] | None = None) -> DesignModel:
    """The model of every tiling of ``design``; ``layouts`` as in
    :func:`~odyssey.codegen.generate.generate` (every array serialized by default)."""
    desc = generate_descriptor(space, design, representative_tiling(design), platform=platform, layouts=layouts)
    ops = float(len(desc["compute"]["ops_per_lane"]) * domain_points(space))
    return model_from_descriptor(desc, platform, variant=variant, ops=ops)


#: most points isl may scan to count a domain that is not a box (about 4 s on this machine:
#: isl enumerates every dimension but the last, some 1 microsecond a point)
MAX_SCANNED_POINTS = 2**22


def domain_points(space: KernelSpace) -> int:
    """Iterations of the kernel's statement: the product of the extents for a rectangular
    band, else isl's count of the domain (:func:`~odyssey.polyhedral.affine.count_points`:
    loops bound to no other loop count as factors). isl counts by scanning, so the count is
    refused (:class:`ModelError`) when it would scan more than ``MAX_SCANNED_POINTS`` points:
    it would take hours to years (SYRK at N = 8.8e11 never returned)."""
    main = space.scop.statement(space.statement)
    if all(b.rectangular for b in space.band) and not main.guards:
        n = 1
        for b in space.band:
            n *= b.extent
        return n
    domain = space.scop.domain(main)
    points = count_points(domain, max_scanned=MAX_SCANNED_POINTS)
    if points is None:
        raise ModelError(
            f"{main.loc}: the iteration domain of `{main.text}` is not a box (its loop "
            f"bounds depend on other loops) and counting its points, the operations behind "
            f"GOP/s, means scanning more than {MAX_SCANNED_POINTS:,} points of the loops "
            "bound to each other (about 4 s); give them smaller sizes")
    return points


