"""FPGA platforms and operator costs, loaded from JSON data files.

A platform file (``u250.json`` is the reference) gives the device totals
(DSP48E2 slices, BRAM18K blocks, URAM288 blocks, LUTs, flip-flops), the usable
fraction of each (default 0.7: designs above ~70 % rarely route at 300 MHz),
the clock, the off-chip memories (channels, GB/s per channel, burst model, each with its
``source``), and the on-chip memory block geometry. The first memory listed is the one the
generated kernels use: their arrays are assigned to its channels
(:mod:`odyssey.codegen.channels`). A channel's bytes per kernel cycle are derived,
``GB/s * 1000 / clock_mhz`` (U250 DDR4-2400: 19.2 GB/s at 300 MHz = 64 bytes/cycle; U280
HBM2 pseudo-channel: 14.375 GB/s = 47.9 bytes/cycle), never entered by hand. Files are checked against a declarative schema
before any object is built; errors name the file, the key and the value.

The resource budget a model may use is ``available(p, r) = total(r) *
usable_fraction(r)``.

Operator costs (``optable.json``) are per dtype and operator: DSP48E2 slices
per SIMD lane and pipeline latency in cycles at 300 MHz on UltraScale+:

=======  ==============  ==============  ==============
dtype    mul (DSP, lat)  add (DSP, lat)  sub (DSP, lat)
=======  ==============  ==============  ==============
fp32     3, 4            2, 8            2, 8
fp64     11, 6           3, 8            3, 8
int32    3, 3            0, 1            0, 1
int16    1, 2            0, 1            0, 1
int8     1, 1            0, 1            0, 1
=======  ==============  ==============  ==============

so an fp32 multiply-accumulate costs 5 DSPs. int8 is charged a whole DSP
(packing two int8 multiplies per DSP48E2 is possible but not modelled). The
file's ``source`` field says where each number comes from.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from odyssey.errors import ModelError, PlatformError
from odyssey.platforms._schema import Int, ListOf, MapOf, Num, Obj, Str, load_json

Resource = Literal["dsp", "bram18k", "uram", "lut", "ff"]
RESOURCES: tuple[str, ...] = get_args(Resource)
DEFAULT_USABLE_FRACTION = 0.7
_OPTABLE = "optable"

_NOTES = {"notes": Str()}
_MEMORY_SPEC = Obj(
    required={
        "kind": Str(),
        "channels": Int(),
        "bandwidth_gbps_per_channel": Num(),
        "sp_tag": Str(),
        "port_width_bits": Int(),
        "max_burst_beats": Int(),
        "burst_overhead_cycles": Int(0),
        "read_latency_cycles": Int(0),
        "source": Str(),
    },
    optional=_NOTES,
)
#: the kernel clocks odyssey takes, MHz (an FPGA kernel runs at some 100-800 MHz; a clock of
#: 1e308 MHz made latencies in seconds underflow and the Pareto plot fail)
MAX_CLOCK_MHZ = 10_000.0

_PLATFORM_SPEC = Obj(
    required={
        "name": Str(),
        "part": Str(),
        "source": Str(),
        "clock_mhz": Num(0.0, MAX_CLOCK_MHZ),
        "resources": Obj(required={r: Int(0 if r == "uram" else 1) for r in RESOURCES}),
        "memories": ListOf(_MEMORY_SPEC),
        "memory_blocks": Obj(
            required={
                "bram18k": Obj(
                    required={
                        "bits": Int(),
                        "shapes": ListOf(Obj(required={"width": Int(), "depth": Int()})),
                    },
                    optional=_NOTES,
                ),
                "uram": Obj(
                    required={"bits": Int(), "width": Int(), "depth": Int()}, optional=_NOTES
                ),
            }
        ),
    },
    optional={
        "description": Str(),
        "usable_fraction": Obj(optional={r: Num(0.0, 1.0) for r in RESOURCES}),
        # the part of the device a kernel may use (an Alveo shell takes the rest), with its source
        "kernel_region": Obj(required={"resources": Obj(required={r: Int(0 if r == "uram" else 1)
                                                                  for r in RESOURCES}),
                                       "source": Str()}, optional=_NOTES),
        **_NOTES,
    },
)
_OPTABLE_SPEC = Obj(
    required={
        "source": Str(),
        "clock_mhz": Num(),
        "ops": MapOf(MapOf(Obj(required={"dsp": Int(0), "latency": Int(0)}, optional=_NOTES))),
    },
    optional={"aliases": MapOf(Str()), **_NOTES},
)


@dataclass(frozen=True, slots=True)
class ResourceCounts:
    """Device totals: DSP48E2 slices, BRAM18K blocks, URAM288 blocks, LUTs, flip-flops."""

    dsp: int
    bram18k: int
    uram: int
    lut: int
    ff: int


@dataclass(frozen=True, slots=True)
class UsableFractions:
    """Fraction of each resource a design may use, in (0, 1]."""

    dsp: float = DEFAULT_USABLE_FRACTION
    bram18k: float = DEFAULT_USABLE_FRACTION
    uram: float = DEFAULT_USABLE_FRACTION
    lut: float = DEFAULT_USABLE_FRACTION
    ff: float = DEFAULT_USABLE_FRACTION


@dataclass(frozen=True, slots=True)
class MemoryInterface:
    """Off-chip memory of one kind: ``channels`` independent channels (DDR4 channels, HBM
    pseudo-channels) of ``bandwidth_gbps_per_channel`` each, named ``sp_tag[k]`` in Vitis
    connectivity (``DDR[0]``, ``HBM[3]``).

    A burst of ``b <= max_burst_beats`` beats of ``port_width_bits`` takes about
    ``burst_overhead_cycles + b`` kernel cycles; the first data of a read arrives
    after ``read_latency_cycles``. ``source`` says where the figures come from.
    """

    kind: str
    channels: int
    bandwidth_gbps_per_channel: float
    sp_tag: str
    port_width_bits: int
    max_burst_beats: int
    burst_overhead_cycles: int
    read_latency_cycles: int
    source: str = ""

    @property
    def total_bandwidth_gbps(self) -> float:
        """Peak bandwidth over all channels in GB/s: ``channels * bandwidth_gbps_per_channel``."""
        return self.channels * self.bandwidth_gbps_per_channel

    def bytes_per_cycle(self, clock_mhz: float) -> float:
        """Bytes one channel moves per kernel cycle at ``clock_mhz``:
        ``GB/s * 1e9 / (clock_mhz * 1e6)`` (19.2 GB/s at 300 MHz: 64.0)."""
        return self.bandwidth_gbps_per_channel * 1000.0 / clock_mhz

    def connectivity(self, channel: int) -> str:
        """The Vitis ``--connectivity.sp`` memory of ``channel``: ``DDR[1]``, ``HBM[5]``."""
        return f"{self.sp_tag}[{channel}]"

    @property
    def bytes_per_beat(self) -> int:
        """Bytes moved per port per beat: ``port_width_bits / 8``."""
        return self.port_width_bits // 8


@dataclass(frozen=True, slots=True)
class BramGeometry:
    """RAMB18 block: ``bits`` of storage, usable as ``(width, depth)`` shapes."""

    bits: int
    shapes: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class UramGeometry:
    """URAM288 block: ``width`` x ``depth`` bits."""

    bits: int
    width: int
    depth: int


@dataclass(frozen=True, slots=True)
class Platform:
    """One FPGA target, built from a validated platform file (``origin``)."""

    name: str
    part: str
    description: str
    source: str
    clock_mhz: float
    resources: ResourceCounts
    usable_fraction: UsableFractions
    memories: tuple[MemoryInterface, ...]
    bram18k: BramGeometry
    uram: UramGeometry
    origin: str
    region: ResourceCounts | None = None  # what a kernel may use (None: the whole device)
    region_source: str = ""

    @property
    def kernel_resources(self) -> ResourceCounts:
        """The resources a kernel may use: the shell's kernel region, or the whole device."""
        return self.region or self.resources

    @property
    def kernel_memory(self) -> MemoryInterface:
        """The memory the generated kernels use: the first one the platform file lists
        (HBM2 on the U280, DDR4 elsewhere)."""
        return self.memories[0]

    def memory(self, kind: str) -> MemoryInterface:
        """The memory of ``kind`` (``HBM2``); PlatformError naming the kinds there are."""
        for m in self.memories:
            if m.kind == kind:
                return m
        raise PlatformError(f"{self.origin}: no memory of kind {kind!r}; its memories are "
                            f"{', '.join(m.kind for m in self.memories)}")


