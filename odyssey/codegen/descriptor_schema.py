"""The typed form of ``descriptor.json``: the interface between the generator and the models.

:func:`odyssey.codegen.descriptor.descriptor` returns a :class:`Descriptor` and the models
(:mod:`odyssey.model`) read one, so mypy checks every key on both sides. The same classes are
read at run time (:mod:`odyssey.codegen.typed_json`) to check a descriptor that comes from a
file (``load_descriptor`` in :mod:`odyssey.codegen.descriptor`) and to print them as a JSON
Schema (``descriptor_json_schema``, same module); ``docs/descriptor.md`` says what each field
means.

Expressions are stored in the JSON form of :mod:`odyssey.expr` (:data:`ExprJson`). A module's
AST is a list of :data:`StmtJson`, one ``TypedDict`` with every statement field optional and
``type`` required, not a union of one ``TypedDict`` per statement type:
:func:`~odyssey.codegen.hls_ast.stmt_json` builds the ``type`` of a DRAM access as a ``str``,
which such a union cannot take. Which keys each ``type`` has is :data:`STMT_KEYS`, checked at
run time and stated in the JSON Schema.
"""

from __future__ import annotations

from typing import (
    Annotated,
    Any,
    Final,
    Literal,
    NotRequired,
    Required,
    TypeAlias,
    TypedDict,
    cast,
    get_args,
)

from odyssey import expr
from odyssey.codegen.array_ir import BufferRole, Direction
from odyssey.codegen.roles import ModuleKind, ModuleRole
from odyssey.codegen.typed_json import Check, JsonMismatch, check_value, join, show
from odyssey.errors import ModelError
from odyssey.expr.serialize import JSONValue
from odyssey.mapping.space import Level

#: 2: module operands and boundary flags, buffer roles and symbolic instances, ports, passes;
#: 3: module roles (reader, chain, loader, feeder, pe, drain, writer);
#: 4: an input's pack dimension and per-dimension pack factors (``pack_*`` of an operand)
#: 5: the platform; every port's DRAM channel, memory kind, m_axi bundle and Vitis connectivity
#: 7: each module's symbolic instance count, operators and output FIFOs; every FIFO's symbolic width
#: 8: the kernel clock the design was generated for (``clock_mhz``)
#: 9: each operator's ``impl`` (``auto`` or ``fabric``); the design's ``lut_mul_percent``
#: 10: each module's pipeline ``registers`` (kind, symbolic width and count, a hold's cycles)
#: 11: each buffer's ``storage`` (``rule``: the platform's fill rule; ``bram``: a ``+bram``
#: design; ``uram``: an I/O block of a ``+uram`` design)
#: 12: a FIFO's ``depth_sym`` and ``storage`` (a deep FIFO, stored in memory: the output FIFO of a PE that packs its own words)
SchemaVersion = Literal[12]
SCHEMA_VERSION: Final[SchemaVersion] = 12

AssignOp = Literal["=", "+=", "-=", "*="]
OutputAccumulation = Literal["on_chip", "partial_sums_leave_array"]
Level2 = Literal["latency", "simd"]
LEVEL2S: tuple[Level2, ...] = get_args(Level2)
OperandRole = Literal["input", "output"]
OPERAND_ROLES: tuple[OperandRole, ...] = get_args(OperandRole)
LaneOp = Literal["mul", "add", "sub", "neg"]
LANE_OPS: tuple[LaneOp, ...] = get_args(LaneOp)
OperatorImplJson = Literal["auto", "fabric", "fused"]
RegisterKindJson = Literal["stage", "word", "result", "hold"]
ChannelKind = Literal["stream", "blocks"]
#: a buffer's binding: ``rule`` (block RAM where a bank fills ``fabric.json``'s ``bram.min_fill``
#: of its RAMB18E2s, else distributed RAM), ``bram`` (block RAM however shallow: ``+bram``) or
#: ``uram`` (UltraRAM: an I/O block of a ``+uram`` design)
StorageJson = Literal["rule", "bram", "uram"]
PortDirection = Literal["read", "write"]

# --- expressions ---------------------------------------------------------------------------

#: the operators of expressions in JSON (those :func:`odyssey.expr.from_json` reads)
_OPS = tuple(k.op for k in (expr.Add, expr.Mul, expr.Div, expr.FloorDiv, expr.CeilDiv, expr.Ceil, expr.Floor,
                           expr.Log2, expr.Max, expr.Min, expr.Pow, expr.Where, expr.Le, expr.Lt, expr.Eq))


def _check_expr(value: Any, path: str) -> None:
    try:
        expr.from_json(value)
    except ModelError as exc:
        raise JsonMismatch(path, f"expected an expression: {exc}") from None


