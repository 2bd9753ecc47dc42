"""A small HLS C++ AST and its printer.

Codegen builds these nodes and prints them; pragmas are nodes, never spliced
strings. Loop bounds are symbolic expressions (:mod:`odyssey.expr`) in the
tuning parameters, so the same tree is printed as C (with the parameters as
``#define`` constants) and serialised into the descriptor for the models.
Data-path expressions (``acc[x] + v``) are short C strings: they carry no
information the models need. A few plain C++ statements (:class:`ForRange`,
:class:`ForEach`, :class:`Guard`, :class:`Decls`, :class:`Commented`, :class:`Return`)
serve the host testbench, which has no timing hooks and nothing for the models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from odyssey.expr import Expr, to_c, to_json
from odyssey.platforms import assumption

if TYPE_CHECKING:
    from odyssey.codegen.descriptor_schema import StmtJson


def _io_depth() -> int:
    """Pipeline depth (cycles from issue to the last write) of an I/O loop body: an assumption
    with its origin in ``platforms/assumptions.json``, shared with the model."""
    return assumption("io_pipeline_depth").value


@dataclass(frozen=True, slots=True)
class Pragma:
    text: str  # without the leading "#pragma "


@dataclass(frozen=True, slots=True)
class Comment:
    text: str


@dataclass(frozen=True, slots=True)
class Line:
    """One C statement (no trailing semicolon), e.g. ``acc[x] = v``."""

    text: str


@dataclass(frozen=True, slots=True)
class Decl:
    """``ctype name[dims] = init;`` or, with ``ctor_args``, ``ctype name(args...);``."""

    ctype: str
    name: str
    dims: tuple[Expr | int, ...] = ()
    init: str | None = None
    static: bool = False
    ctor_args: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class StreamRead:
    stream: str
    target: str  # lvalue, or a declaration such as "A_t4 v"


@dataclass(frozen=True, slots=True)
class StreamWrite:
    stream: str
    value: str


@dataclass(frozen=True, slots=True)
class DramRead:
    """``target = port[index]`` on an m_axi port (one word of ``port``'s packed type).
    ``run`` consecutive accesses form one burst (the DRAM port model charges its
    per-burst overhead once per ``run`` accesses)."""

    port: str
    index: str
    target: str
    run: Expr | None = None


@dataclass(frozen=True, slots=True)
class DramWrite:
    port: str
    index: str
    value: str
    run: Expr | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """``func(template_args..., args...);``: a process's position (``template_args``, its
    function's :attr:`Function.template` parameters) is passed first, as ordinary arguments;
    ``task`` marks a process of a dataflow region, printed as ``ODYSSEY_TASK(...)`` (a plain
    call for Vitis, a thread in concurrent C simulation)."""

    func: str
    args: tuple[str, ...]
    template_args: tuple[str, ...] = ()
    task: bool = False


@dataclass(frozen=True, slots=True)
class Scope:
    """A ``{ ... }`` block, e.g. the lifetime of a ``write_lock``."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class If:
    """``if (cond) then else orelse``; ``freq`` is the fraction of executions of the enclosing
    body that take the ``then`` branch (an expression), for the models."""

    cond: str
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()
    freq: Expr | None = None


@dataclass(frozen=True, slots=True)
class For:
    """``for (int var = 0; var < trip; var++)``; ``pipeline_ii`` marks a pipelined loop,
    ``unroll`` a fully unrolled one."""

    var: str
    trip: Expr
    body: tuple[Stmt, ...]
    pipeline_ii: int | None = None
    unroll: bool = False
    label: str | None = None
    extra_pragmas: tuple[Pragma, ...] = ()
    pipeline_depth: int = field(default_factory=_io_depth)
    ii_sym: Expr | None = None  # the II as an expression of the tiling, when it depends on it
    depth_sym: Expr | None = None  # likewise the pipeline depth
    # a chain's forwarding loop: the cycles its last word takes through the modules after it,
    # paid once per call of the region (the model's view; the printed code does not show it)
    fill_sym: Expr | None = None


def pipelined_nest(s: For) -> For | None:
    """The pipelined loop at the bottom of the perfect loop nest rooted at ``s``, if any:
    Vitis flattens a perfect nest of constant-bound loops into the inner pipeline."""
    cur = s
    while cur.pipeline_ii is None:
        if len(cur.body) != 1 or not isinstance(cur.body[0], For):
            return None
        cur = cur.body[0]
    return cur


# --- plain C++ statements of the host testbench (no timing hooks, nothing for the models) --

BodyLayout = Literal["block", "bare", "inline"]
"""How a compound statement lays out its body: ``block`` as ``head {`` / body / ``}``; ``bare``
as ``head`` with its one statement on the next line, one level in; ``inline`` as ``head s;`` (or
``head { s; t; }``) on one line."""


@dataclass(frozen=True, slots=True)
class Return:
    value: str | None = None


@dataclass(frozen=True, slots=True)
class ForRange:
    """``for (int var = lower; var < upper; var++)`` with C bounds (the loops of the scop's
    nest, the host's loops over an array)."""

    var: str
    lower: str
    upper: str
    body: tuple[Stmt, ...]
    layout: BodyLayout = "block"


@dataclass(frozen=True, slots=True)
class ForEach:
    """``for (item : container)``, ``item`` a declaration such as ``auto &x``."""

    item: str
    container: str
    body: tuple[Stmt, ...]
    layout: BodyLayout = "inline"


@dataclass(frozen=True, slots=True)
class Guard:
    """``if (cond)`` around a body in any layout (:class:`If` always prints a block and carries
    the models' branch frequency)."""

    cond: str
    body: tuple[Stmt, ...]
    layout: BodyLayout = "inline"


@dataclass(frozen=True, slots=True)
class Decls:
    """``ctype a = x, b = y;``: several variables of one type in one declaration."""

    ctype: str
    items: tuple[tuple[str, str], ...]  # (name, initialiser)


@dataclass(frozen=True, slots=True)
class Commented:
    """A one-line statement followed by ``  // text``."""

    stmt: Stmt
    text: str


Stmt = (Pragma | Comment | Line | Decl | StreamRead | StreamWrite | DramRead | DramWrite | Call | Scope | If | For
        | Return | ForRange | ForEach | Guard | Decls | Commented)


@dataclass(frozen=True, slots=True)
class Param:
    """A function parameter. ``direction`` says how a process uses a stream (or a stream of
    blocks) parameter: ``"in"`` (reads it) or ``"out"`` (writes it); ``None`` for the rest."""

    ctype: str
    name: str
    by_ref: bool = False
    array_dims: tuple[str, ...] = ()
    direction: Literal["in", "out"] | None = None


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    #: position parameters, e.g. ("int p_i",): printed as the function's first arguments, not
    #: as a template. HLS synthesizes a function once and instantiates it at every call, while
    #: each template specialization is a function of its own (1,180 modules on a 344-PE MM
    #: array, about 20 this way; AutoSA passes its ids as arguments too)
    template: tuple[str, ...] = ()
    comment: str = ""
    kind: str = ""  # module kind for the descriptor ("pe", "io_l3_in", ...)
    returns: str = "void"
    qualifiers: str = ""  # e.g. "static inline"
    operand: str | None = None  # the operand an I/O module moves
    boundary: bool = False  # the last module of a chain (moves a subset of what its head moves)
    extern_c: bool = False


@dataclass(frozen=True, slots=True)
class Typedef:
    """``typedef ctype name[dims];`` (``dims`` empty for a scalar or word type)."""

    ctype: str
    name: str
    dims: tuple[int, ...] = ()

    def text(self) -> str:
        return f"typedef {self.ctype} {self.name}{''.join(f'[{d}]' for d in self.dims)};"


@dataclass(frozen=True, slots=True)
class Unit:
    """A translation unit: includes, defines, typedefs and functions."""

    header_comment: str
    includes: tuple[str, ...]
    functions: tuple[Function, ...]
    defines: tuple[tuple[str, str], ...] = ()
    typedefs: tuple[Typedef, ...] = ()
    extra: tuple[str, ...] = field(default=())  # declarations printed after the typedefs
    # macros the included headers read (the timed simulation's timing assumptions): printed
    # before the includes
    configure: tuple[tuple[str, str], ...] = ()


# --- printing ---------------------------------------------------------------------------


def _dims(dims: Sequence[Expr | int]) -> str:
    return "".join(f"[{d if isinstance(d, int) else to_c(d)}]" for d in dims)


def print_stmt(s: Stmt, indent: int, out: list[str], *, in_pipe: bool = False) -> None:
    """Print ``s``. Timing hooks (``ODYSSEY_PIPE_*``, ``ODYSSEY_DRAM``) expand to nothing
    unless the design is built for timed simulation (``-DODYSSEY_TIMED``)."""
    pad = "  " * indent
    if isinstance(s, Pragma):
        out.append(f"{pad}#pragma {s.text}")
    elif isinstance(s, Comment):
        out.append(f"{pad}// {s.text}")
    elif isinstance(s, Line):
        out.append(f"{pad}{s.text};")
    elif isinstance(s, Decl):
        init = f" = {s.init}" if s.init is not None else ""
        if s.ctor_args is not None:
            init = f"({', '.join(s.ctor_args)})"
        static = "static " if s.static else ""
        out.append(f"{pad}{static}{s.ctype} {s.name}{_dims(s.dims)}{init};")
    elif isinstance(s, StreamRead):
        out.append(f"{pad}{s.target} = {s.stream}.read();")
    elif isinstance(s, StreamWrite):
        out.append(f"{pad}{s.stream}.write({s.value});")
    elif isinstance(s, DramRead):
        out.append(f"{pad}{s.target} = {s.port}[{s.index}];")
        out.append(f"{pad}ODYSSEY_DRAM_PORT({_run(s.run)}, {s.port});")
    elif isinstance(s, DramWrite):
        out.append(f"{pad}{s.port}[{s.index}] = {s.value};")
        out.append(f"{pad}ODYSSEY_DRAM_PORT({_run(s.run)}, {s.port});")
    elif isinstance(s, Call):
        call = f"{s.func}({', '.join((*s.template_args, *s.args))})"
        out.append(f"{pad}ODYSSEY_TASK({call});" if s.task else f"{pad}{call};")
    elif isinstance(s, Scope):
        out.append(f"{pad}{{")
        for c in s.body:
            print_stmt(c, indent + 1, out)
        out.append(f"{pad}}}")
    elif isinstance(s, If):
        out.append(f"{pad}if ({s.cond}) {{")
        for c in s.then:
            print_stmt(c, indent + 1, out)
        if s.orelse:
            out.append(f"{pad}}} else {{")
            for c in s.orelse:
                print_stmt(c, indent + 1, out)
        out.append(f"{pad}}}")
    elif isinstance(s, For):
        inner = None if in_pipe else pipelined_nest(s)
        if inner is not None:
            out.append(f"{pad}ODYSSEY_PIPE_BEGIN({inner.pipeline_ii}, {inner.pipeline_depth});")
        label = f"{s.label}: " if s.label else ""
        out.append(f"{pad}{label}for (int {s.var} = 0; {s.var} < {to_c(s.trip)}; {s.var}++) {{")
        if s.pipeline_ii is not None:
            out.append(f"{pad}  #pragma HLS PIPELINE II={s.pipeline_ii}")
        if s.unroll:
            out.append(f"{pad}  #pragma HLS UNROLL")
        for p in s.extra_pragmas:
            out.append(f"{pad}  #pragma {p.text}")
        if s.pipeline_ii is not None:
            out.append(f"{pad}  ODYSSEY_PIPE_ITER();")
        for c in s.body:
            print_stmt(c, indent + 1, out, in_pipe=in_pipe or inner is not None)
        out.append(f"{pad}}}")
        if inner is not None:
            out.append(f"{pad}ODYSSEY_PIPE_END();")
    elif isinstance(s, Return):
        out.append(f"{pad}return{'' if s.value is None else ' ' + s.value};")
    elif isinstance(s, ForRange):
        head = f"for (int {s.var} = {s.lower}; {s.var} < {s.upper}; {s.var}++)"
        _print_laid_out(head, s.body, s.layout, indent, out)
    elif isinstance(s, ForEach):
        _print_laid_out(f"for ({s.item} : {s.container})", s.body, s.layout, indent, out)
    elif isinstance(s, Guard):
        _print_laid_out(f"if ({s.cond})", s.body, s.layout, indent, out)
    elif isinstance(s, Decls):
        out.append(f"{pad}{s.ctype} {', '.join(f'{n} = {v}' for n, v in s.items)};")
    elif isinstance(s, Commented):
        out.append(f"{pad}{_one_line(s.stmt)}  // {s.text}")
    else:  # pragma: no cover - exhaustive
        raise TypeError(type(s))


def _one_line(s: Stmt) -> str:
    """``s`` printed without indentation; it must print as one line."""
    out: list[str] = []
    print_stmt(s, 0, out)
    assert len(out) == 1, f"{type(s).__name__} prints {len(out)} lines where one is expected"
    return out[0]


def _print_laid_out(head: str, body: tuple[Stmt, ...], layout: BodyLayout, indent: int, out: list[str]) -> None:
    """``head`` and its ``body`` in ``layout`` (see :data:`BodyLayout`)."""
    pad = "  " * indent
    if layout == "inline":
        inner = [_one_line(c) for c in body]
        out.append(f"{pad}{head} {inner[0]}" if len(inner) == 1 else f"{pad}{head} {{ {' '.join(inner)} }}")
    elif layout == "bare":
        assert len(body) == 1, f"a bare `{head}` takes one statement, not {len(body)}"
        out.append(f"{pad}{head}")
        print_stmt(body[0], indent + 1, out)
    else:
        out.append(f"{pad}{head} {{")
        for c in body:
            print_stmt(c, indent + 1, out)
        out.append(f"{pad}}}")


def print_function(f: Function, *, prototype: bool = False) -> str:
    out: list[str] = []
    if f.comment and not prototype:
        out.extend(f"// {line}" for line in f.comment.splitlines())
    params = list(f.template)
    for p in f.params:
        if p.array_dims:
            params.append(f"{p.ctype} {p.name}{''.join(f'[{d}]' for d in p.array_dims)}")
        else:
            params.append(f"{p.ctype} {'&' if p.by_ref else ''}{p.name}")
    sig = f"{f.qualifiers + ' ' if f.qualifiers else ''}{f.returns} {f.name}({', '.join(params)})"
    if f.extern_c:
        sig = 'extern "C" ' + sig
    if prototype:
        return sig + ";"
    out.append(sig + " {")
    for s in f.body:
        print_stmt(s, 1, out)
    out.append("}")
    return "\n".join(out)


def print_unit(u: Unit) -> str:
    out = [f"// {line}" if line else "//" for line in u.header_comment.splitlines()]
    if out:  # a unit without a header comment starts with its includes
        out.append("")
    if u.configure:
        out.extend(f"#define {name} {value}" for name, value in u.configure)
        out.append("")
    out.extend(f"#include {inc}" for inc in u.includes)
    if u.defines:
        out.append("")
        out.extend(f"#define {name} {value}" for name, value in u.defines)
    if u.typedefs:
        out.append("")
        out.extend(t.text() for t in u.typedefs)
    for e in u.extra:
        out.extend(["", e])
    for f in u.functions:
        out.extend(["", print_function(f)])
    out.append("")
    return "\n".join(out)


def _run(run: Expr | None) -> str:
    return to_c(run) if run is not None else "1"


# --- descriptor form ----------------------------------------------------------------------


def stmt_json(s: Stmt) -> StmtJson:
    """The descriptor form of a statement: what the models need, C text where useful."""
    if isinstance(s, For):
        return {"type": "for", "var": s.var, "trip": to_json(s.trip), "pipeline_ii": s.pipeline_ii,
                "pipeline_depth": s.pipeline_depth if s.pipeline_ii is not None else None,
                "ii_sym": to_json(s.ii_sym) if s.ii_sym is not None else None,
                "depth_sym": to_json(s.depth_sym) if s.depth_sym is not None else None,
                "fill_sym": to_json(s.fill_sym) if s.fill_sym is not None else None,
                "unroll": s.unroll, "body": [stmt_json(c) for c in s.body]}
    if isinstance(s, If):
        return {"type": "if", "cond": s.cond, "freq": to_json(s.freq) if s.freq is not None else None,
                "then": [stmt_json(c) for c in s.then], "else": [stmt_json(c) for c in s.orelse]}
    if isinstance(s, Scope):
        return {"type": "block", "body": [stmt_json(c) for c in s.body]}
    if isinstance(s, ForRange):
        return {"type": "for_range", "var": s.var, "lower": s.lower, "upper": s.upper,
                "body": [stmt_json(c) for c in s.body]}
    if isinstance(s, ForEach):
        return {"type": "for_each", "item": s.item, "container": s.container, "body": [stmt_json(c) for c in s.body]}
    if isinstance(s, Guard):
        return {"type": "if", "cond": s.cond, "freq": None, "then": [stmt_json(c) for c in s.body], "else": []}
    if isinstance(s, Decls):
        return {"type": "decls", "ctype": s.ctype, "names": [n for n, _ in s.items]}
    if isinstance(s, Commented):
        return stmt_json(s.stmt)  # the comment is for people reading the C++
    if isinstance(s, Return):
        return {"type": "return", "value": s.value}
    if isinstance(s, StreamRead):
        return {"type": "fifo_read", "fifo": s.stream}
    if isinstance(s, StreamWrite):
        return {"type": "fifo_write", "fifo": s.stream}
    if isinstance(s, DramRead | DramWrite):
        kind = "dram_read" if isinstance(s, DramRead) else "dram_write"
        return {"type": kind, "port": s.port, "run": to_json(s.run) if s.run is not None else 1}
    if isinstance(s, Call):
        return {"type": "call", "func": s.func, "template_args": list(s.template_args)}
    if isinstance(s, Decl):
        return {"type": "decl", "ctype": s.ctype, "name": s.name,
                "dims": [d if isinstance(d, int) else to_json(d) for d in s.dims]}
    if isinstance(s, Pragma):
        return {"type": "pragma", "text": s.text}
    if isinstance(s, Comment):
        return {"type": "comment", "text": s.text}
    return {"type": "stmt", "text": s.text}