def _bundled_names() -> list[str]:
    files = resources.files("odyssey.platforms").iterdir()
    return sorted(f.name[:-5] for f in files
                  if f.name.endswith(".json") and f.name not in ("optable.json", "assumptions.json", "fabric.json"))


def list_platforms() -> list[str]:
    """Names of the bundled platforms (``u200``, ``u250``, ``u280``, ``vu9p``)."""
    return _bundled_names()


def _read(name_or_path: str, what: str, bundled: list[str]) -> tuple[str, str]:
    """(text, label) of a bundled data file (by name) or of a user file (by path)."""
    key = name_or_path.lower()
    if key in bundled and not Path(name_or_path).suffix:
        entry = resources.files("odyssey.platforms") / f"{key}.json"
        return entry.read_text(encoding="utf-8"), f"odyssey/platforms/{key}.json"
    path = Path(name_or_path)
    if not path.is_file():
        raise PlatformError(
            f"unknown {what} {name_or_path!r}: not a bundled name ({', '.join(bundled)}) "
            f"and no such file; pass a bundled name or the path to a JSON file shaped like "
            f"odyssey/platforms/u250.json"
        )
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as exc:
        raise PlatformError(f"{path}: cannot read the file ({exc.strerror})") from exc


def _check_fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise PlatformError(
            f"usable_fraction must be a number in (0, 1], got {value!r}; e.g. 0.7 keeps 30 % "
            "of every resource free for routing"
        )
    return float(value)


