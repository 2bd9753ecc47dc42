"""One systolic array for every layer of a network: hardware fixed once, tiles per layer.

What is hardware and what can change per layer (``docs/shared_array.md``). A shared
array is a design (dataflow and loop ordering) with an *allocation tiling* ``H``:

* hardware: for every space loop ``s``, ``T_s1`` and ``T_s2`` (so ``T_s1/T_s2`` PEs along
  ``s`` and ``T_s2`` latency-hiding iterations or SIMD lanes per PE); for every time loop
  ``t``, its level-two factor ``T_t2`` (latency hiding, the accumulator's size and the
  PE's II; or the SIMD lanes) and its array-partitioning factor ``T_t1`` as a *capacity*:
  the I/O and accumulator buffers are sized for it. The resources of the array are the
  model's at ``H`` (sizes: each loop's largest extent over the layers);
* per layer (run time): ``T_t1`` of every time loop, a multiple of ``T_t2`` up to the
  capacity (the tile counts follow), as long as the layer's DSP and BRAM at that tiling
  stay within the array's. A layer extent below the array's (``E_s < T_s1``, or
  ``E_t < T_t2``) is zero-padded: the layer runs on the padded problem, and its throughput
  counts its real operations only.

The generator emits tile trip counts as constants today; the definition assumes they
become kernel arguments with the buffers sized by the capacities (as in AutoSA's
runtime-tiled designs). The packing width of each I/O word is taken from the run-time
tile, an approximation of a data path built for the widest word.

:func:`shared_array` searches ``H`` per design: candidates are every layer's own optimum
(exact, :func:`~odyssey.tune.exact.optimum.find_optimum` in a time limit) and their neighbours
(evolutionary: PE counts, level-two factors and capacities mutated), each scored by the
network's throughput with every layer at its best run-time tiling (enumerated over the
tile-count boundaries); the winner's layers are then solved exactly (branch and bound on
the layer's model restricted to the array). Network throughput: ``sum_l ops_l / sum_l
L_l`` with every layer counted as often as it occurs.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from odyssey.errors import StudyError
from odyssey.frontend import load_scop
from odyssey.mapping.space import Design, KernelSpace, TuningParam, analyse
from odyssey.model import DesignModel, ParamSpec, build_model
from odyssey.network.networks import Network, unique_shapes
from odyssey.platforms import Platform, with_kernel_resources
from odyssey.polyhedral.affine import Affine
from odyssey.tune.exact.best import best_tiling
from odyssey.tune.exact.optimum import find_optimum

#: designs searched with ``designs=None``: every dataflow with the ordering the paper fixes
DEFAULT_SUFFIX = "-ohw.ipq"
#: run-time tilings evaluated per (array, layer) in the search
_RUNTIME_POINTS = 3000


@dataclass(frozen=True, slots=True)
class SharedLayer:
    """One unique layer shape on the shared array (``count`` layers have it)."""

    label: str
    sizes: tuple[tuple[str, int], ...]
    count: int
    ops: int
    padded: tuple[tuple[str, int], ...]  # the problem it runs as
    tiling: tuple[tuple[str, int], ...] | None  # run time; None: does not fit the array
    latency_cycles: float
    own_latency_cycles: float  # the layer's own optimum, same design, own hardware
    status: str  # how the run-time tiling was found
    own_status: str  # "optimal", or "time_limit..." (the best found, see best_tiling)


@dataclass(frozen=True)
class SharedArray:
    """The best shared array of one design, and its layers."""

    design: str
    dataflow: str
    hardware: tuple[tuple[str, int], ...]
    dsp: float
    bram18k: float
    layers: tuple[SharedLayer, ...]
    clock_mhz: float
    configs_evaluated: int
    seconds: float

    @property
    def latency_cycles(self) -> float:
        return sum(lay.count * lay.latency_cycles for lay in self.layers)

    @property
    def own_latency_cycles(self) -> float:
        return sum(lay.count * lay.own_latency_cycles for lay in self.layers)

    @property
    def ops(self) -> int:
        return sum(lay.count * lay.ops for lay in self.layers)

    def gops(self, cycles: float) -> float:
        return self.ops / (cycles / (self.clock_mhz * 1e6)) / 1e9 if cycles > 0 else 0.0

    @property
    def throughput_gops(self) -> float:
        return self.gops(self.latency_cycles)

    @property
    def own_throughput_gops(self) -> float:
        """The network with every layer at its own optimum of this design."""
        return self.gops(self.own_latency_cycles)


@dataclass
class _Shape:
    label: str
    sizes: dict[str, int]
    count: int
    ops: int
    own: float = math.inf  # own optimum latency
    own_tiling: dict[str, int] | None = None
    own_status: str = ""


class _Design:
    """Everything the search needs for one design: loops, models per padded size, scoring."""

    def __init__(self, kernel: Path, design_id: str, shapes: list[_Shape], platform: Platform) -> None:
        self.kernel, self.platform, self.shapes = kernel, platform, shapes
        self.spaces: dict[tuple[tuple[str, int], ...], tuple[KernelSpace, Design, DesignModel]] = {}
        ref = {k: max(s.sizes[k] for s in shapes) for k in shapes[0].sizes}
        self.ref_space, self.design, self.ref = self.model(ref, design_id)
        self.id = self.design.id
        self.size_of = {b.name: _size_param(b.extent_expr) for b in self.design.band}
        self.param = {p.name: p for p in self.ref.params}
        self.evaluated = 0

    def model(self, sizes: Mapping[str, int], design_id: str | None = None, *,
              own: bool = False) -> tuple[KernelSpace, Design, DesignModel]:
        """The design at ``sizes``, with the array's SIMD loop unless ``own`` (the design
        space picks the reduction loop of largest extent, which can differ from layer to
        layer: a 7x7 kernel on 3 channels vectorises ``p``; the hardware vectorises one loop)."""
        key = (*sorted(sizes.items()), ("own", int(own)))
        if key not in self.spaces:
            ks = analyse(load_scop(self.kernel, {k: str(v) for k, v in sizes.items()}), max_dim=3)
            d = ks.design(design_id or self.id)
            if not own and design_id is None and d.simd_loop != self.design.simd_loop:
                d = _with_simd(d, self.design)
            self.spaces[key] = (ks, d, build_model(ks, d, platform=self.platform))
        return self.spaces[key]

    def loops(self) -> list[tuple[str, bool, str | None]]:
        """(loop, is space loop, level-two parameter or None) per band loop."""
        out = []
        for b in self.design.band:
            two = f"T_{b.name}2"
            out.append((b.name, b.name in self.design.space_loops, two if two in self.param else None))
        return out

    def padded(self, hw: Mapping[str, int], sizes: Mapping[str, int]) -> dict[str, int]:
        out = dict(sizes)
        for loop, space, two in self.loops():
            name = self.size_of[loop]
            need = hw[f"T_{loop}1"] if space else (hw[two] if two else 1)
            out[name] = max(out[name], need)
        return out

    def hardware(self, hw: Mapping[str, int]) -> tuple[bool, float, float]:
        ev = self.ref.evaluate({k: [v] for k, v in hw.items()})
        return bool(ev.feasible[0]), float(ev.dsp[0]), float(ev.bram18k[0])

    def runtime_columns(self, hw: Mapping[str, int], sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
        """Candidate run-time tilings: fixed hardware factors, time-loop tiles at every
        tile-count boundary up to the capacity (thinned to about ``_RUNTIME_POINTS``)."""
        choices: dict[str, np.ndarray] = {}
        for loop, space, two in self.loops():
            one, ext = f"T_{loop}1", sizes[self.size_of[loop]]
            if space:
                choices[one] = np.array([hw[one]])
            else:
                step = hw[two] if two else 1
                top = min(hw[one], ext - ext % step)
                n = np.arange(1, -(-ext // step) + 1)
                cand = np.unique(np.ceil(ext / (n * step)).astype(np.int64) * step)
                choices[one] = np.unique(np.append(cand[cand <= top], top))
            if two:
                choices[two] = np.array([hw[two]])
        while math.prod(len(v) for v in choices.values()) > _RUNTIME_POINTS:
            k = max(choices, key=lambda c: len(choices[c]))
            v = choices[k]
            choices[k] = np.unique(np.append(v[::2], v[-1]))
        grids = np.meshgrid(*choices.values(), indexing="ij")
        return {k: g.ravel() for k, g in zip(choices, grids, strict=True)}

    def layer_best(self, hw: Mapping[str, int], dsp: float, bram: float, shape: _Shape
                   ) -> tuple[float, dict[str, int] | None, dict[str, int]]:
        sizes = self.padded(hw, shape.sizes)
        _, _, m = self.model(sizes)
        cols = self.runtime_columns(hw, sizes)
        ev = m.evaluate(cols)
        ok = ev.legal & (ev.dsp <= dsp) & (ev.bram18k <= bram) & (ev.uram <= m.budget["uram"])
        lat = np.where(ok, ev.latency_cycles, np.inf)
        k = int(np.argmin(lat))
        if not math.isfinite(lat[k]):
            return math.inf, None, sizes
        return float(lat[k]), {n: int(v[k]) for n, v in cols.items()}, sizes

    def score(self, hw: Mapping[str, int]) -> float:
        """Network latency (cycles) on the array ``hw`` (inf: infeasible or a layer does not fit)."""
        self.evaluated += 1
        feasible, dsp, bram = self.hardware(hw)
        if not feasible:
            return math.inf
        total = 0.0
        for s in self.shapes:
            lat, _, _ = self.layer_best(hw, dsp, bram, s)
            total += s.count * lat
            if not math.isfinite(total):
                return math.inf
        return total

    def repair(self, hw: dict[str, int]) -> dict[str, int]:
        """Clip to the parameter ranges and restore divisibility (a child divides its parent)."""
        for loop, _space, two in self.loops():
            one = f"T_{loop}1"
            p1 = self.param[one]
            hw[one] = int(min(max(hw[one], p1.lower), p1.upper))
            if two:
                p2 = self.param[two]
                hw[two] = int(min(max(hw[two], p2.lower), p2.upper, hw[one]))
                hw[one] = max(hw[two], hw[one] - hw[one] % hw[two])
        return hw

    def mutate(self, hw: Mapping[str, int], rng: np.random.Generator) -> dict[str, int]:
        """A neighbour of ``hw``: one loop's level-two factor (a layer's own, or halved or
        doubled; the PE count kept), PE count (+-1, +-2, halved or doubled) or capacity (a
        layer's own, the largest extent, halved or doubled)."""
        out = dict(hw)
        loops = self.loops()
        loop, space, two = loops[int(rng.integers(len(loops)))]
        one = f"T_{loop}1"
        donor = self.shapes[int(rng.integers(len(self.shapes)))].own_tiling or out
        halve_double = float(rng.choice([0.5, 2.0]))
        if two is not None and rng.random() < 0.4:
            pes = hw[one] // hw[two]
            out[two] = donor[two] if rng.random() < 0.5 else max(1, int(hw[two] * halve_double))
            if space:
                out[one] = pes * out[two]
        elif space:
            pes = hw[one] // (hw[two] if two else 1)
            pes = pes + int(rng.choice([-2, -1, 1, 2])) if rng.random() < 0.5 else int(pes * halve_double)
            out[one] = max(1, pes) * (out[two] if two else 1)
        else:
            r = rng.random()
            out[one] = (donor[one] if r < 0.4 else self.param[one].upper if r < 0.6
                        else max(1, int(hw[one] * halve_double)))
        return self.repair(out)


def _with_simd(d: Design, ref: Design) -> Design:
    """``d`` vectorising ``ref``'s SIMD loop instead of its own: the SIMD parameter moves
    to that loop, with at most as many lanes as ``ref`` allows (``ref`` is the design at the
    largest sizes, so its bound is the platform's lane limit or a larger extent)."""
    assert ref.simd_loop is not None and ref.simd_loop in d.simd_candidates
    old = next(p for p in ref.params if p.level == "simd")
    ext = d.loop(ref.simd_loop).extent
    simd = TuningParam(old.name, old.loop, "simd", 1, min(ext, old.upper), old.divides)
    params = tuple(p for p in d.params if p.level != "simd") + (simd,)
    return dataclasses.replace(d, simd_loop=ref.simd_loop, params=params)


def _key(hw: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(hw.items()))


def _size_param(e: Affine | None) -> str:
    """The size parameter a loop's extent is (``o < O``: ``O``), for padding."""
    if e is None or len(e.coeffs) != 1 or e.coeffs[0][1] != 1 or e.const != 0:
        raise StudyError(f"shared array: the loop extent {e!r} is not a single size parameter")
    return e.coeffs[0][0]


def _restricted(base: DesignModel, hw: Mapping[str, int], sizes: Mapping[str, int],
                d: _Design, dsp: float, bram: float) -> DesignModel:
    """The layer's model with the hardware factors fixed, time tiles up to the capacities,
    and the array's own DSP and BRAM as the budget."""
    params = []
    for p in base.params:
        loop = p.loop
        space = loop in d.design.space_loops
        if p.level != "array_part" or space:
            params.append(ParamSpec(p.name, loop, p.level, hw[p.name], hw[p.name], p.divides))
        else:
            params.append(ParamSpec(p.name, loop, p.level, p.lower, min(p.upper, hw[p.name]), p.divides))
    plat = with_kernel_resources(base.platform, dsp=int(dsp), bram18k=int(bram))
    frac = dataclasses.replace(plat.usable_fraction, dsp=1.0, bram18k=1.0)
    return DesignModel(base.design_id, tuple(params), base.exprs,
                       dataclasses.replace(plat, usable_fraction=frac), ops=base.ops)


#: seconds between two progress messages of the array search
_SAY_EVERY_S = 5.0


def search_design(kernel: Path, design_id: str, shapes: list[_Shape], platform: Platform, *,
                  layer_time_s: float, configs: int, seed: int,
                  say: Callable[[str], None] = lambda _m: None) -> SharedArray:
    """The best shared array of ``design_id`` for ``shapes`` (see the module docstring)."""
    start = time.perf_counter()
    d = _Design(kernel, design_id, [dataclasses.replace(s) for s in shapes], platform)
    for k, s in enumerate(d.shapes, 1):
        say(f"{d.id}: per-layer optimum {k}/{len(d.shapes)} ({s.label})")
        _, own_design, m = d.model(s.sizes, own=True)
        s.own_tiling, s.own, s.own_status, _ = best_tiling(m, time_limit_s=layer_time_s, seed=seed)
        if own_design.simd_loop != d.design.simd_loop:  # not a candidate array as it is
            s.own_tiling = None
    say(f"{d.id}: per-layer optima done; searching {configs} arrays")
    rng = np.random.default_rng(seed)
    pool: dict[tuple[tuple[str, int], ...], float] = {}
    for s in d.shapes:
        if s.own_tiling is not None:
            hw = d.repair(dict(s.own_tiling))
            pool[_key(hw)] = d.score(hw)
    told = time.perf_counter()
    while d.evaluated < configs and pool:
        if time.perf_counter() - told >= _SAY_EVERY_S:
            told = time.perf_counter()
            say(f"{d.id}: {d.evaluated}/{configs} arrays, best {min(pool.values()):,.0f} cycles")
        ranked = sorted(pool, key=lambda k: pool[k])[:8]
        parent = dict(ranked[int(rng.integers(len(ranked)))])
        child = d.mutate(parent, rng)
        key = _key(child)
        if key not in pool:
            pool[key] = d.score(child)
        else:
            d.evaluated += 1  # a repeat still spends the budget, so the loop ends
    if not pool or not math.isfinite(min(pool.values())):
        raise StudyError(f"shared array: no array of design {d.id} runs every layer within the budget")
    best_key, best_latency = min(pool.items(), key=lambda kv: kv[1])
    hw = dict(best_key)
    _, dsp, bram = d.hardware(hw)
    layers = []
    say(f"{d.id}: best array found; each layer's tiling on it")
    for s in d.shapes:
        lat, tiling, sizes = d.layer_best(hw, dsp, bram, s)
        _, _, m = d.model(sizes)
        exact = find_optimum(_restricted(m, hw, sizes, d, dsp, bram), time_limit_s=layer_time_s, seed=seed)
        status = "enumerated"
        if exact.tiling is not None and exact.latency_cycles <= lat:
            lat, tiling, status = exact.latency_cycles, dict(exact.tiling), exact.status
        # the array's tiling is one of the layer's own when nothing is padded: an own
        # optimum cut short by its time limit can be slower
        own = min(s.own, lat) if sizes == s.sizes else s.own
        layers.append(SharedLayer(s.label, tuple(s.sizes.items()), s.count, s.ops, tuple(sizes.items()),
                                  tuple(tiling.items()) if tiling else None, lat, own, status,
                                  s.own_status))
    say(f"{d.id}: shared array {best_latency:,.0f} cycles after {d.evaluated} arrays")
    return SharedArray(d.id, d.design.dataflow, tuple(hw.items()), dsp, bram, tuple(layers),
                       platform.clock_mhz, d.evaluated, time.perf_counter() - start)


def network_shapes(network: Network) -> list[_Shape]:
    """The conv and pointwise shapes of ``network`` (depthwise and matmul layers need other
    kernels)."""
    out = []
    for g in unique_shapes(network):
        if g.first.kernel != "cnn":
            continue
        count = sum(x.batch for x in g.layers)  # problems of this shape (a batch: several)
        label = g.first.name if count == 1 else f"{g.first.name} (x{count})"
        out.append(_Shape(label, dict(g.first.dims), count, g.first.unit_ops))
    if not out:
        raise StudyError(f"network {network.name} has no conv or pointwise layer for a shared array")
    return out


def shared_array(network: Network, *, kernel: str | Path, platform: Platform,
                 designs: Sequence[str] | None = None, layer_time_s: float = 2.0,
                 configs: int = 60, seed: int = 0,
                 say: Callable[[str], None] = lambda _m: None) -> list[SharedArray]:
    """The best shared array of every design in ``designs`` (default: the dataflows with
    ordering ``<[o,h,w],[i,p,q]>``) for ``network``'s conv and pointwise layers, best first."""
    out = list(iter_shared_arrays(network, kernel=kernel, platform=platform, designs=designs,
                                  layer_time_s=layer_time_s, configs=configs, seed=seed, say=say))
    return sorted(out, key=lambda r: -r.throughput_gops)


def iter_shared_arrays(network: Network, *, kernel: str | Path, platform: Platform,
                       designs: Sequence[str] | None = None, layer_time_s: float = 2.0,
                       configs: int = 60, seed: int = 0,
                       say: Callable[[str], None] = lambda _m: None) -> Iterator[SharedArray]:
    """:func:`shared_array`'s arrays one design at a time, in the order of ``designs``: a
    caller interrupted (Ctrl-C) between two keeps the designs finished."""
    shapes = network_shapes(network)
    if designs is None:
        ks = analyse(load_scop(Path(kernel), {k: str(v) for k, v in shapes[0].sizes.items()}))
        designs = [d.id for d in ks.designs if d.id.endswith(DEFAULT_SUFFIX)]
    for n, did in enumerate(designs, 1):
        say(f"design {n}/{len(designs)} {did}")
        yield search_design(Path(kernel), did, shapes, platform, layer_time_s=layer_time_s,
                            configs=configs, seed=seed, say=say)
