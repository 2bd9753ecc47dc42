"""What a task of :mod:`odyssey.tune.engine` carries about a kernel, and the models it
rebuilds from it on a worker.

A :class:`KernelSource` is the kernel's C text, the name it was read under, its ``-D``
overrides and the largest array dimension of its design space: a few kilobytes that
travel to a worker instead of the analysed space and the models (which are large and
rebuilt quickly). :func:`kernel_space` parses and analyses it once per process (a cache
of recent kernels), so a worker that runs 30 designs of one layer shape analyses the
shape once; :func:`design_model` builds a design's model from it, as the serial commands
do (``build_model(..., variant="accurate")``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from odyssey.frontend.cparse import parse_kernel
from odyssey.frontend.source import read_source
from odyssey.mapping.space import KernelSpace, analyse
from odyssey.model import build_model
from odyssey.model.design_model import DesignModel
from odyssey.platforms import Platform

#: kernel spaces kept per process (a network has up to ~20 distinct layer shapes)
SPACE_CACHE = 64
#: models kept per process by :func:`cached_model` (the tuner benchmark's 18 MM designs fit)
MODEL_CACHE = 32


@dataclass(frozen=True, slots=True)
class KernelSource:
    """A kernel as it travels to a worker: ``name`` (its path on the submitting machine:
    messages, and the directory of its quoted ``#include`` files), ``text``, the ``-D``
    overrides and the largest array dimension of the design space."""

    name: str
    text: str
    defines: tuple[tuple[str, str], ...]
    max_dim: int

    @classmethod
    def read(cls, path: str | Path, defines: Mapping[str, str] | None, *,
             max_dim: int) -> KernelSource:
        p = Path(path)
        return cls(str(p), read_source(p), tuple(sorted((defines or {}).items())), max_dim)

    @classmethod
    def of(cls, space: KernelSpace) -> KernelSource:
        """The source an analysed space was read from: its scop's file, with every size
        parameter at its value, and the largest array dimension among its designs."""
        defines = {name: str(value) for name, value in space.scop.params}
        return cls.read(space.scop.file, defines,
                        max_dim=max((len(d.space_loops) for d in space.designs), default=1))


@lru_cache(maxsize=SPACE_CACHE)
def kernel_space(src: KernelSource) -> KernelSpace:
    """The design space of ``src``'s first scop (as ``load_scop`` + ``analyse``), cached."""
    scops = parse_kernel(src.name, src.text, dict(src.defines))
    return analyse(scops[0], max_dim=src.max_dim)


def design_model(src: KernelSource, design_id: str, platform: Platform, *,
                 variant: str = "accurate") -> DesignModel:
    """The model (``variant``, default ``accurate``) of design ``design_id`` of ``src`` on
    ``platform``."""
    ks = kernel_space(src)
    return build_model(ks, ks.design(design_id), platform=platform, variant=variant)


@lru_cache(maxsize=MODEL_CACHE)
def cached_model(src: KernelSource, design_id: str, platform: Platform, *,
                 variant: str = "accurate") -> DesignModel:
    """:func:`design_model`, kept for the next tasks of the same design on this worker: the
    tuner benchmark runs every method and seed on each design's one model. (`odyssey network`
    keeps its models by its own rule: :class:`odyssey.network.worker.ModelShelf`.)"""
    return design_model(src, design_id, platform, variant=variant)


def task_seed(seed: int, *key: object) -> int:
    """The seed of one task of a run with seed ``seed``: a stable hash (BLAKE2b, not Python's
    ``hash``, which changes between processes) of the run's seed and the task's ``key``
    (e.g. the kernel, the layer's sizes, the design id and the phase), in ``[0, 2**63)``.
    A task's search then depends on what it is, never on which other tasks the run has:
    adding or removing a layer leaves the other layers' results as they were."""
    text = repr((int(seed), *key)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") >> 1