def load_platform(name_or_path: str, *, usable_fraction: float | None = None) -> Platform:
    """Load a bundled platform by name (``u250``) or a user platform file by path.

    ``usable_fraction`` (in (0, 1]) overrides the file's fractions for every
    resource. Raises PlatformError naming the file, key and value at fault.
    """
    override = None if usable_fraction is None else _check_fraction(usable_fraction)
    text, label = _read(name_or_path, "platform", _bundled_names())
    d = _PLATFORM_SPEC.check(load_json(text, label), "", label)
    blocks = d["memory_blocks"]
    shapes = [(s["width"], s["depth"]) for s in blocks["bram18k"]["shapes"]]
    bram = BramGeometry(bits=blocks["bram18k"]["bits"], shapes=tuple(sorted(shapes)))
    for i, (w, depth) in enumerate(shapes):
        if w * depth > bram.bits:
            raise PlatformError(
                f"{label}: memory_blocks.bram18k.shapes[{i}] is {w} x {depth} = {w * depth} bits, "
                f"more than the block's {bram.bits} bits; fix the width or the depth"
            )
    u = blocks["uram"]
    if u["width"] * u["depth"] > u["bits"]:
        raise PlatformError(
            f"{label}: memory_blocks.uram is {u['width']} x {u['depth']} bits, more than its "
            f"{u['bits']} bits; fix the width or the depth"
        )
    fractions = d.get("usable_fraction", {})
    if override is not None:
        fractions = dict.fromkeys(RESOURCES, override)
    return Platform(
        name=d["name"],
        part=d["part"],
        description=d.get("description", d["part"]),
        source=d["source"],
        clock_mhz=d["clock_mhz"],
        resources=ResourceCounts(**d["resources"]),
        usable_fraction=UsableFractions(**fractions),
        memories=tuple(
            MemoryInterface(**{k: v for k, v in m.items() if k != "notes"}) for m in d["memories"]
        ),
        bram18k=bram,
        uram=UramGeometry(bits=u["bits"], width=u["width"], depth=u["depth"]),
        origin=label,
        region=ResourceCounts(**d["kernel_region"]["resources"]) if "kernel_region" in d else None,
        region_source=d["kernel_region"]["source"] if "kernel_region" in d else "",
    )


def with_kernel_resources(platform: Platform, **counts: int) -> Platform:
    """``platform`` whose kernel region has ``counts`` (e.g. ``dsp=100``) in place of its own
    figures, the others kept: a smaller budget for a study or a test."""
    return dataclasses.replace(platform, region=dataclasses.replace(platform.kernel_resources, **counts))


#: the platform every command targets unless told otherwise
DEFAULT_PLATFORM = "u250"


def reload_name(platform: Platform) -> str:
    """What :func:`load_platform` reloads ``platform`` from: its bundled name, or its user file.
    A design records it."""
    if platform.origin == f"odyssey/platforms/{platform.name.lower()}.json" \
            and platform.name.lower() in _bundled_names():
        return platform.name
    return platform.origin


def design_platform(name_or_path: str, clock_mhz: float | None) -> Platform:
    """The platform a design was generated for: the one its descriptor names, at the clock
    it records."""
    return at_clock(load_platform(name_or_path), clock_mhz)


def at_clock(platform: Platform, clock_mhz: float | None) -> Platform:
    """``platform`` with its kernel clock set to ``clock_mhz`` (None: unchanged). The model's
    GOP/s and each DRAM channel's bytes per cycle follow the clock; operator latencies stay
    those of ``optable.json`` (measured at 300 MHz: conservative at lower clocks)."""
    if clock_mhz is None:
        return platform
    if not 0 < clock_mhz <= MAX_CLOCK_MHZ:
        raise PlatformError(f"clock {clock_mhz!r} MHz must be positive and at most "
                            f"{MAX_CLOCK_MHZ:,.0f} MHz; e.g. --clock 250")
    return dataclasses.replace(platform, clock_mhz=float(clock_mhz))


