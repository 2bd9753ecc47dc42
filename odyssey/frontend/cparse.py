"""C source -> :class:`~odyssey.polyhedral.scop.Scop` for every ``#pragma scop`` region.

The translation is pure: it takes the file's text (reading files is the
caller's job) and returns immutable scops, or raises an error from
:mod:`odyssey.errors` that names the file, the line and the construct.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pycparser import c_ast, c_parser

from odyssey.errors import (
    KernelParseError,
    NoScopError,
    NotAffineError,
    UnknownArrayError,
    UnsupportedConstructError,
)
from odyssey.frontend.preprocess import preprocess
from odyssey.polyhedral.affine import Affine, box_set
from odyssey.polyhedral.scop import (
    ELEM_BITS,
    Array,
    BinOp,
    Loop,
    Neg,
    Num,
    ParamRef,
    Read,
    Reference,
    RExpr,
    Scalar,
    ScalarRef,
    Scop,
    SourceLoc,
    Statement,
)

_TYPE_ALIASES = {
    "float": "float", "double": "double", "int": "int", "signed int": "int", "signed": "int",
    "unsigned": "unsigned int", "unsigned int": "unsigned int", "short": "short",
    "short int": "short", "signed short": "short", "unsigned short": "unsigned short",
    "unsigned short int": "unsigned short", "char": "char", "signed char": "signed char",
    "unsigned char": "unsigned char", "long": "long", "long int": "long", "long long": "long",
    "unsigned long": "unsigned long", "unsigned long long": "unsigned long",
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short",
    "uint16_t": "unsigned short", "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long", "uint64_t": "unsigned long",
}


def parse_kernel(
    path: str | Path, source: str, defines: Mapping[str, str] | None = None
) -> list[Scop]:
    """Every scop region of the C file ``path`` whose text is ``source``.

    ``defines`` are ``-D NAME=VALUE`` overrides; size macros (``#define I 64``)
    become named parameters of the scop.
    """
    path = Path(path)
    pre = preprocess(path, source, defines or {})
    try:
        ast = c_parser.CParser().parse(pre.text, filename=str(path))
    except c_parser.ParseError as exc:
        raise KernelParseError(f"{exc}: C syntax error; fix the source") from None
    sizes = dict(pre.sizes)
    globals_ = _array_decls(ast.ext, sizes, {})
    scops: list[Scop] = []
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            params = ext.decl.type.args.params if ext.decl.type.args else []
            arrays = _array_decls(params, sizes, globals_, scalars=True)
            scops.extend(_scops_in(ext.body, path, sizes, arrays, ext.decl.name))
    if not scops:
        raise NoScopError(
            f"{path}: no `#pragma scop` ... `#pragma endscop` region found inside a function; "
            "wrap the loop nest to map in those two pragmas"
        )
    return scops


# --- declarations ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Decl:
    array: Array | None  # None for a pointer (or a scalar)
    loc: SourceLoc
    scalar: Scalar | None = None  # a scalar parameter of the function (`float alpha`)


def _loc(node: c_ast.Node) -> SourceLoc:
    coord = node.coord
    if coord is None:
        return SourceLoc("<unknown>", 0)
    return SourceLoc(str(coord.file), int(coord.line))


def _array_decls(
    nodes: Sequence[c_ast.Node], sizes: Mapping[str, int], outer: Mapping[str, _Decl], *,
    scalars: bool = False,
) -> dict[str, _Decl]:
    """Arrays (and, with ``scalars``, the scalar parameters) declared by ``nodes``."""
    out = dict(outer)
    for node in nodes:
        if not isinstance(node, c_ast.Decl) or node.name is None:
            continue
        t = node.type
        dims: list[c_ast.Node | None] = []
        while isinstance(t, c_ast.ArrayDecl):
            dims.append(t.dim)
            t = t.type
        if isinstance(t, c_ast.PtrDecl):
            out[node.name] = _Decl(None, _loc(node))
            continue
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            continue
        elem = _TYPE_ALIASES.get(" ".join(t.type.names))
        loc = _loc(node)
        if not dims:
            if scalars and elem is not None:
                out[node.name] = _Decl(None, loc, Scalar(node.name, elem))
            continue
        if elem is None:
            raise UnsupportedConstructError(
                f"{loc}: array `{node.name}` has element type `{' '.join(t.type.names)}`; "
                f"supported: {', '.join(sorted(ELEM_BITS))}"
            )
        shape: list[Affine] = []
        for d in dims:
            if d is None:
                raise UnknownArrayError(
                    f"{loc}: array `{node.name}` has a dimension without extent; give every "
                    "dimension a size, e.g. `float A[I][K]`"
                )
            shape.append(_affine(d, (), sizes, what=f"extent of array `{node.name}`"))
        out[node.name] = _Decl(Array(node.name, elem, tuple(shape)), loc)
    return out


# --- scop regions ------------------------------------------------------------------


def _scops_in(
    body: c_ast.Compound, path: Path, sizes: Mapping[str, int],
    arrays: dict[str, _Decl], function: str,
) -> list[Scop]:
    scops: list[Scop] = []
    items = list(body.block_items or [])
    local = _array_decls(items, sizes, arrays)
    start: int | None = None
    for n, item in enumerate(items):
        if isinstance(item, c_ast.Pragma):
            word = item.string.strip()
            if word == "scop":
                start = n
            elif word == "endscop" and start is not None:
                region = items[start + 1 : n]
                scops.append(_build_scop(region, _loc(items[start]), path, sizes, local, function))
                start = None
        elif isinstance(item, c_ast.Compound):
            scops.extend(_scops_in(item, path, sizes, local, function))
    if start is not None:
        raise NoScopError(f"{_loc(items[start])}: `#pragma scop` without a matching `#pragma endscop`")
    return scops


class _Builder:
    def __init__(self, sizes: Mapping[str, int], arrays: Mapping[str, _Decl]) -> None:
        self.sizes = sizes
        self.arrays = arrays
        self.statements: list[Statement] = []
        self.used_arrays: dict[str, Array] = {}
        self.used_scalars: dict[str, Scalar] = {}

    def walk(
        self, node: c_ast.Node, loops: tuple[Loop, ...],
        guards: tuple[tuple[Affine, str], ...], position: tuple[int, ...],
    ) -> None:
        if isinstance(node, c_ast.Compound):
            for k, child in enumerate(node.block_items or []):
                self.walk(child, loops, guards, position[:-1] + (position[-1] + k,))
        elif isinstance(node, c_ast.For):
            loop = self._loop(node, loops)
            self.walk(node.stmt, loops + (loop,), guards, position + (0,))
        elif isinstance(node, c_ast.If):
            iters = tuple(lp.name for lp in loops)
            conds = self._condition(node.cond, iters)
            self.walk(node.iftrue, loops, guards + conds, position)
            if node.iffalse is not None:
                other = self._complement(node, conds, loops, guards)
                self.walk(node.iffalse, loops, guards + other, position)  # exclusive: same slot
        elif isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.ArrayDecl) and node.init is None:
            self.arrays = _array_decls([node], self.sizes, self.arrays)  # a local array of the scop
        elif isinstance(node, c_ast.Assignment):
            self._statement(node, loops, guards, position)
        elif isinstance(node, c_ast.Pragma | c_ast.EmptyStatement):
            return
        else:
            raise UnsupportedConstructError(
                f"{_loc(node)}: {_describe(node)} is not supported inside a scop; a scop holds "
                "`for` loops with affine bounds, affine `if` guards and assignments to arrays"
            )

    # loops ------------------------------------------------------------------------

    def _loop(self, node: c_ast.For, loops: tuple[Loop, ...]) -> Loop:
        loc = _loc(node)
        outer = tuple(lp.name for lp in loops)
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
            name, lb_node = init.decls[0].name, init.decls[0].init
        elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(
            init.lvalue, c_ast.ID
        ):
            name, lb_node = init.lvalue.name, init.rvalue
        else:
            raise UnsupportedConstructError(
                f"{loc}: loop initialisation must be `int i = <affine>` or `i = <affine>`"
            )
        if lb_node is None or name in outer:
            raise UnsupportedConstructError(f"{loc}: loop `{name}` needs a fresh iterator with a start value")
        lower = _affine(lb_node, outer, self.sizes, what=f"lower bound of loop `{name}`")
        cond = node.cond
        if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=")
                and isinstance(cond.left, c_ast.ID) and cond.left.name == name):
            raise UnsupportedConstructError(
                f"{loc}: loop condition must be `{name} < <affine>` or `{name} <= <affine>`"
            )
        upper = _affine(cond.right, outer, self.sizes, what=f"upper bound of loop `{name}`")
        if cond.op == "<=":
            upper = upper + Affine.constant(1)
        if not _is_unit_step(node.next, name):
            raise UnsupportedConstructError(
                f"{loc}: loop `{name}` must step by +1 (`{name}++`, `++{name}` or `{name} += 1`)"
            )
        return Loop(name, lower, upper, loc)

    def _complement(
        self, node: c_ast.If, conds: tuple[tuple[Affine, str], ...], loops: tuple[Loop, ...],
        guards: tuple[tuple[Affine, str], ...],
    ) -> tuple[tuple[Affine, str], ...]:
        """The `else` branch's guard: the negation of the (one) condition ``conds``, as one
        affine constraint within the enclosing loops and guards (``k == 0`` negates to
        ``k >= 1`` when the loop starts at 0)."""
        if len(conds) != 1:
            raise UnsupportedConstructError(
                f"{_loc(node)}: an `else` after a condition with `&&` is a union of polyhedra; write "
                "the complement as separate `if`s"
            )
        aff, kind = conds[0]
        one = Affine.constant(1)
        if kind == ">=0":
            return ((-aff - one, ">=0"),)
        ctx: list[tuple[Affine, str]] = list(guards)
        for lp in loops:
            it = Affine.var(lp.name)
            ctx += [(it - lp.lower, ">=0"), (lp.upper - it - one, ">=0")]
        iters = [lp.name for lp in loops]
        sides = [c for c in ((aff - one, ">=0"), (-aff - one, ">=0"))
                 if not box_set(iters, list(self.sizes), [*ctx, c]).is_empty()]
        if len(sides) != 1:
            raise UnsupportedConstructError(
                f"{_loc(node)}: the `else` of `{_source_text(node.cond)}` holds on both sides of it "
                "(a union of polyhedra); write the two sides as separate `if`s"
            )
        return (sides[0],)

    def _condition(self, cond: c_ast.Node, iters: tuple[str, ...]) -> tuple[tuple[Affine, str], ...]:
        loc = _loc(cond)
        if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
            return self._condition(cond.left, iters) + self._condition(cond.right, iters)
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "=="):
            lhs = _affine(cond.left, iters, self.sizes, what="`if` condition")
            rhs = _affine(cond.right, iters, self.sizes, what="`if` condition")
            one = Affine.constant(1)
            if cond.op == "<":
                return ((rhs - lhs - one, ">=0"),)
            if cond.op == "<=":
                return ((rhs - lhs, ">=0"),)
            if cond.op == ">":
                return ((lhs - rhs - one, ">=0"),)
            if cond.op == ">=":
                return ((lhs - rhs, ">=0"),)
            return ((lhs - rhs, "==0"),)
        raise NotAffineError(
            f"{loc}: `if` condition must be a conjunction (`&&`) of affine comparisons "
            "(<, <=, >, >=, ==) of loop iterators and size parameters"
        )

    # statements -------------------------------------------------------------------

    def _statement(
        self, node: c_ast.Assignment, loops: tuple[Loop, ...],
        guards: tuple[tuple[Affine, str], ...], position: tuple[int, ...],
    ) -> None:
        loc = _loc(node)
        if node.op not in ("=", "+=", "-=", "*="):
            raise UnsupportedConstructError(
                f"{loc}: assignment operator `{node.op}` is not supported; use =, +=, -= or *= "
                "(or their spellings `X = X + e`, `X = e + X`, `X = X - e`, `X = X * e`)"
            )
        name = f"S{len(self.statements)}"
        iters = tuple(lp.name for lp in loops)
        refs: list[Reference] = []
        if isinstance(node.lvalue, c_ast.ID):
            raise UnsupportedConstructError(
                f"{loc}: `{_source_text(node)}` writes the scalar `{node.lvalue.name}`; a scop may write "
                "array elements only: a scalar temporary carries values from one statement instance "
                "to the next, which no uniform dependence describes (expand it into an array indexed "
                "by the enclosing loops, or make it a separate computation)"
            )
        if not isinstance(node.lvalue, c_ast.ArrayRef):
            raise UnsupportedConstructError(
                f"{loc}: the left-hand side must be an array element such as `C[i][j]`, "
                f"not {_describe(node.lvalue)}"
            )
        target = self._reference(node.lvalue, iters, "write", name, refs)
        op, rhs_nodes = _reduction_form(node)
        rhs = self._combine(rhs_nodes, op, iters, name, refs)
        text = _source_text(node)
        self.statements.append(
            Statement(name, loops, guards, op, target, rhs, tuple(refs), position, loc, text)  # type: ignore[arg-type]
        )

    def _combine(
        self, terms: list[tuple[str, c_ast.Node]], op: str, iters: tuple[str, ...], stmt: str,
        refs: list[Reference],
    ) -> RExpr:
        """The right-hand side rebuilt from ``(sign, node)`` terms (a sum for ``=``, ``+=``
        and ``-=``, a product for ``*=``), left to right so references keep their order."""
        out: RExpr | None = None
        for sign, t in terms:
            e = self._rexpr(t, iters, stmt, refs)
            first = Neg(e) if sign == "-" else e
            out = first if out is None else BinOp(sign, out, e)  # type: ignore[arg-type]
        assert out is not None
        return out

    def _reference(
        self, node: c_ast.ArrayRef, iters: tuple[str, ...], kind: str, stmt: str,
        refs: list[Reference],
    ) -> str:
        loc = _loc(node)
        subs: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        subs.reverse()
        if not isinstance(base, c_ast.ID):
            raise UnsupportedConstructError(f"{loc}: {_describe(base)} used as an array")
        if base.name in iters:
            raise UnsupportedConstructError(
                f"{loc}: `{base.name}` is a loop iterator here and shadows the array "
                f"`{base.name}`; rename the array or the loop"
            )
        decl = self.arrays.get(base.name)
        if decl is None:
            raise UnknownArrayError(
                f"{loc}: array `{base.name}` is not declared; declare it with its shape and "
                f"element type (e.g. `float {base.name}[N][M];`) as a parameter, local or global"
            )
        if decl.scalar is not None:
            raise UnsupportedConstructError(
                f"{loc}: `{base.name}` is a scalar parameter (declared at {decl.loc}) used as an array"
            )
        if decl.array is None:
            raise UnsupportedConstructError(
                f"{loc}: `{base.name}` is a pointer (declared at {decl.loc}); declare it as an "
                f"array with its shape, e.g. `float {base.name}[N][M]`"
            )
        arr = decl.array
        if len(subs) != len(arr.shape):
            raise UnsupportedConstructError(
                f"{loc}: `{base.name}` has {len(arr.shape)} dimensions but is subscripted with "
                f"{len(subs)}"
            )
        affs = tuple(
            _affine(s, iters, self.sizes, what=f"subscript {k} of `{base.name}`", allow_params=True)
            for k, s in enumerate(subs)
        )
        self.used_arrays[arr.name] = arr
        ref_id = f"{stmt}_{arr.name}_{sum(1 for r in refs if r.array == arr.name)}"
        refs.append(Reference(ref_id, arr.name, kind, affs))  # type: ignore[arg-type]
        return ref_id

    def _rexpr(self, node: c_ast.Node, iters: tuple[str, ...], stmt: str, refs: list[Reference]) -> RExpr:
        loc = _loc(node)
        if isinstance(node, c_ast.ArrayRef):
            return Read(self._reference(node, iters, "read", stmt, refs))
        if isinstance(node, c_ast.Constant):
            return Num(_number(node))
        if isinstance(node, c_ast.ID):
            if node.name in self.sizes:
                return ParamRef(node.name)
            if node.name in iters:
                raise UnsupportedConstructError(
                    f"{loc}: loop iterator `{node.name}` used as a value; a systolic array "
                    "computes on array data only"
                )
            decl = self.arrays.get(node.name)
            if decl is not None and decl.scalar is not None:
                self.used_scalars[node.name] = decl.scalar
                return ScalarRef(node.name)
            if decl is not None and decl.array is not None:
                raise UnsupportedConstructError(
                    f"{loc}: array `{node.name}` used without subscripts; write an element such as "
                    f"`{node.name}[i]`"
                )
            raise UnknownArrayError(
                f"{loc}: `{node.name}` is neither an array, a size parameter (`#define NAME <integer>`) "
                "nor a scalar parameter of the kernel function (e.g. `float alpha`); scalars "
                "declared inside the function are not supported: pass them as parameters"
            )
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*", "/"):
            return BinOp(node.op, self._rexpr(node.left, iters, stmt, refs),
                         self._rexpr(node.right, iters, stmt, refs))
        if isinstance(node, c_ast.UnaryOp) and node.op == "-":
            return Neg(self._rexpr(node.expr, iters, stmt, refs))
        if isinstance(node, c_ast.UnaryOp) and node.op == "+":
            return self._rexpr(node.expr, iters, stmt, refs)
        raise UnsupportedConstructError(
            f"{loc}: {_describe(node)} is not supported in a statement; use array elements, "
            "constants and + - *"
        )


_MAXMIN = ("max", "min", "fmax", "fmin", "fmaxf", "fminf", "fmaxl", "fminl")


def _reduction_form(node: c_ast.Assignment) -> tuple[str, list[tuple[str, c_ast.Node]]]:
    """The statement's operator and right-hand side as signed terms, every spelling of a
    reduction normalised to its compound form: ``X = X + e`` and ``X = e + X`` are ``X += e``,
    ``X = X - e`` (every other term subtracted) is ``X -= e``, ``X = X * e`` and
    ``X = e * X`` are ``X *= e``. Other assignments keep their operator; a max/min
    reduction and ``X = e - X`` are rejected with the reason."""
    loc = _loc(node)
    target = _source_text(node.lvalue)
    if node.op != "=":
        return node.op, [("+", node.rvalue)]
    rv = node.rvalue
    if _is_maxmin(rv, target):
        raise UnsupportedConstructError(
            f"{loc}: `{_source_text(node)}` is a max/min reduction; odyssey's PEs accumulate with "
            "+, - or * only (a max/min accumulator needs a comparator in place of the adder and its "
            "identity -inf/+inf, which the generator does not build); supported reductions are "
            "`X += e`, `X -= e`, `X *= e` and their spellings `X = X + e`, `X = X - e`, `X = X * e`"
        )
    terms = _terms(rv, "+", ("+", "-"))
    hits = [k for k, (_, t) in enumerate(terms) if _source_text(t) == target]
    if len(terms) > 1 and hits:
        if len(hits) > 1 or terms[hits[0]][0] == "-":
            raise UnsupportedConstructError(
                f"{loc}: `{_source_text(node)}` is not a reduction: `{target}` appears "
                + ("more than once" if len(hits) > 1 else "subtracted (its sign flips at every step)")
                + "; write the update as `X += e` or `X -= e` (or `X = X + e`, `X = X - e`)"
            )
        rest = [t for k, t in enumerate(terms) if k != hits[0]]
        _no_target(rest, target, node)
        if all(sign == "-" for sign, _ in rest):
            return "-=", [("+", t) for _, t in rest]
        return "+=", rest  # `X = X - a + b` is `X += -a + b`
    factors = _terms(rv, "*", ("*",))
    hits = [k for k, (_, t) in enumerate(factors) if _source_text(t) == target]
    if len(factors) > 1 and hits:
        if len(hits) > 1:
            raise UnsupportedConstructError(
                f"{loc}: `{_source_text(node)}` multiplies `{target}` by itself; it is not a reduction"
            )
        rest = [("*", t) for k, (_, t) in enumerate(factors) if k != hits[0]]
        _no_target(rest, target, node)
        return "*=", rest
    return "=", [("+", rv)]


def _terms(n: c_ast.Node, sign: str, ops: tuple[str, ...]) -> list[tuple[str, c_ast.Node]]:
    """``n`` flattened over the left-associative operators ``ops`` into signed terms."""
    if isinstance(n, c_ast.BinaryOp) and n.op in ops:
        right_sign = sign if n.op != "-" else ("-" if sign == "+" else "+")
        return _terms(n.left, sign, ops) + _terms(n.right, right_sign, ops)
    return [(sign, n)]


def _no_target(rest: list[tuple[str, c_ast.Node]], target: str, node: c_ast.Assignment) -> None:
    class _Refs(c_ast.NodeVisitor):
        def __init__(self) -> None:
            self.found = False

        def visit_ArrayRef(self, n: c_ast.ArrayRef) -> None:
            self.found = self.found or _source_text(n) == target
            self.generic_visit(n)

    for _, t in rest:
        v = _Refs()
        v.visit(t)
        if v.found:
            raise UnsupportedConstructError(
                f"{_loc(node)}: `{_source_text(node)}` reads `{target}` again inside the increment; "
                "a reduction reads its target once (`X = X + e` with `e` free of `X`)"
            )


def _is_maxmin(n: c_ast.Node, target: str) -> bool:
    if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in _MAXMIN:
        args = n.args.exprs if n.args is not None else []
        return any(_source_text(a) == target for a in args)
    if isinstance(n, c_ast.TernaryOp) and isinstance(n.cond, c_ast.BinaryOp) and n.cond.op in ("<", "<=", ">", ">="):
        return target in (_source_text(n.iftrue), _source_text(n.iffalse))
    return False


def _build_scop(
    region: list[c_ast.Node], loc: SourceLoc, path: Path, sizes: Mapping[str, int],
    arrays: Mapping[str, _Decl], function: str,
) -> Scop:
    b = _Builder(sizes, arrays)
    for k, node in enumerate(region):
        b.walk(node, (), (), (k,))
    if not b.statements:
        raise NoScopError(f"{loc}: the scop region contains no statement; put the loop nest inside it")
    used = [a for a in b.used_arrays.values()]
    params = tuple((n, v) for n, v in sizes.items())
    scalars = tuple(d.scalar for d in arrays.values() if d.scalar is not None and d.scalar.name in b.used_scalars)
    return Scop(str(path), loc, params, tuple(used), tuple(b.statements), function, scalars)


# --- expressions -------------------------------------------------------------------


def _affine(
    node: c_ast.Node, iters: Sequence[str], sizes: Mapping[str, int], *, what: str,
    allow_params: bool = True,
) -> Affine:
    loc = _loc(node)

    def go(n: c_ast.Node) -> Affine:
        if isinstance(n, c_ast.Constant):
            v = _number(n)
            if not isinstance(v, int):
                raise NotAffineError(f"{loc}: {what} uses the non-integer constant {n.value}")
            return Affine.constant(v)
        if isinstance(n, c_ast.ID):
            if n.name in iters or (allow_params and n.name in sizes):
                return Affine.var(n.name)
            raise NotAffineError(
                f"{loc}: {what} uses `{n.name}`, which is neither an enclosing loop iterator "
                "nor a size parameter (#define NAME <integer>)"
            )
        if isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+"):
            inner = go(n.expr)
            return -inner if n.op == "-" else inner
        if isinstance(n, c_ast.BinaryOp) and n.op in ("+", "-"):
            lhs, rhs = go(n.left), go(n.right)
            return lhs + rhs if n.op == "+" else lhs - rhs
        if isinstance(n, c_ast.BinaryOp) and n.op == "*":
            lhs, rhs = go(n.left), go(n.right)
            if lhs.is_constant():
                return rhs.scale(lhs.const)
            if rhs.is_constant():
                return lhs.scale(rhs.const)
            raise NotAffineError(
                f"{loc}: {what} `{_source_text(n)}` multiplies two non-constant terms, so it is "
                "not affine in the loop iterators; rewrite it as a sum of iterators times constants"
            )
        raise NotAffineError(
            f"{loc}: {what} `{_source_text(n)}` is not affine ({_describe(n)}); use sums of "
            "loop iterators and size parameters times integer constants"
        )

    return go(node)


def _number(node: c_ast.Constant) -> int | float:
    text = node.value.rstrip("uUlLfF") if node.type != "char" else node.value
    if node.type in ("int", "long int", "unsigned int", "long long int"):
        return int(text, 0)
    if node.type in ("float", "double"):
        return float(text)
    raise UnsupportedConstructError(f"{_loc(node)}: constant {node.value} of type {node.type}")


def _is_unit_step(node: c_ast.Node | None, name: str) -> bool:
    if isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++"):
        return isinstance(node.expr, c_ast.ID) and node.expr.name == name
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and node.lvalue.name == name:
        if node.op == "+=":
            return isinstance(node.rvalue, c_ast.Constant) and node.rvalue.value == "1"
        if node.op == "=" and isinstance(node.rvalue, c_ast.BinaryOp) and node.rvalue.op == "+":
            left, right = node.rvalue.left, node.rvalue.right
            return (isinstance(left, c_ast.ID) and left.name == name
                    and isinstance(right, c_ast.Constant) and right.value == "1")
    return False


def _describe(node: c_ast.Node) -> str:
    if isinstance(node, c_ast.While):
        return "a `while` loop"
    if isinstance(node, c_ast.DoWhile):
        return "a `do`-`while` loop"
    if isinstance(node, c_ast.FuncCall):
        name = node.name.name if isinstance(node.name, c_ast.ID) else "?"
        return f"a call of function `{name}`"
    if isinstance(node, c_ast.UnaryOp) and node.op == "*":
        return "a pointer dereference"
    if isinstance(node, c_ast.UnaryOp) and node.op == "&":
        return "taking an address"
    if isinstance(node, c_ast.StructRef):
        return "a struct or pointer member access"
    if isinstance(node, c_ast.Decl | c_ast.DeclList):
        return "a declaration"
    if isinstance(node, c_ast.BinaryOp):
        return f"operator `{node.op}`"
    if isinstance(node, c_ast.Cast):
        return "a cast"
    if isinstance(node, c_ast.TernaryOp):
        return "a conditional expression `?:`"
    if isinstance(node, c_ast.Goto | c_ast.Break | c_ast.Continue | c_ast.Return):
        return f"a `{type(node).__name__.lower()}` statement"
    return f"a {type(node).__name__} construct"


def _source_text(node: c_ast.Node) -> str:
    from pycparser import c_generator

    return str(c_generator.CGenerator().visit(node))
