"""Systolic legality, space-time mappings and pruned loop orderings (Odyssey 3.2).

From a :class:`~odyssey.polyhedral.scop.Scop` this module derives the design
space of the paper: every legal choice of space loops (a *dataflow*), crossed
with the array-partitioning loop orderings that Theorem 3.1 keeps, each with
its tuning parameters.

Rules (each stated where it is applied):

* one computational statement per scop, plus optional *initialisers* (``C[i][j] = 0``,
  ``C[i][j] *= beta`` before the reduction) and *scalings* of the result after it, each
  writing exactly the elements the computation writes (checked on the isl access relations
  and schedule); ``+=``, ``-=`` and ``*=`` (in any spelling, ``C = C + e`` included: the
  front end normalises them) are associative reductions;
* every array written is accessed with one linear access function, so all its
  dependences are uniform;
* a band loop may be a space loop when every uniform flow and read reuse
  vector has distance 0 or 1 on it;
* ``RL(r)``: the array-partitioning loops carrying a uniform read/flow
  dependence of reference ``r`` along their own axis (the loops ``r`` does not
  depend on); the kept orderings are ``<NRL(r), RL(r)>`` for every ``r``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import islpy as isl

from odyssey.errors import DesignNotFoundError, IllegalMappingError
from odyssey.polyhedral.affine import Affine
from odyssey.polyhedral.dependences import Reuse, reuse_vectors, same_elements, write_order
from odyssey.polyhedral.scop import Scop, Statement, rexpr_ops

Level = Literal["array_part", "latency", "simd"]

#: widest SIMD vector a PE reads per cycle: ``ap_uint`` is limited to 1024 bits by default in
#: Vitis HLS, so the SIMD factor is at most ``1024 / element bits`` (32 lanes of fp32)
MAX_VECTOR_BITS = 1024


@dataclass(frozen=True, slots=True)
class BandLoop:
    """A loop of the array-partitioning band with its bounding box ``[lower, lower+extent)``."""

    name: str
    lower: int
    extent: int
    extent_expr: Affine | None  # symbolic extent in size parameters, when the box is rectangular
    rectangular: bool


@dataclass(frozen=True, slots=True)
class TuningParam:
    name: str
    loop: str
    level: Level
    lower: int
    upper: int
    divides: str | None

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "loop": self.loop, "level": self.level,
                "lower": self.lower, "upper": self.upper, "divides": self.divides}


@dataclass(frozen=True, slots=True)
class Operand:
    """How one reference reaches the PEs in a design."""

    ref_id: str
    array: str
    role: Literal["input", "output"]
    reuse_loops: tuple[str, ...]  # RL(r)
    transport: Literal["chain", "direct"]
    chain_loop: str | None  # space loop it flows (or reduces) along


@dataclass(frozen=True, slots=True)
class Design:
    """One point of the design space up to tiling: a dataflow and a loop ordering."""

    id: str
    index: int
    space_loops: tuple[str, ...]
    order: tuple[str, ...]  # array-partitioning loops, outer to inner
    order_groups: tuple[tuple[str, ...], tuple[str, ...]]  # (NRL, RL)
    time_loops: tuple[str, ...]
    band: tuple[BandLoop, ...]
    reduction_loops: tuple[str, ...]
    parallel_loops: tuple[str, ...]
    simd_candidates: tuple[str, ...]
    simd_loop: str | None
    operands: tuple[Operand, ...]
    output_accumulation: Literal["on_chip", "partial_sums_leave_array"]
    params: tuple[TuningParam, ...]
    #: percent of each PE's multiply lanes whose multiplier is built in LUT fabric, not a DSP
    #: slice (``floor(P * SIMD / 100)`` lanes; design id suffix ``+lutP``; integer statements)
    lut_mul_percent: int = 0
    #: PE drain processes that move a word of the output's lanes per cycle from a banked
    #: accumulator block (design id suffix ``+wd``), where by default a design whose drains
    #: read no partial sums has PEs that pack their own words
    #: (:attr:`odyssey.codegen.context.Ctx.pe_words`)
    word_drain: bool = False
    #: where the on-chip buffers are bound: ``rule`` (default: block RAM where a bank fills
    #: enough of its RAMB18E2s, ``platforms/fabric.json`` ``bram.min_fill``, else distributed
    #: RAM), ``bram`` (every buffer in block RAM however shallow, the binding AutoSA prints: id
    #: suffix ``+bram``) or ``uram`` (the I/O modules' blocks in UltraRAM, the rest by the rule:
    #: ``+uram``)
    storage: Literal["rule", "bram", "uram"] = "rule"

    @property
    def dataflow(self) -> str:
        return "[" + ",".join(self.space_loops) + "]"

    @property
    def ordering(self) -> str:
        nrl, rl = self.order_groups
        parts = ["[" + ",".join(g) + "]" for g in (nrl, rl) if g]
        return "<" + ",".join(parts) + ">"

    def loop(self, name: str) -> BandLoop:
        for b in self.band:
            if b.name == name:
                return b
        raise KeyError(name)

    def param(self, name: str) -> TuningParam:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class LoopLegality:
    loop: str
    space_ok: bool
    reason: str


@dataclass(frozen=True, slots=True)
class KernelSpace:
    """The analysed kernel: main statement, initialisers, reuse and the designs."""

    scop: Scop
    statement: str
    initializers: tuple[str, ...]  # constants and scalings of the output before the reduction
    band: tuple[BandLoop, ...]
    reuse: tuple[Reuse, ...]
    legality: tuple[LoopLegality, ...]
    orderings: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    designs: tuple[Design, ...]
    finalizers: tuple[str, ...] = ()  # scalings of the result after the reduction

    def design(self, key: str) -> Design:
        """The design of id (or index) ``key``, with optional suffixes, ``ID[@LOOP][+lutP][+wd][+bram|+uram]``:

        * ``@LOOP``: its SIMD lanes along reduction loop ``LOOP`` instead of its default one
          (the reduction loop of largest extent, the first of equal ones), as AutoSA lets its
          user choose: the SIMD tuning parameter ``T_<LOOP>2`` (at most the lane limit)
          replaces the default loop's; ``@`` with the default loop is the plain id;
        * ``+lutP``: ``P`` percent (1-100) of each PE's multiply lanes, ``floor(P * SIMD /
          100)``, multiply in LUT fabric instead of DSP slices (AutoSA's int8 board design
          moved half by hand: ``+lut50``); integer statements with one multiply per lane;
        * ``+wd``: PE drain processes that move a word of the output's lanes per cycle from a
          ping-pong accumulator block (LANES/2 banks, an operator per lane where the drain
          combines), for a design whose PEs would otherwise pack their own words (no partial
          sums read: :attr:`odyssey.codegen.context.Ctx.pe_words`);
        * ``+bram``: every on-chip buffer (feeders' and loaders' blocks, PE accumulators, partial
          sums) bound to block RAM however shallow, as AutoSA binds its buffers (``RAM_1P_BRAM``,
          ``RAM_2P_BRAM``): block RAM instead of the LUTs of distributed RAM for small banks;
        * ``+uram``: the I/O modules' blocks (inputs, partial sums) in UltraRAM (URAM288, 4K x
          72 bits each), which relieves the block RAM; the PEs' buffers stay by the rule."""
        rest, *suffixes = key.split("+")
        base, _, simd = rest.partition("@")
        for d in self.designs:
            if base in (d.id, str(d.index)):
                out = d if not simd else self._with_simd(d, simd, key)
                for suffix in suffixes:
                    if suffix == "wd":
                        out = self._with_word_drain(out, key)
                    elif suffix in ("bram", "uram"):
                        out = self._with_storage(out, "bram" if suffix == "bram" else "uram", key)
                    else:
                        out = self._with_lut_mul(out, suffix, key)
                return out
        known = ", ".join(d.id for d in self.designs)
        raise DesignNotFoundError(
            f"design `{base}` is not in the design space of this kernel; known ids: {known} "
            "(or their index 0..N-1; `ID@LOOP` puts the SIMD lanes along reduction loop LOOP)"
        )

    def _with_word_drain(self, d: Design, key: str) -> Design:
        if d.word_drain:
            raise DesignNotFoundError(f"design `{key}`: `+wd` given twice")
        return dataclasses.replace(d, id=f"{d.id}+wd", word_drain=True)

    def _with_storage(self, d: Design, storage: Literal["bram", "uram"], key: str) -> Design:
        if d.storage != "rule":
            raise DesignNotFoundError(f"design `{key}`: a binding (`+bram`, `+uram`) given twice; give one")
        return dataclasses.replace(d, id=f"{d.id}+{storage}", storage=storage)

    def _with_lut_mul(self, d: Design, suffix: str, key: str) -> Design:
        digits = suffix[3:] if suffix.startswith("lut") else ""
        if not digits.isdigit() or not 1 <= int(digits) <= 100:
            raise DesignNotFoundError(
                f"design `{key}`: `+{suffix}` is not a design option; write `+lutP` with P the percent "
                "(1-100) of each PE's multiply lanes built in LUT fabric, e.g. +lut50, `+wd` for PE "
                "drains that move a word per cycle, `+bram` for every buffer in block RAM or `+uram` for the "
                "I/O blocks in UltraRAM")
        main = self.scop.statement(self.statement)
        floats = sorted({r.array for r in main.refs if self.scop.array(r.array).is_float})
        if floats:
            raise DesignNotFoundError(
                f"design `{key}`: LUT multipliers are for integer datapaths; {', '.join(floats)} "
                "are floating point (drop the +lut suffix)")
        muls = rexpr_ops(main.rhs).count("mul")
        if muls != 1:
            raise DesignNotFoundError(
                f"design `{key}`: LUT multipliers need one multiply per lane; `{main.text}` has {muls} "
                "(drop the +lut suffix)")
        return dataclasses.replace(d, id=f"{d.id}+lut{int(digits)}", lut_mul_percent=int(digits))

    def _with_simd(self, d: Design, loop: str, key: str) -> Design:
        if loop not in d.simd_candidates:
            cands = ", ".join(d.simd_candidates) or "none: the statement has no reduction loop"
            raise DesignNotFoundError(
                f"design `{key}`: `{loop}` cannot carry the SIMD lanes; the reduction loops that can "
                f"are {cands} (write ID@LOOP with one of them, or ID for the default, {d.simd_loop})")
        if loop == d.simd_loop:
            return d
        widest = max(self.scop.array(r.array).bits for r in self.scop.statement(self.statement).refs)
        params = _params(d.band, d.parallel_loops, loop, max_lanes=MAX_VECTOR_BITS // widest)
        return dataclasses.replace(d, id=f"{d.id}@{loop}", simd_loop=loop, params=params)


def param_name(loop: str, level: int) -> str:
    return f"T_{loop}{level}"


def analyse(scop: Scop, *, max_dim: int = 2) -> KernelSpace:
    """Check systolic legality and enumerate the design space of ``scop``."""
    main, inits, finals = _main_statement(scop)
    _check_uniform(scop, main)
    band = _band(scop, main)
    names = tuple(b.name for b in band)
    reuse = tuple(reuse_vectors(main, r) for r in _refs_in_order(main))
    legality = _space_legality(names, reuse)
    eligible = [lg.loop for lg in legality if lg.space_ok]
    if not eligible:
        why = "; ".join(f"{lg.loop}: {lg.reason}" for lg in legality)
        raise IllegalMappingError(
            f"{main.loc}: statement `{main.text}` cannot be mapped to a systolic array: no loop "
            f"can be a space loop ({why})"
        )
    orderings: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for ru in reuse:
        rl = ru.unit_loops(names)
        nrl = tuple(n for n in names if n not in rl)
        # orderings with the same loop order are the same design: keep the first notation
        if all(a + b != nrl + rl for a, b in orderings):
            orderings.append((nrl, rl))
    mappings: list[tuple[str, ...]] = []
    for dim in range(1, max_dim + 1):
        mappings.extend(combinations(eligible, dim))
    target = reuse[0]
    reduction = target.unit_loops(names) if main.op != "=" else ()
    parallel = tuple(n for n in names if n not in reduction)
    simd_cands = reduction
    simd = max(simd_cands, key=lambda n: (_loop(band, n).extent, -names.index(n)), default=None)
    widest = max(scop.array(r.array).bits for r in main.refs)
    params = _params(band, parallel, simd, max_lanes=MAX_VECTOR_BITS // widest)
    designs: list[Design] = []
    for space in mappings:
        for nrl, rl in orderings:
            order = nrl + rl
            operands = tuple(_operand(ru, names, space, k == 0) for k, ru in enumerate(reuse))
            last_idx = max((order.index(n) for n in names if n not in reduction), default=-1)
            outer_red = any(order.index(n) < last_idx for n in reduction)
            designs.append(Design(
                id=_slug(space, nrl, rl), index=len(designs), space_loops=space, order=order,
                order_groups=(nrl, rl), time_loops=tuple(n for n in names if n not in space),
                band=band, reduction_loops=reduction, parallel_loops=parallel,
                simd_candidates=simd_cands, simd_loop=simd, operands=operands,
                output_accumulation="partial_sums_leave_array" if outer_red else "on_chip",
                params=params,
            ))
    return KernelSpace(scop, main.name, tuple(s.name for s in inits), band, reuse, legality,
                       tuple(orderings), tuple(designs), tuple(s.name for s in finals))


# --- pieces --------------------------------------------------------------------------


def _main_statement(scop: Scop) -> tuple[Statement, list[Statement], list[Statement]]:
    """The computation of the scop, its initialisers (prologue) and its scalings after the
    reduction (epilogue).

    The computation is the deepest statement reading an array (a reduction before an
    assignment). Every other statement must write the computation's target, element for
    element the ones the computation writes, each once, and read no other array: a constant
    (``C[i][j] = 0``) or a scaling of the old value (``C[i][j] *= beta``,
    ``C[i][j] = beta * C[i][j]``), all before the reduction on that element (an initialiser)
    or all after it (a scaling of the result)."""
    def reads_data(s: Statement) -> bool:
        return any(r.array != s.write.array for r in s.reads) or (s.op == "=" and bool(s.reads))

    cands = [s for s in scop.statements if reads_data(s)] or list(scop.statements)
    main = max(cands, key=lambda s: (len(s.loops), s.op != "="))
    _one_computation(cands, main)
    _check_uniform(scop, main)
    if "div" in rexpr_ops(main.rhs):
        raise IllegalMappingError(
            f"{main.loc}: `{main.text}` divides; the PEs have no divider (the platform op tables, "
            "odyssey/platforms/optable.json, cost add and mul only): multiply by a reciprocal "
            "computed outside the kernel"
        )
    inits: list[Statement] = []
    finals: list[Statement] = []
    for s in scop.statements:
        if s is main:
            continue
        why = _not_auxiliary(scop, s, main)
        if isinstance(why, str):
            raise IllegalMappingError(
                f"{s.loc}: statement `{s.text}` cannot be mapped with `{main.text}` (the computation, "
                f"at {main.loc}): {why}. odyssey maps one computation per scop, plus statements "
                f"that initialise its target `{main.write.array}` to a constant or scale it by a "
                "scalar, before or after the reduction; split the kernel into one scop (one file) "
                "per computation"
            )
        (inits if why else finals).append(s)
    return main, inits, finals


def _one_computation(cands: list[Statement], main: Statement) -> None:
    """Reject a scop with a second computation (a statement reading arrays into another
    target), saying whether the two are independent (split them) or one reads the other's
    result (run them one after the other)."""
    targets = list(dict.fromkeys(s.write.array for s in cands))
    if len(targets) > 2:
        lines = ", ".join(f"`{t}` (line {next(s.loc.line for s in cands if s.write.array == t)})" for t in targets)
        raise IllegalMappingError(
            f"{main.loc}: the scop is a system of {len(cands)} statements computing {len(targets)} arrays "
            f"that feed each other ({lines}), a uniform recurrence system such as AutoSA's uniformized "
            "LU. odyssey's PEs compute one statement: it maps one computation per scop (plus "
            "initialisers and scalings of its output), not several statements per PE; split the "
            "computations into kernels of their own where they do not feed each other inside the nest"
        )
    for s in cands:
        if s is main or s.write.array == main.write.array:
            continue
        pair = f"`{main.text}` (line {main.loc.line}) and `{s.text}` (line {s.loc.line})"
        feeds = [(a, b) for a, b in ((main, s), (s, main)) if any(r.array == a.write.array for r in b.reads)]
        if feeds:
            a, b = feeds[0]
            raise IllegalMappingError(
                f"{s.loc}: two dependent computations in one scop, {pair}: `{b.text}` reads "
                f"`{a.write.array}`, which `{a.text}` computes. odyssey maps one computation per scop; "
                f"run them as two kernels, one after the other (one file each: first the one writing "
                f"`{a.write.array}`, with its initialisation)"
            )
        raise IllegalMappingError(
            f"{s.loc}: two independent reductions in one scop, {pair}, writing `{main.write.array}` and "
            f"`{s.write.array}`. odyssey maps one computation per scop and does not split them itself: "
            "write one file per computation (each with its own initialisation), and each gets its own "
            "designs; or, when the two are combined into one result afterwards, fuse them into one "
            "reduction (e.g. `y[i] += alpha * A[i][j] * x[j] + beta * B[i][j] * x[j]`)"
        )


def _not_auxiliary(scop: Scop, s: Statement, main: Statement) -> str | bool:
    """The reason ``s`` is not an initialiser or scaling of ``main``'s target, or whether it
    runs before the reduction (True) or after it (False)."""
    w, mw = s.write, main.write
    if w.array != mw.array:
        others = sorted({r.array for r in s.reads if r.array != w.array})
        if any(r.array == w.array for r in main.reads) or w.array in {r.array for r in main.reads}:
            return (f"it writes `{w.array}`, which the computation reads: the two are dependent "
                    "computations (run them as two kernels, one after the other)")
        if any(r.array == mw.array for r in s.reads):
            return (f"it reads `{mw.array}`, the computation's result: the two are dependent "
                    "computations (run them as two kernels, one after the other)")
        return (f"it writes a second array `{w.array}`"
                + (f" from {', '.join(f'`{a}`' for a in others)}" if others else "")
                + f", while the computation writes `{mw.array}`: two computations in one nest")
    if main.op == "=":
        return (f"the computation `{main.text}` assigns `{mw.array}` (it is not a reduction), so "
                "there is nothing to initialise or scale")
    if any(r.array != w.array for r in s.reads):
        return (f"it reads {', '.join(sorted({f'`{r.array}`' for r in s.reads if r.array != w.array}))}; "
                "an initialiser or a scaling may read only constants, sizes, scalar parameters "
                "and the element it writes")
    if any(r.subscripts != w.subscripts for r in s.reads):
        return "it reads another element of the array it writes; a scaling reads the element it writes"
    const = s.op == "=" and not s.reads
    scale = s.op == "*=" and not s.reads
    if not (const or scale):
        return (f"it updates `{w.array}` with `{s.op}`; an initialiser sets a constant (`X = 0`), a "
                "scaling multiplies by a scalar (`X *= beta`, `X = beta * X`)")
    params, values = set(scop.param_names), scop.param_values
    inner = main.loops[len(s.loops):]
    if (s.loops == main.loops[: len(s.loops)] and not s.guards and not main.guards
            and w.subscripts == mw.subscripts and s.position < main.position
            and {lp.name for lp in s.loops} == {n for x in w.subscripts for n in x.names} - params
            and all(len(x.names - params) <= 1 for x in w.subscripts)
            and all(lp.lower.names <= params and lp.upper.names <= params
                    and (lp.upper - lp.lower).evaluate(values) > 0 for lp in inner)):
        # the common case, `C[i][j] = 0` in the computation's own loops, one loop per subscript
        # and non-empty rectangular inner loops: the same elements, once, before; no isl needed
        return True
    equal, once = same_elements(scop, s, main)
    if not equal:
        return (f"it writes other elements of `{w.array}` than the computation does (its domain "
                "and the computation's must cover the same elements)")
    if not once:
        idle = [lp.name for lp in s.loops if all(x.coeff(lp.name) == 0 for x in w.subscripts)]
        return (f"it writes every element of `{w.array}` once per iteration of the loop(s) "
                f"{', '.join(f'`{n}`' for n in idle)} that do not index it: `{w.array}` is a temporary "
                f"reused across them (expand it along those loops, e.g. give `{w.array}` one dimension "
                "per loop, or write the computation out of place)")
    order = write_order(scop, s, main)
    if order == "mixed":
        return ("it runs between updates of the same element (neither before the first nor after "
                "the last)")
    if order == "after" and const:
        return "it overwrites the computation's result with a constant"
    return order == "before"


def _refs_in_order(main: Statement) -> list:
    return [main.write] + list(main.reads)


def _check_uniform(scop: Scop, main: Statement) -> None:
    w = main.write
    rows_w = [[s.coeff(it) for it in main.iterators] for s in w.subscripts]
    for r in main.reads:
        if r.array != w.array:
            continue
        rows_r = [[s.coeff(it) for it in main.iterators] for s in r.subscripts]
        same_const = all(a.const == b.const for a, b in zip(r.subscripts, w.subscripts, strict=True))
        if rows_r != rows_w or not same_const:
            raise IllegalMappingError(
                f"{main.loc}: array `{w.array}` is written as `{_ref_text(w)}` and read as "
                f"`{_ref_text(r)}` in `{main.text}`: the dependence between them is not uniform, "
                "so the kernel cannot be mapped to a systolic array (odyssey needs uniform "
                "dependences, as in matrix multiplication or convolution). To map it, write the "
                "result to a separate array when the elements read are never the ones already "
                "updated (out of place, e.g. PolyBench trmm: kernels/polybench/trmm_oop.c), or uniformize "
                "it: propagate the values through arrays indexed by every loop "
                "(kernels/autosa/lu_uniform.c; AutoSA maps such a system of several statements, "
                "odyssey does not yet: it maps one statement per scop)"
            )
    if main.op == "=" and any(all(s.coeff(n) == 0 for s in w.subscripts) for n in main.iterators):
        raise IllegalMappingError(
            f"{main.loc}: `{main.text}` overwrites `{w.array}` along a loop that does not index "
            "it; use `+=` for a reduction"
        )


def _ref_text(r) -> str:
    return r.array + "".join(f"[{s}]" for s in r.subscripts)


def _band(scop: Scop, main: Statement) -> tuple[BandLoop, ...]:
    dom = scop.domain(main)
    if dom.is_empty():
        sizes = ", ".join(f"{n}={v}" for n, v in scop.params) or "no size parameters"
        raise IllegalMappingError(
            f"{main.loc}: `{main.text}` never executes ({sizes}): a loop around it has no "
            "iteration; check the loop bounds and the sizes"
        )
    params = set(scop.param_names)
    out: list[BandLoop] = []
    for k, lp in enumerate(main.loops):
        lo = _bound(dom, k, upper=False)
        hi = _bound(dom, k, upper=True)
        rect = lp.lower.names <= params and lp.upper.names <= params and not main.guards
        expr = (lp.upper - lp.lower) if rect else None
        out.append(BandLoop(lp.name, lo, hi - lo + 1, expr, rect))
    return tuple(out)


def _bound(dom: isl.Set, k: int, *, upper: bool) -> int:
    pa = dom.dim_max(k) if upper else dom.dim_min(k)
    vals: list[int] = []

    def take(_set: isl.Set, aff: isl.Aff) -> None:
        vals.append(aff.get_constant_val().to_python())

    pa.foreach_piece(take)
    return max(vals) if upper else min(vals)


def _loop(band: tuple[BandLoop, ...], name: str) -> BandLoop:
    return next(b for b in band if b.name == name)


def _space_legality(names: tuple[str, ...], reuse: tuple[Reuse, ...]) -> tuple[LoopLegality, ...]:
    out = []
    for k, name in enumerate(names):
        bad = [(ru, v) for ru in reuse for v in ru.vectors if v[k] not in (0, 1)]
        if bad:
            ru, v = bad[0]
            kind = "flow" if ru.kind == "write" else "read"
            out.append(LoopLegality(name, False, f"the uniform {kind} dependence of `{ru.array}` "
                                    f"with distance {v} has {v[k]} on `{name}` (needs 0 or 1)"))
        else:
            out.append(LoopLegality(name, True, "every flow and read dependence distance is 0 or 1"))
    return tuple(out)


def _operand(ru: Reuse, names: tuple[str, ...], space: tuple[str, ...], is_output: bool) -> Operand:
    rl = ru.unit_loops(names)
    along = [s for s in space if s in rl]
    return Operand(ru.ref_id, ru.array, "output" if is_output else "input", rl,
                   "chain" if along else "direct", along[0] if along else None)


def _params(
    band: tuple[BandLoop, ...], parallel: tuple[str, ...], simd: str | None, *, max_lanes: int
) -> tuple[TuningParam, ...]:
    out = [TuningParam(param_name(b.name, 1), b.name, "array_part", 1, b.extent, None) for b in band]
    for b in band:
        if b.name in parallel:
            out.append(TuningParam(param_name(b.name, 2), b.name, "latency", 1, b.extent,
                                   param_name(b.name, 1)))
    if simd is not None:
        ext = min(_loop(band, simd).extent, max_lanes)
        out.append(TuningParam(param_name(simd, 2), simd, "simd", 1, ext, param_name(simd, 1)))
    return tuple(out)


def _slug(space: tuple[str, ...], nrl: tuple[str, ...], rl: tuple[str, ...]) -> str:
    sep = "" if all(len(n) == 1 for n in space + nrl + rl) else "_"
    return f"{sep.join(space)}-{sep.join(nrl)}.{sep.join(rl)}"