_EXPR = Check(
    "Expr", "an expression (a number, a symbol name or [op, args...])", _check_expr,
    lambda _base: {
        "description": "An expression of odyssey.expr in the tuning and size parameters: a number, a "
                       "symbol name, [op, args...], or {\"const\": \"inf\"|\"-inf\"}.",
        "anyOf": [{"type": "number"}, {"type": "string"},
                  {"type": "array", "prefixItems": [{"enum": list(_OPS)}], "items": {"$ref": "#/$defs/Expr"},
                   "minItems": 2},
                  {"type": "object", "properties": {"const": {"enum": ["inf", "-inf"]}}, "required": ["const"],
                   "additionalProperties": False}]})

#: an expression in the JSON form of :func:`odyssey.expr.to_json`
ExprJson: TypeAlias = Annotated[JSONValue, _EXPR]

def _check_channel(value: Any, path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise JsonMismatch(path, f"expected a channel index (an integer >= 0); got {show(value)}")


# --- module ASTs ---------------------------------------------------------------------------

StmtType = Literal["for", "if", "block", "fifo_read", "fifo_write", "dram_read", "dram_write", "call", "decl",
                   "pragma", "comment", "stmt", "for_range", "for_each", "decls", "return"]

#: the keys (besides ``type``) of each statement type
STMT_KEYS: Final[dict[StmtType, tuple[str, ...]]] = {
    "for": ("var", "trip", "pipeline_ii", "pipeline_depth", "ii_sym", "depth_sym", "fill_sym", "unroll", "body"),
    "if": ("cond", "freq", "then", "else"),
    "block": ("body",),
    "fifo_read": ("fifo",), "fifo_write": ("fifo",),
    "dram_read": ("port", "run"), "dram_write": ("port", "run"),
    "call": ("func", "template_args"),
    "decl": ("ctype", "name", "dims"),
    "pragma": ("text",), "comment": ("text",), "stmt": ("text",),
    # plain C++ of the host testbench (hls_ast.ForRange, ForEach, Decls, Return): stmt_json
    # serialises them, module ASTs do not hold them
    "for_range": ("var", "lower", "upper", "body"),
    "for_each": ("item", "container", "body"),
    "decls": ("ctype", "names"),
    "return": ("value",),
}

#: a statement of a module's AST (``else`` is a Python keyword: the functional syntax)
StmtJson = TypedDict("StmtJson", {
    "type": Required[str],  # one of StmtType
    "var": str,
    "trip": ExprJson,
    "pipeline_ii": "int | None",  # set: the loop is pipelined, the perfect nest above flattened into it
    "pipeline_depth": "int | None",
    "ii_sym": "ExprJson | None",
    "depth_sym": "ExprJson | None",
    # cycles the loop's last word of a region takes to reach it through the modules before it
    # in its chain (hidden by their FIFOs while the chain streams): once per region, not per run
    "fill_sym": "ExprJson | None",
    "unroll": bool,
    "body": "list[StmtNode]",
    "cond": str,  # C text
    "freq": "ExprJson | None",  # fraction of the executions that take `then`
    "then": "list[StmtNode]",
    "else": "list[StmtNode]",
    "fifo": str,
    "port": str,
    "run": ExprJson,  # consecutive accesses that form one burst
    "func": str,
    "template_args": "list[str]",
    "ctype": str,
    "name": str,
    "dims": "list[ExprJson]",
    "text": str,
    "lower": str,
    "upper": str,
    "item": str,
    "container": str,
    "names": "list[str]",
    "value": "str | None",
}, total=False)


def _check_stmt(value: Any, path: str) -> None:
    """The statement's ``type`` and the keys of that type, then the fields' types."""
    if not isinstance(value, dict):
        raise JsonMismatch(path, f"expected a statement (an object); got {show(value)}")
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in STMT_KEYS:
        found = "missing" if "type" not in value else f"got {show(kind)}"
        raise JsonMismatch(join(path, "type"), f"expected one of {', '.join(STMT_KEYS)}; {found}")
    keys = STMT_KEYS[cast(StmtType, kind)]
    for k in value:
        if k != "type" and k not in keys:
            raise JsonMismatch(join(path, k), f"unknown key for a `{kind}` statement; its keys are type, "
                                              f"{', '.join(keys)}")
    for k in keys:
        if k not in value:
            raise JsonMismatch(join(path, k), f"missing; a `{kind}` statement has type, {', '.join(keys)}")
    check_value(value, StmtJson, path)


def _stmt_schema(base: dict[str, Any]) -> dict[str, Any]:
    return {**base, "description": "A statement of a module's AST: `type` and the keys of that type.",
            "properties": {"type": {"enum": list(STMT_KEYS)}}, "required": ["type"],
            "allOf": [{"if": {"properties": {"type": {"const": t}}},
                       "then": {"required": list(keys), "propertyNames": {"enum": ["type", *keys]}}}
                      for t, keys in STMT_KEYS.items()]}


#: a statement with the keys of its ``type`` (:data:`STMT_KEYS`) checked
StmtNode: TypeAlias = Annotated[StmtJson, Check("Stmt", "a statement", _check_stmt, _stmt_schema)]

_NESTED: tuple[Literal["body", "then", "else"], ...] = ("body", "then", "else")


def nested_blocks(s: StmtJson) -> list[list[StmtJson]]:
    """The statement lists inside ``s``: its ``body``, ``then`` and ``else``, those it has."""
    return [s[k] for k in _NESTED if k in s]

# --- sections ------------------------------------------------------------------------------


class KernelJson(TypedDict):
    """The C kernel and the statement the array computes."""

    file: str
    function: str
    statement: str  # C text
    op: AssignOp
    initial_value: str | None  # the initialiser's constant; null: the output starts from DRAM


class DesignJson(TypedDict):
    """The design: its dataflow (space loops) and ordering."""

    id: str
    index: int
    dataflow: str
    ordering: str
    space_loops: list[str]
    order: list[str]  # array-partitioning loops, outer to inner
    reduction_loops: list[str]
    simd_loop: str | None
    lut_mul_percent: int  # percent of each PE's multiply lanes in LUT fabric (design id +lutP)
    output_accumulation: OutputAccumulation
    model_only: str | None  # why the design cannot be simulated


class ParamJson(TypedDict):
    """A tuning parameter with its bounds and the parameter it divides."""

    name: str
    loop: str
    level: Level
    lower: int
    upper: int
    divides: str | None


class LoopJson(TypedDict):
    """A band loop: extent, tiles and padding, concrete and symbolic."""

    name: str
    lower: int
    extent: int
    extent_sym: ExprJson
    tiles: int
    tiles_sym: ExprJson  # ceil(E / T_l1)
    outer_sym: ExprJson  # T_l1 / T_l2
    t1_sym: ExprJson
    t2_sym: ExprJson
    padded: int
    space: bool
    reduction: bool
    level2: Level2 | None


class OperandJson(TypedDict):
    """An array reference of the statement and how it moves through the array."""

    name: str
    array: str
    role: OperandRole
    elem: str
    bits: int
    injection_loops: list[str]
    chain_loop: str | None
    reload_loops: list[str]
    lanes: int
    simd: bool
    lanes_sym: ExprJson
    lanes_macro: str
    pack_dim: int  # the box dimension an input word runs along at this tiling (-1: none)
    pack_sym: list[ExprJson]  # elements of each box dimension in one word, at every tiling
    pack_macros: list[str]  # the macro of each factor in the module ASTs' trips
    dram_shape: list[int]
    box: list[int]
    box_sym: list[ExprJson]


class OperatorJson(TypedDict):
    """``count_sym`` copies of operator ``op`` on elements of C type ``dtype``."""

    op: LaneOp
    dtype: str
    count_sym: ExprJson
    impl: OperatorImplJson  # the tool's default core, or LUT fabric (BIND_OP impl=fabric)


class RegisterJson(TypedDict):
    """``count_sym`` pipeline registers (or delay lines) of ``bits_sym`` bits
    (:class:`odyssey.codegen.hardware.RegisterUse`)."""

    kind: RegisterKindJson
    bits_sym: ExprJson
    count_sym: ExprJson
    cycles: int  # a hold's delay


class StreamOutJson(TypedDict):
    """A FIFO of ``bits_sym``-bit items, ``depth`` deep: a shift register, or where
    ``depth_sym`` is given (its depth at every tiling) a memory bound by ``storage``."""

    bits_sym: ExprJson
    depth: int
    depth_sym: ExprJson | None
    storage: StorageJson


class ModuleJson(TypedDict):
    """A module kind (one HLS function) with its instances and its AST."""

    name: str
    kind: ModuleKind
    role: ModuleRole
    operand: str | None
    boundary: bool  # the last module of a chain
    template: list[str]  # position parameters, e.g. "int p_i"
    instances: list[list[int]]  # the template arguments of every instance
    count_sym: ExprJson  # the number of instances at every tiling
    operators: list[OperatorJson]  # the arithmetic operators of one instance
    registers: list[RegisterJson]  # the pipeline registers of one instance, outside its operators
    outputs: list[StreamOutJson]  # the FIFOs one instance writes
    ast: list[StmtNode]


class PartitionJson(TypedDict):
    """Cyclic partitioning of dimension ``dim`` (1-based) into ``factor`` banks."""

    dim: int
    factor: int
    factor_sym: ExprJson


class BufferJson(TypedDict):
    """An on-chip buffer (``instances`` copies, each in the banks of ``partition``)."""

    name: str
    role: BufferRole
    operand: str
    module: str
    array: str
    elem: str
    bits: int
    dims: list[int]
    dims_sym: list[ExprJson]
    double_buffered: bool
    instances: int
    instances_sym: ExprJson
    packing_lanes: int
    simd_read: bool
    partition: list[PartitionJson]
    bits_sym: ExprJson  # bits at every tiling (the partial-sum words' lanes vary)
    storage: StorageJson  # where its banks are bound
    ctype: NotRequired[str]  # the block's typedef, where it has one


class ComputeJson(TypedDict):
    """What a PE computes: SIMD lanes, operators per lane, types and II."""

    simd_lanes: int
    ops_per_lane: list[LaneOp]
    dtype: str  # the accumulator's C type
    operand_types: dict[str, str]
    pe_ii: int
    pe_ii_sym: ExprJson
    reduction_latency: int
    pe_iterations_per_tile: int
    pe_iterations_per_tile_sym: ExprJson


class TopologyJson(TypedDict):
    """The PE array's shape and the instances of every module kind."""

    array_dims: list[int]
    array_dims_sym: list[ExprJson]
    num_pes: int
    module_counts: dict[str, int]


class FifoJson(TypedDict):
    """A stream or a stream of blocks of the dataflow region."""

    name: str
    type: str  # C type of an item
    bits: int
    depth: int
    kind: ChannelKind
    bits_sym: ExprJson


class PassesJson(TypedDict):
    """The tile loops the top function runs around the dataflow region (empty: one pass)."""

    loops: list[str]


class PortJson(TypedDict):
    """An m_axi port of ``kernel0`` on DRAM channel ``channel`` of the platform's memory of kind
    ``memory`` (``odyssey/codegen/channels.py`` states the assignment rule)."""

    name: str
    operand: str
    direction: PortDirection
    elem_bits: int
    lanes_sym: ExprJson  # elements per word
    channel: Annotated[int, Check("Channel", "a channel index >= 0", lambda v, path: _check_channel(v, path),
                                  lambda base: {**base, "type": "integer", "minimum": 0})]
    memory: str  # the memory's kind in the platform file, e.g. DDR4-2400, HBM2
    bundle: str  # the m_axi bundle: one per channel
    connectivity: str  # the Vitis --connectivity.sp memory, e.g. DDR[0], HBM[3]


class ChannelUseJson(TypedDict):
    """A channel a process reads (``in``) or writes (``out``)."""

    name: str
    direction: Direction


class ProcessJson(TypedDict):
    """A process call of the dataflow region, in call order."""

    func: str
    template_args: list[int]
    channels: list[ChannelUseJson]


class Descriptor(TypedDict):
    """Everything the performance models need about one design and tiling (docs/descriptor.md)."""

    schema_version: SchemaVersion
    generator: Literal["odyssey"]
    command: str
    platform: str  # the platform the design was generated for (a bundled name or a file)
    clock_mhz: float  # the kernel clock it was generated for (hls.tcl's period; the model's)
    kernel: KernelJson
    design: DesignJson
    sizes: dict[str, int]
    tiling: dict[str, int]
    params: list[ParamJson]
    loops: list[LoopJson]
    operands: list[OperandJson]
    modules: list[ModuleJson]
    absent_modules: list[ModuleJson]  # variants this tiling does not instantiate (the models count them elsewhere)
    memory: list[BufferJson]
    compute: ComputeJson
    topology: TopologyJson
    fifos: list[FifoJson]
    passes: PassesJson
    ports: list[PortJson]
    processes: list[ProcessJson]


__all__ = [
    "LANE_OPS", "LEVEL2S", "OPERAND_ROLES", "SCHEMA_VERSION", "STMT_KEYS", "AssignOp", "BufferJson", "ChannelKind",
    "ChannelUseJson", "ComputeJson", "OperatorJson", "RegisterJson", "StreamOutJson", "Descriptor", "DesignJson", "ExprJson", "FifoJson", "KernelJson", "LaneOp", "Level2",
    "LoopJson", "ModuleJson", "OperandJson", "OperandRole", "OutputAccumulation", "ParamJson", "PartitionJson",
    "PassesJson", "PortDirection", "PortJson", "ProcessJson", "SchemaVersion", "StmtJson", "StmtNode", "StmtType",
    "TopologyJson", "nested_blocks",
]
