"""In-memory compilation of expressions to one native loop (LLVM, through llvmlite).

:func:`compile_native` turns the expressions of a model into LLVM IR for a single function
that loops over the points of a batch and computes every output of a point in registers:
no intermediate array, no pass over memory per operation, the shared subexpressions computed
once per point. The IR is built as text in memory and compiled by llvmlite's MCJIT; nothing
is written to disk.

It computes what :func:`odyssey.expr.vectorize.compile_vectorized` computes, operation for
operation: integer nodes in int64 (``FloorDiv``/``CeilDiv`` floor and ceil exactly, a zero
denominator gives 0), float nodes in IEEE double without reassociation or contraction, each
``Add``/``Mul``/``Max``/``Min`` folded left to right with numpy's promotion at the step where
a float first appears, ``np.maximum``'s NaN rule, and the same libm calls for ``log2`` and
``pow``. numpy's evaluator moves an integer sum, product or power (and what uses it) to
float64 where its magnitude could reach ``2**62``, judged from each call's inputs; this one
judges once, from the inputs' stated bounds (``bounds``: a bound on each input's
``|value|``), so it moves the same operations whenever a batch reaches its bounds, and at
most more of them otherwise: the values are the same wherever the integers involved stay
below ``2**53`` (exact in float64), but such an output may then be float64 where numpy's is
int64. A call whose inputs exceed the bounds is refused with a :class:`ModelError`.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import struct
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from odyssey.errors import ModelError
from odyssey.expr.core import (
    Add,
    Ceil,
    CeilDiv,
    Const,
    Div,
    Eq,
    Expr,
    Floor,
    FloorDiv,
    Le,
    Log2,
    Lt,
    Max,
    Min,
    Mul,
    Pow,
    Sym,
    Where,
    _Cmp,
)
from odyssey.expr.vectorize import compile_vectorized, param_index

#: as :data:`odyssey.expr.vectorize._INT_LIMIT`: an integer sum, product or power whose
#: magnitude could reach this runs in float64, as there
_INT_LIMIT = float(2**62)
_INF = float("inf")

_I, _F, _B = "i64", "double", "i1"


def available() -> bool:
    """Whether llvmlite can be imported (the native path is then used where it applies)."""
    return _engine() is not None


@functools.cache
def _engine() -> Any:
    try:
        import llvmlite.binding as llvm
    except ImportError:  # pragma: no cover - llvmlite is a dependency; a broken install falls back
        return None
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                      opt=3)
    backing = llvm.parse_assembly("")
    ee = llvm.create_mcjit_compiler(backing, tm)
    return llvm, tm, ee


def _fconst(x: float) -> str:
    return f"0x{struct.unpack('<Q', struct.pack('<d', float(x)))[0]:016X}"


class _Builder:
    """The loop body's instructions, one SSA value per node and type."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.decls: set[str] = set()

    def tmp(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def op(self, text: str) -> str:
        name = self.tmp()
        self.lines.append(f"  {name} = {text}")
        return name

    def as_f(self, v: tuple[str, str]) -> str:
        val, t = v
        if t == _F:
            return val
        if t == _B:
            val = self.op(f"zext i1 {val} to i64")
        return self.op(f"sitofp i64 {val} to double")

    def call(self, fn: str, args: list[str]) -> str:
        self.decls.add(fn)
        return self.op(f"call double @{fn}({', '.join('double ' + a for a in args)})")


_INTRINSICS = {
    "llvm.floor.f64": "declare double @llvm.floor.f64(double)",
    "llvm.ceil.f64": "declare double @llvm.ceil.f64(double)",
    "log2": "declare double @log2(double)",
    "llvm.ctlz.i64": "declare i64 @llvm.ctlz.i64(i64, i1)",
    "pow": "declare double @pow(double, double)",
}


_V = tuple[str, str, float]  # an SSA value, its type and a bound on its magnitude


class _Emitter:
    """Emits each distinct node once (numpy's evaluator's common subexpressions), with the
    type numpy would give it; ``memo`` maps a node (or ``("num", comparison)``, a comparison
    used as a 0/1 number) to its value."""

    def __init__(self, b: _Builder, index: Mapping[str, int], bounds: Mapping[str, float]) -> None:
        self.b, self.index, self.bounds = b, index, bounds
        self.memo: dict[Any, _V] = {}

    def emit(self, e: Expr, want_number: bool = True) -> _V:
        key: Any = ("num", e) if want_number and isinstance(e, _Cmp) else e
        if key not in self.memo:
            if key is not e:  # a comparison used as a number: 0 or 1 as int64
                v = self.emit(e, want_number=False)
                self.memo[key] = (self.b.op(f"zext i1 {v[0]} to i64"), _I, 1.0)
            else:
                rule = getattr(self, "_" + type(e).__name__.lower(), None)
                if rule is None:  # pragma: no cover - every node type has a rule
                    raise ModelError(f"native: no rule for {type(e).__name__}")
                self.memo[key] = rule(e)
        return self.memo[key]

    def _sym(self, e: Sym) -> _V:
        g = self.b.op(f"getelementptr i64, ptr %pp{self.index[e.name]}, i64 %i")
        return self.b.op(f"load i64, ptr {g}"), _I, float(self.bounds[e.name])

    def _const(self, e: Const) -> _V:
        v = e.value
        if isinstance(v, int) and abs(v) < _INT_LIMIT:
            return str(int(v)), _I, float(abs(v))
        return _fconst(float(v)), _F, _INF

    def _fold(self, e: Expr, iop: str, fop: str, mag: float) -> _V:
        """A left fold of ``e``'s children, in int64 while both sides are integers."""
        b = self.b
        kids = [self.emit(c) for c in e.children()]
        if mag >= _INT_LIMIT and iop in ("add", "mul"):  # numpy's evaluator: arguments to float64 first
            kids = [(b.as_f(k[:2]), _F, _INF) for k in kids]
        val, typ = kids[0][0], kids[0][1]
        for k in kids[1:]:
            if typ == _I and k[1] == _I:
                val = b.op(f"{iop} i64 {val}, {k[0]}") if iop in ("add", "mul") else _int_select(b, iop, val, k[0])
            else:
                x, y = b.as_f((val, typ)), b.as_f(k[:2])
                val, typ = (b.op(f"{fop} double {x}, {y}") if fop in ("fadd", "fmul") else _fp_select(b, fop, x, y)), _F
        return val, typ, (mag if typ == _I else _INF)

    def _add(self, e: Add) -> _V:
        return self._fold(e, "add", "fadd", sum(self.emit(c)[2] for c in e.children()))

    def _mul(self, e: Mul) -> _V:
        return self._fold(e, "mul", "fmul", math.prod(self.emit(c)[2] for c in e.children()))

    def _max(self, e: Max) -> _V:
        return self._fold(e, "sge", "oge", max(self.emit(c)[2] for c in e.children()))

    def _min(self, e: Min) -> _V:
        return self._fold(e, "sle", "ole", max(self.emit(c)[2] for c in e.children()))

    def _div(self, e: Div) -> _V:
        x, y = self.emit(e.num), self.emit(e.den)
        return self.b.op(f"fdiv double {self.b.as_f(x[:2])}, {self.b.as_f(y[:2])}"), _F, _INF

    def _floordiv(self, e: FloorDiv | CeilDiv) -> _V:
        b = self.b
        x, y = self.emit(e.num), self.emit(e.den)
        ceil = isinstance(e, CeilDiv)
        if x[1] == _I and y[1] == _I:
            num = b.op(f"sub i64 0, {x[0]}") if ceil else x[0]
            exact = max(x[2], y[2]) <= _FDIV_EXACT
            q = _fp_floordiv(b, num, y[0]) if exact else _int_floordiv(b, num, y[0])
            return (b.op(f"sub i64 0, {q}") if ceil else q), _I, x[2]
        r = b.op(f"fdiv double {b.as_f(x[:2])}, {b.as_f(y[:2])}")
        return b.call("llvm.ceil.f64" if ceil else "llvm.floor.f64", [r]), _F, _INF

    _ceildiv = _floordiv

    def _ceil(self, e: Ceil | Floor) -> _V:
        if isinstance(e, Ceil) and isinstance(e.arg, Log2):
            x = self.emit(e.arg.arg)
            if x[1] == _I and x[2] < _LOG2_EXACT:
                return _ceil_log2(self.b, x[0]), _F, _INF
        v = self.emit(e.arg)
        if v[1] == _I:
            return v
        return self.b.call("llvm.ceil.f64" if isinstance(e, Ceil) else "llvm.floor.f64", [v[0]]), _F, _INF

    _floor = _ceil

    def _log2(self, e: Log2) -> _V:
        return self.b.call("log2", [self.b.as_f(self.emit(e.arg)[:2])]), _F, _INF

    def _pow(self, e: Pow) -> _V:
        b = self.b
        x, k = self.emit(e.base), e.exp
        if k >= 0 and x[1] == _I and x[2] ** k < _INT_LIMIT:
            return _int_pow(b, x[0], k), _I, x[2] ** k
        xf = b.as_f(x[:2])
        if k == 2:  # numpy multiplies
            return b.op(f"fmul double {xf}, {xf}"), _F, _INF
        return b.call("pow", [xf, _fconst(float(k))]), _F, _INF

    def _where(self, e: Where) -> _V:
        b = self.b
        c = self.emit(e.cond, want_number=False)
        if c[1] == _B:
            cond = c[0]
        elif c[1] == _I:
            cond = b.op(f"icmp ne i64 {c[0]}, 0")
        else:
            cond = b.op(f"fcmp une double {c[0]}, 0.0")
        x, y = self.emit(e.a), self.emit(e.b)
        if x[1] == _I and y[1] == _I:
            return b.op(f"select i1 {cond}, i64 {x[0]}, i64 {y[0]}"), _I, max(x[2], y[2])
        return b.op(f"select i1 {cond}, double {b.as_f(x[:2])}, double {b.as_f(y[:2])}"), _F, _INF

    def _cmp(self, e: Le | Lt | Eq) -> _V:
        b = self.b
        x, y = self.emit(e.lhs), self.emit(e.rhs)
        if x[1] == _I and y[1] == _I:
            return b.op(f"icmp {_ICMP[type(e)]} i64 {x[0]}, {y[0]}"), _B, 1.0
        return b.op(f"fcmp {_FCMP[type(e)]} double {b.as_f(x[:2])}, {b.as_f(y[:2])}"), _B, 1.0

    _le = _lt = _eq = _cmp


_ICMP: dict[type[Expr], str] = {Le: "sle", Lt: "slt", Eq: "eq"}
_FCMP: dict[type[Expr], str] = {Le: "ole", Lt: "olt", Eq: "oeq"}


def _int_select(b: _Builder, pred: str, x: str, y: str) -> str:
    c = b.op(f"icmp {pred} i64 {x}, {y}")
    return b.op(f"select i1 {c}, i64 {x}, i64 {y}")


def _fp_select(b: _Builder, pred: str, x: str, y: str) -> str:
    """numpy's ``maximum`` (``oge``) or ``minimum`` (``ole``): ``(x >= y || isnan(x)) ? x : y``."""
    c1 = b.op(f"fcmp {pred} double {x}, {y}")
    c2 = b.op(f"fcmp uno double {x}, {x}")
    c = b.op(f"or i1 {c1}, {c2}")
    return b.op(f"select i1 {c}, double {x}, double {y}")


def _ir(exprs: Mapping[str, Expr], params: Sequence[str], bounds: Mapping[str, float]) -> tuple[str, list[str]]:
    """The module's IR (its function named ``@FNAME``) and each output's LLVM type."""
    b = _Builder()
    em = _Emitter(b, {p: i for i, p in enumerate(params)}, bounds)
    emit = em.emit

    results = [emit(e) for e in exprs.values()]
    stores = []
    types = []
    for k, (v, t, _) in enumerate(results):
        assert t != _B
        stores.append(f"  %g{k} = getelementptr {t}, ptr %po{k}, i64 %i\n  store {t} {v}, ptr %g{k}")
        types.append(t)
    decls = "\n".join(_INTRINSICS[d] for d in sorted(b.decls))
    # every array its own argument, none aliasing another: the loop then vectorizes
    args = ", ".join([f"ptr noalias readonly %pp{i}" for i in range(len(params))]
                     + [f"ptr noalias %po{k}" for k in range(len(results))])
    body = "\n".join(b.lines)
    ir = f"""
{decls}
define void @FNAME(i64 %n, {args}) {{
entry:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%inext, %loop]
{body}
{chr(10).join(stores)}
  %inext = add i64 %i, 1
  %more = icmp slt i64 %inext, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}}
"""
    return ir, types


#: integers up to this magnitude divide exactly in double precision: ``floor(fl(a / d))`` is
#: ``floor(a / d)``, since a quotient short of an integer by at least ``1 / |d|`` is not
#: rounded up to it while ``|a| < 2**52``; the division then vectorizes (AVX-512 has no
#: integer divide)
_FDIV_EXACT = float(2**51)
#: ``ceil(log2(x))`` of an integer ``x`` below this is the integer ``64 - ctlz(x - 1)``: an
#: ``x`` above ``2**m`` has ``log2(x) - m >= log2(1 + 2**-44) > 8e-14``, a dozen ulps of a
#: value below 64, so no ``log2`` within a few ulps rounds it down onto ``m``
_LOG2_EXACT = float(2**44)


def _fp_floordiv(b: _Builder, a: str, d: str) -> str:
    """``a // d`` (numpy's rules, 0 where ``d`` is 0) for ``|a|, |d| <= _FDIV_EXACT``."""
    fa = b.op(f"sitofp i64 {a} to double")
    fd = b.op(f"sitofp i64 {d} to double")
    r = b.op(f"fdiv double {fa}, {fd}")
    fl = b.call("llvm.floor.f64", [r])
    q = b.op(f"fptosi double {fl} to i64")
    zero = b.op(f"icmp eq i64 {d}, 0")
    return b.op(f"select i1 {zero}, i64 0, i64 {q}")


def _ceil_log2(b: _Builder, x: str) -> str:
    """``ceil(log2(x))`` as numpy computes it in double, for an integer ``x`` below
    ``_LOG2_EXACT``: ``64 - ctlz(x - 1)`` for ``x >= 1``, ``-inf`` at 0, NaN below."""
    b.decls.add("llvm.ctlz.i64")
    m1 = b.op(f"sub i64 {x}, 1")
    lz = b.op(f"call i64 @llvm.ctlz.i64(i64 {m1}, i1 false)")
    k = b.op(f"sub i64 64, {lz}")
    fk = b.op(f"sitofp i64 {k} to double")
    pos = b.op(f"icmp sgt i64 {x}, 0")
    zero = b.op(f"icmp eq i64 {x}, 0")
    low = b.op(f"select i1 {zero}, double 0xFFF0000000000000, double 0x7FF8000000000000")
    return b.op(f"select i1 {pos}, double {fk}, double {low}")


def _int_floordiv(b: _Builder, a: str, d: str) -> str:
    """``a // d`` with numpy's rules: rounded toward minus infinity, 0 where ``d`` is 0."""
    zero = b.op(f"icmp eq i64 {d}, 0")
    safe = b.op(f"select i1 {zero}, i64 1, i64 {d}")
    q = b.op(f"sdiv i64 {a}, {safe}")
    r = b.op(f"srem i64 {a}, {safe}")
    nz = b.op(f"icmp ne i64 {r}, 0")
    sx = b.op(f"xor i64 {r}, {safe}")
    neg = b.op(f"icmp slt i64 {sx}, 0")
    fix = b.op(f"and i1 {nz}, {neg}")
    adj = b.op(f"zext i1 {fix} to i64")
    q2 = b.op(f"sub i64 {q}, {adj}")
    return b.op(f"select i1 {zero}, i64 0, i64 {q2}")


def _int_pow(b: _Builder, x: str, k: int) -> str:
    if k == 0:
        return "1"
    acc = x
    for _ in range(k - 1):
        acc = b.op(f"mul i64 {acc}, {x}")
    return acc


#: compiled functions by their IR's digest (a design built twice compiles once; each keeps
#: about 1.2 MB of machine code and engine bookkeeping for the process's life), and the lock
#: that serialises compilation into the one execution engine
_CACHE: dict[str, Callable[..., None]] = {}
_LOCK = threading.Lock()


def _compile(ir: str) -> Callable[..., None]:
    key = hashlib.sha256(ir.encode()).hexdigest()  # not the IR itself: 0.1-0.3 MB a model
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _compile_new(ir)
        return _CACHE[key]


def _compile_new(ir: str) -> Callable[..., None]:
    llvm, tm, ee = _engine()
    name = f"odyssey_eval_{len(_CACHE)}"  # one engine holds every module: each its own symbol
    mod = llvm.parse_assembly(ir.replace("@FNAME", "@" + name))
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)
    # the engine loads the machine code alone: the IR (megabytes per model) is freed here
    obj = tm.emit_object(mod)
    mod.close()
    pb.close()
    ee.add_object_file(llvm.ObjectFileRef.from_data(obj))
    ee.finalize_object()
    addr = ee.get_function_address(name)
    arity = ir.count("ptr noalias")
    fn: Callable[..., None] = ctypes.CFUNCTYPE(None, ctypes.c_int64, *([ctypes.c_void_p] * arity))(addr)
    return fn


