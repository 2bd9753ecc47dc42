"""Fabric costs of the constructs a generated design instantiates, loaded from ``fabric.json``.

``optable.json`` gives each operator core's DSP slices and latency; this table gives everything
else the resource model prices, each entry with its ``source`` (a Xilinx document or a stated
first-principles derivation):

* ``operators``: LUT and FF of each operator core (the cores whose DSPs ``optable.json`` gives);
* ``fifo``: a stream FIFO of ``W`` bits and depth ``D``: shallower than ``srl_min_depth`` it is
  registers (``D * W`` FF and a read multiplexer of ``mux_lut_per_bit * W`` LUT), otherwise
  SRL shift registers (``W * ceil(D / srl_depth_per_lut)`` LUT); plus its control and the
  writer's register of the item (``ff_per_bit * W``);
* ``lutram``: a memory bank of ``W`` bits by ``D`` items in distributed RAM takes
  ``luts_per_block * ceil(W / block_width) * ceil(D / block_depth)`` LUT;
* ``bram``: in block RAM it takes the fewest ``ceil(W / w) * ceil(D / d)`` RAMB18E2s over their
  ``shapes`` ``(w, d)``; a bank goes to block RAM when it fills at least ``min_fill`` of them
  (:func:`bank_impl`), else to distributed RAM;
* ``uram``: in UltraRAM, ``ceil(W / width) * ceil(D / depth)`` URAM288 blocks (a design's
  ``+uram``: its I/O modules' blocks);
* ``process``: the control of each dataflow process (state machine, start/done handshake);
* ``loop``: each loop's counter: ``lut_per_bit`` and ``ff_per_bit`` per bit of its trip count;
* ``pipeline``: a PE pipeline's registers outside its operator cores: one enable per stage,
  each operand word read, each floating-point result, and each delay line: below
  ``srl_min_delay`` cycles plain registers (``cycles * W`` FF), else a shift register of
  ``delay_ff_per_bit * W`` FF and ``W * ceil(cycles / srl_depth_per_lut)`` LUT;
* ``m_axi``: each bundle's adapter: logic growing with its data width, and a read and a write
  buffer of ``num_outstanding * max_burst_length`` words (UG1399) in BRAM;
* ``s_axilite``: the control interface of the kernel.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from odyssey.errors import ModelError
from odyssey.platforms._schema import Int, ListOf, MapOf, Num, Obj, Str, load_json

_SRC = {"source": Str()}
_COST = Obj(required={"lut": Int(0), "ff": Int(0), **_SRC}, optional={"notes": Str()})
_SPEC = Obj(
    required={
        "about": Str(),
        "operators": MapOf(MapOf(_COST)),
        "fifo": Obj(required={"srl_min_depth": Int(1), "srl_depth_per_lut": Int(1), "mux_lut_per_bit": Num(),
                              "control_lut": Int(0), "control_ff": Int(0), "ff_per_bit": Int(0), **_SRC},
                    optional={"notes": Str()}),
        "lutram": Obj(required={"block_width": Int(1), "block_depth": Int(1), "luts_per_block": Int(1), **_SRC},
                      optional={"notes": Str()}),
        "bram": Obj(required={"shapes": ListOf(ListOf(Int(1))), "bits": Int(1), "min_fill": Num(), **_SRC},
                    optional={"notes": Str()}),
        "uram": Obj(required={"width": Int(1), "depth": Int(1), **_SRC}, optional={"notes": Str()}),
        "process": _COST,
        "loop": Obj(required={"lut_per_bit": Num(), "ff_per_bit": Num(), **_SRC}, optional={"notes": Str()}),
        "pipeline": Obj(required={"stage_ff": Int(0), "word_ff_per_bit": Int(0), "result_ff_per_bit": Int(0),
                                  "srl_min_delay": Int(1), "delay_ff_per_bit": Int(0),
                                  "srl_depth_per_lut": Int(1), **_SRC}, optional={"notes": Str()}),
        "m_axi": Obj(required={"lut": Int(0), "ff": Int(0), "lut_per_bit": Num(), "ff_per_bit": Num(),
                               "max_burst_length": Int(1), "num_outstanding": Int(1), **_SRC},
                     optional={"notes": Str()}),
        "s_axilite": _COST,
    },
)


@dataclass(frozen=True, slots=True)
class Logic:
    """LUTs and flip-flops of one construct."""

    lut: int
    ff: int


@dataclass(frozen=True, slots=True)
class FifoCosts:
    srl_min_depth: int
    srl_depth_per_lut: int
    mux_lut_per_bit: float
    control: Logic
    ff_per_bit: int = 0  # the writer's register of the item


@dataclass(frozen=True, slots=True)
class LutramCosts:
    block_width: int
    block_depth: int
    luts_per_block: int

    def luts(self, width: int, depth: int) -> int:
        """LUTs of one bank of ``depth`` items of ``width`` bits in distributed RAM."""
        return self.luts_per_block * -(-width // self.block_width) * -(-depth // self.block_depth)


@dataclass(frozen=True, slots=True)
class BramCosts:
    """The RAMB18E2's width x depth ``shapes``, its ``bits`` and the fill below which a bank is
    bound to distributed RAM instead."""

    shapes: tuple[tuple[int, int], ...]
    bits: int
    min_fill: float

    def blocks(self, width: int, depth: int) -> int:
        """RAMB18E2s of one bank of ``depth`` items of ``width`` bits: the fewest over the shapes."""
        return min(-(-width // w) * -(-depth // d) for w, d in self.shapes)


@dataclass(frozen=True, slots=True)
class UramCosts:
    """URAM288 block: ``width`` x ``depth``, its only shape."""

    width: int
    depth: int

    def blocks(self, width: int, depth: int) -> int:
        """URAM blocks of one bank of ``depth`` items of ``width`` bits."""
        return -(-width // self.width) * -(-depth // self.depth)


@dataclass(frozen=True, slots=True)
class PipelineCosts:
    """The registers of a pipeline outside its operator cores (``fabric.json``, ``pipeline``)."""

    stage_ff: int
    word_ff_per_bit: int
    result_ff_per_bit: int  # per bit of a floating-point core's result (integer rows hold theirs)
    srl_min_delay: int
    delay_ff_per_bit: int
    srl_depth_per_lut: int

    def delay_per_bit(self, cycles: int) -> Logic:
        """LUT and FF per bit of a value delayed ``cycles`` cycles: plain registers below
        ``srl_min_delay``, else a shift register of ``ceil(cycles / srl_depth_per_lut)`` SRL
        LUTs between ``delay_ff_per_bit`` registers."""
        if cycles <= 0:
            return Logic(0, 0)
        if cycles < self.srl_min_delay:
            return Logic(0, cycles)
        return Logic(-(-cycles // self.srl_depth_per_lut), self.delay_ff_per_bit)

    def delay(self, bits: int, cycles: int) -> Logic:
        """A value of ``bits`` bits delayed ``cycles`` cycles (:meth:`delay_per_bit`)."""
        one = self.delay_per_bit(cycles)
        return Logic(bits * one.lut, bits * one.ff)


@dataclass(frozen=True, slots=True)
class MaxiCosts:
    """An m_axi adapter of ``W`` data bits: ``logic + W * per_bit`` LUT and FF, and a read and
    a write buffer of ``num_outstanding * max_burst_length`` words."""

    logic: Logic
    lut_per_bit: float
    ff_per_bit: float
    max_burst_length: int
    num_outstanding: int


@dataclass(frozen=True, slots=True)
class FabricCosts:
    """The table of ``fabric.json`` (see the module docstring), read from ``origin``."""

    operators: tuple[tuple[str, tuple[tuple[str, Logic], ...]], ...]
    fifo: FifoCosts
    lutram: LutramCosts
    bram: BramCosts
    uram: UramCosts
    process: Logic
    loop_lut_per_bit: float
    loop_ff_per_bit: float
    pipeline: PipelineCosts
    m_axi: MaxiCosts
    s_axilite: Logic
    origin: str

    def operator(self, dtype: str, op: str) -> Logic:
        """LUT and FF of operator ``op`` on canonical dtype ``dtype`` (``fp32``); ``neg`` is a
        sign flip (no core). ModelError naming the table when the pair is missing."""
        ops = dict(self.operators).get(dtype)
        cost = None if ops is None else dict(ops).get(op)
        if cost is None:
            raise ModelError(f"no LUT/FF cost for {op!r} on {dtype!r} in {self.origin}; add it to operators.{dtype}")
        return cost

    def bank_impl(self, width: int, depth: int, storage: str = "rule") -> str:
        """Where a bank of ``depth`` items of ``width`` bits of a buffer of ``storage`` is
        bound: ``rule``, ``bram`` when it fills at least ``bram.min_fill`` of the RAMB18E2s it
        takes, else ``lutram``; ``bram`` (a design's ``+bram``), ``bram``; ``uram`` (the blocks
        of a ``+uram`` design), ``uram``."""
        if storage in ("bram", "uram"):
            return storage
        b = self.bram
        return "bram" if width * depth >= b.min_fill * b.bits * b.blocks(width, depth) else "lutram"


def _logic(d: dict[str, Any]) -> Logic:
    return Logic(int(d["lut"]), int(d["ff"]))


def parse_fabric(data: Any, label: str) -> FabricCosts:
    """The checked table of a parsed ``fabric.json``-shaped document."""
    d = _SPEC.check(data, "", label)
    f, lr, m, br, pl = d["fifo"], d["lutram"], d["m_axi"], d["bram"], d["pipeline"]
    return FabricCosts(
        operators=tuple((t, tuple((op, _logic(c)) for op, c in ops.items())) for t, ops in d["operators"].items()),
        fifo=FifoCosts(f["srl_min_depth"], f["srl_depth_per_lut"], float(f["mux_lut_per_bit"]),
                       Logic(f["control_lut"], f["control_ff"]), f["ff_per_bit"]),
        lutram=LutramCosts(lr["block_width"], lr["block_depth"], lr["luts_per_block"]),
        bram=BramCosts(tuple((int(w), int(dp)) for w, dp in br["shapes"]), br["bits"], float(br["min_fill"])),
        uram=UramCosts(int(d["uram"]["width"]), int(d["uram"]["depth"])),
        process=_logic(d["process"]),
        loop_lut_per_bit=float(d["loop"]["lut_per_bit"]), loop_ff_per_bit=float(d["loop"]["ff_per_bit"]),
        pipeline=PipelineCosts(pl["stage_ff"], pl["word_ff_per_bit"], pl["result_ff_per_bit"], pl["srl_min_delay"],
                               pl["delay_ff_per_bit"], pl["srl_depth_per_lut"]),
        m_axi=MaxiCosts(_logic(m), float(m["lut_per_bit"]), float(m["ff_per_bit"]), m["max_burst_length"],
                        m["num_outstanding"]),
        s_axilite=_logic(d["s_axilite"]),
        origin=label,
    )


@functools.cache
def fabric_costs() -> FabricCosts:
    """The bundled table (read once)."""
    entry = resources.files("odyssey.platforms") / "fabric.json"
    label = "odyssey/platforms/fabric.json"
    return parse_fabric(load_json(entry.read_text(encoding="utf-8"), label), label)


__all__ = ["BramCosts", "FabricCosts", "FifoCosts", "Logic", "LutramCosts", "MaxiCosts", "PipelineCosts", "UramCosts", "fabric_costs", "parse_fabric"]