def available(platform: Platform, resource: str) -> float:
    """Budget for ``resource``: the kernel region's ``total * usable_fraction`` (e.g. U250 DSP:
    12273 * 0.7; the whole device where the platform gives no kernel region)."""
    if resource not in RESOURCES:
        raise PlatformError(
            f"unknown resource {resource!r}; the resources are {', '.join(RESOURCES)}"
        )
    total: int = getattr(platform.kernel_resources, resource)
    fraction: float = getattr(platform.usable_fraction, resource)
    return total * fraction


# ----------------------------------------------------------------- operator costs

Op = Literal["add", "sub", "mul"]


@dataclass(frozen=True, slots=True)
class OpCost:
    """One operator on one dtype: DSP48E2 slices per lane and latency in cycles."""

    dsp: int
    latency: int


@dataclass(frozen=True, slots=True)
class OpCosts:
    """The operator cost table: ``table[dtype][op]``, dtype aliases such as ``float``."""

    table: tuple[tuple[str, tuple[tuple[str, OpCost], ...]], ...]
    aliases: tuple[tuple[str, str], ...]
    clock_mhz: float
    source: str
    origin: str

    def lookup(self, dtype: str, op: str) -> OpCost:
        """Cost of ``op`` on ``dtype`` (or an alias such as ``float``); ModelError if unknown."""
        canonical = dict(self.aliases).get(dtype, dtype)
        ops = dict(self.table).get(canonical)
        cost = None if ops is None else dict(ops).get(op)
        if cost is None:
            known = "; ".join(f"{t}: {', '.join(o for o, _ in os)}" for t, os in self.table)
            raise ModelError(
                f"no operator cost for {op!r} on dtype {dtype!r} in {self.origin}; known "
                f"combinations are {known} (dtype aliases: "
                f"{', '.join(a for a, _ in self.aliases)}); add it to the table"
            )
        return cost


def load_op_costs(name_or_path: str = _OPTABLE) -> OpCosts:
    """Load the bundled operator table or a user file with the same shape."""
    text, label = _read(name_or_path, "operator table", [_OPTABLE])
    d = _OPTABLE_SPEC.check(load_json(text, label), "", label)
    aliases = d.get("aliases", {})
    for alias, target in aliases.items():
        if target not in d["ops"]:
            raise PlatformError(
                f"{label}: aliases.{alias} points to {target!r}, which is not a dtype in ops "
                f"({', '.join(d['ops'])}); fix the alias or add the dtype"
            )
    table = tuple(
        (t, tuple((op, OpCost(c["dsp"], c["latency"])) for op, c in ops.items()))
        for t, ops in d["ops"].items()
    )
    return OpCosts(table, tuple(aliases.items()), d["clock_mhz"], d["source"], label)


@functools.cache
def default_op_costs() -> OpCosts:
    """The bundled table (read once, on first use)."""
    return load_op_costs()


def op_cost(dtype: str, op: Op | str, *, costs: OpCosts | None = None) -> tuple[int, int]:
    """``(dsp, latency)`` of ``op`` on ``dtype`` from ``costs`` (default: bundled table).

    ``op_cost("fp32", "mul") == (3, 4)``; unknown combinations raise ModelError
    listing the known ones.
    """
    c = (costs or default_op_costs()).lookup(dtype, op)
    return c.dsp, c.latency


def mac_cost(dtype: str, *, costs: OpCosts | None = None) -> tuple[int, int]:
    """``(dsp, latency)`` of a multiply-accumulate: mul + add (fp32: 5 DSPs, 12 cycles)."""
    m_dsp, m_lat = op_cost(dtype, "mul", costs=costs)
    a_dsp, a_lat = op_cost(dtype, "add", costs=costs)
    return m_dsp + a_dsp, m_lat + a_lat


_ASSUMPTIONS = Path(__file__).resolve().parent / "assumptions.json"


@dataclass(frozen=True, slots=True)
class Assumption:
    """A timing value of the generated hardware that no data sheet gives, and its origin."""

    name: str
    value: int
    unit: str
    source: str


@functools.lru_cache(maxsize=1)
def _assumptions() -> dict[str, Any]:
    data: dict[str, Any] = load_json(_ASSUMPTIONS.read_text(), str(_ASSUMPTIONS))
    return data


def assumption(name: str) -> Assumption:
    """One entry of ``platforms/assumptions.json`` (``region_restart_cycles``,
    ``io_pipeline_depth``, ``fifo_depth``, ``chain_hop_cycles``)."""
    entry = _assumptions().get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("value"), int):
        raise PlatformError(f"{_ASSUMPTIONS}: `{name}` must be an object with an integer `value`")
    return Assumption(name, int(entry["value"]), str(entry.get("unit", "")), str(entry.get("source", "")))