def compile_native(exprs: Mapping[str, Expr], params: Sequence[str], bounds: Mapping[str, float]
                   ) -> Callable[[Mapping[str, Any]], dict[str, np.ndarray]] | None:
    """One native function evaluating ``exprs`` over batches of points, as
    :func:`~odyssey.expr.vectorize.compile_vectorized` does (see the module), for integer
    inputs with ``|value| <= bounds[name]``; None where llvmlite cannot be imported."""
    if _engine() is None:
        return None
    param_index(exprs, params)
    ir, types = _ir(exprs, params, bounds)
    fn = _compile(ir)
    names = list(exprs)
    dtypes = [np.int64 if t == _I else np.float64 for t in types]
    limits = [float(bounds[p]) for p in params]

    def run(points: Mapping[str, Any]) -> dict[str, np.ndarray]:
        arrays = []
        n = None
        for p in params:
            if p not in points:
                raise ModelError(f"missing values for parameter {p!r}")
            a = np.asarray(points[p])
            if a.dtype.kind not in "biu":
                raise ModelError(f"parameter {p!r} must be integer for the native evaluator, got {a.dtype}")
            if a.ndim == 1:
                if n is not None and len(a) != n:
                    raise ModelError(f"parameter {p!r} has shape {a.shape}; all parameters must be 1-D arrays "
                                     f"of one length (here {n}) or scalars")
                n = len(a)
            arrays.append(a)
        length = 1 if n is None else n
        ins = []
        for p, a, lim in zip(params, arrays, limits, strict=True):
            a = np.ascontiguousarray(np.broadcast_to(a, (length,)), dtype=np.int64)
            if a.size and max(abs(int(a.max())), abs(int(a.min()))) > lim:
                raise ModelError(f"parameter {p!r} exceeds the bound {lim:g} the native evaluator was built for")
            ins.append(a)
        outs = [np.empty(length, dtype=dt) for dt in dtypes]
        fn(length, *[a.ctypes.data for a in ins], *[o.ctypes.data for o in outs])
        return dict(zip(names, outs, strict=True))

    return run


#: numpy's seconds before the adaptive evaluator starts compiling: two or three of numpy's
#: calls on a U250 model (about 4 ms each whatever the batch), so a one-off query never
#: compiles and a search starts at once. What the compilation costs the caller's thread is
#: the IR built in Python (0.03-0.06 s for the MM and CNN models, holding the interpreter's
#: lock); LLVM's passes and code generation (0.2-0.3 s) run in a background thread that
#: releases the lock (llvmlite calls LLVM through ctypes), beside the search. MM 1024^3
#: `ik-ik.j` under `odyssey tune --time 0.5`: 11-17 k samples against 7-11 k when the
#: compilation started after 0.05 s of numpy
COMPILE_COST_S = 0.01


class AdaptiveEvaluator:
    """numpy's evaluator until it has spent :data:`COMPILE_COST_S` seconds, then the native
    loop (:func:`compile_native`) where one applies: the same values either way, so a short
    evaluation never pays a compilation and a long one runs at native speed. The compilation
    runs in a background thread while numpy goes on evaluating (a search under a budget of
    half a second keeps searching instead of waiting for LLVM); :meth:`wait` joins it.
    ``bounds`` bound the inputs' magnitudes (:func:`compile_native`); the native loop is never
    pickled (a copy in another process compiles its own)."""

    def __init__(self, exprs: Mapping[str, Expr], params: Sequence[str], bounds: Mapping[str, float],
                 *, compile_after_s: float = COMPILE_COST_S) -> None:
        self.exprs, self.params, self.bounds = dict(exprs), list(params), dict(bounds)
        self.numpy = compile_vectorized(self.exprs, self.params)
        self.compile_after_s = compile_after_s
        self.spent_s = 0.0
        #: None: not compiled (yet); False: no native loop (llvmlite missing, or the
        #: compilation failed: ``native_error`` says why); else the compiled loop
        self.native: Callable[[Mapping[str, Any]], dict[str, np.ndarray]] | None | bool = None
        self.native_error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "native": None, "native_error": None, "_thread": None}

    def _compile_in_background(self) -> None:
        def work() -> None:
            try:
                self.native = compile_native(self.exprs, self.params, self.bounds) or False
            except Exception as exc:  # numpy's evaluator computes the same values: keep it
                self.native_error, self.native = exc, False
        self._thread = threading.Thread(target=work, name="odyssey-native-compile", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Block until a compilation under way has finished."""
        if self._thread is not None:
            self._thread.join()

    def __call__(self, points: Mapping[str, Any]) -> dict[str, np.ndarray]:
        native = self.native
        if native:
            return native(points)  # type: ignore[operator]
        if native is None and self._thread is None and self.spent_s > self.compile_after_s:
            self._compile_in_background()
        t0 = time.perf_counter()
        out = self.numpy(points)
        self.spent_s += time.perf_counter() - t0
        return out


__all__ = ["COMPILE_COST_S", "AdaptiveEvaluator", "available", "compile_native"]
