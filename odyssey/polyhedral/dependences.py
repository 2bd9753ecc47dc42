"""Dependences of a scop: exact isl dataflow and the uniform reuse vectors.

Two views, both computed here:

* **Exact dependences** (flow RAW, anti WAR, output WAW, read RAR) from isl's
  dataflow analysis on reference-tagged accesses and the original schedule;
  each relation is reported with its distance set and, when that set is a
  single point, its distance vector.
* **Uniform reuse vectors** of every reference: a canonical integer basis of
  ``{d : A_r d = 0}`` where ``A_r`` is the linear part of the access function.
  ``x`` and ``x + d`` touch the same element, so ``d`` is the distance of a
  uniform RAR dependence (for a read) or of the flow dependence of an
  associative ``+=``/``*=`` update (for the written reference). These vectors,
  not the sequential last-writer relation, constrain the systolic mapping:
  odyssey treats ``+=`` and ``*=`` as associative reductions, as AutoSA does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import islpy as isl

from odyssey.polyhedral.affine import Affine, integer_null_space
from odyssey.polyhedral.scop import Reference, Scop, Statement

DepKind = Literal["flow", "anti", "output", "read"]


@dataclass(frozen=True, slots=True)
class Dependence:
    """An exact dependence between two references (``source`` before ``sink``)."""

    kind: DepKind
    source: str  # ref_id
    sink: str  # ref_id
    relation: str  # the isl relation, for display
    distance: tuple[int, ...] | None  # uniform distance on the common loops, else None
    distances: str  # the isl distance set (common loops only), for display


@dataclass(frozen=True, slots=True)
class Reuse:
    """Uniform reuse of one reference along the loops of its statement."""

    ref_id: str
    array: str
    kind: Literal["read", "write"]
    vectors: tuple[tuple[int, ...], ...]  # canonical basis, lexicographically positive

    def unit_loops(self, loops: tuple[str, ...]) -> tuple[str, ...]:
        """Loops ``l`` whose unit vector ``e_l`` is a reuse vector: the reference does not
        depend on ``l`` at all (``RL(r)`` of Theorem 3.1)."""
        out = []
        for k, name in enumerate(loops):
            unit = tuple(1 if m == k else 0 for m in range(len(loops)))
            if unit in self.vectors:
                out.append(name)
        return tuple(out)


def reuse_vectors(stmt: Statement, ref: Reference) -> Reuse:
    """Uniform reuse vectors of ``ref`` over the loops of ``stmt``."""
    iters = stmt.iterators
    rows = [[sub.coeff(it) for it in iters] for sub in ref.subscripts]
    return Reuse(ref.ref_id, ref.array, ref.kind, tuple(integer_null_space(rows, len(iters))))


def _tagged(scop: Scop, stmt: Statement, ref: Reference) -> tuple[isl.Map, isl.Map]:
    """Access and schedule of ``stmt`` with the domain tagged by the reference:
    ``{[S[it] -> ref[]] -> A[...]}`` and ``{[S[it] -> ref[]] -> time}``."""
    dom = scop.domain(stmt)
    tag = isl.Map.from_domain(dom).set_tuple_name(isl.dim_type.out, ref.ref_id)
    tmap = tag.domain_map()
    return tmap.apply_range(scop.access(stmt, ref)), tmap.apply_range(scop.schedule(stmt))


def exact_dependences(scop: Scop) -> tuple[Dependence, ...]:
    """Flow, anti, output and read dependences from isl's dataflow analysis."""
    ctx = isl.DEFAULT_CONTEXT
    reads = isl.UnionMap("{}", ctx)
    writes = isl.UnionMap("{}", ctx)
    sched = isl.UnionMap("{}", ctx)
    owner: dict[str, Statement] = {}
    for stmt in scop.statements:
        for ref in stmt.refs:
            acc, sch = _tagged(scop, stmt, ref)
            owner[ref.ref_id] = stmt
            sched = sched.union(sch)
            if ref.kind == "read" or stmt.op != "=":  # `+=` reads its target too
                reads = reads.union(acc)
            if ref.kind == "write":
                writes = writes.union(acc)
    empty = isl.UnionMap("{}", ctx)
    # (kind, sinks, must sources (they kill), may sources)
    kinds: list[tuple[DepKind, isl.UnionMap, isl.UnionMap, isl.UnionMap]] = [
        ("flow", reads, writes, empty),
        ("anti", writes, writes, reads),
        ("output", writes, writes, empty),
        ("read", reads, reads, empty),
    ]
    deps: list[Dependence] = []
    for kind, sink, must, may in kinds:
        info = isl.UnionAccessInfo.from_sink(sink).set_must_source(must).set_may_source(may)
        flow = info.set_schedule_map(sched).compute_flow()
        rel = flow.get_may_dependence()
        if kind == "anti":  # keep read -> write pairs only
            rel = rel.subtract(flow.get_must_dependence())
        maps: list[isl.Map] = []
        rel.foreach_map(maps.append)
        for m in maps:
            deps.append(_describe(kind, m, owner))
    return tuple(sorted(deps, key=lambda d: (d.kind, d.source, d.sink)))


def _describe(kind: DepKind, m: isl.Map, owner: dict[str, Statement]) -> Dependence:
    src_ref = m.get_space().domain().unwrap().range().get_tuple_name(isl.dim_type.set)
    snk_ref = m.get_space().range().unwrap().range().get_tuple_name(isl.dim_type.set)
    plain = m.domain_factor_domain().range_factor_domain()
    s_src, s_snk = owner[src_ref], owner[snk_ref]
    common = 0
    for a, b in zip(s_src.iterators, s_snk.iterators, strict=False):
        if a != b:
            break
        common += 1
    n_src, n_snk = len(s_src.iterators), len(s_snk.iterators)
    proj = plain.project_out(isl.dim_type.in_, common, n_src - common)
    proj = proj.project_out(isl.dim_type.out, common, n_snk - common)
    proj = proj.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    deltas = proj.deltas()
    distance: tuple[int, ...] | None = None
    if not deltas.is_empty() and deltas.is_singleton():
        pt = deltas.sample_point()
        distance = tuple(
            pt.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(common)
        )
    return Dependence(kind, src_ref, snk_ref, str(plain), distance, str(deltas))


def _padded_schedule(scop: Scop, stmt: Statement, dims: int) -> isl.Map:
    m = scop.schedule(stmt)
    n = m.dim(isl.dim_type.out)
    m = m.add_dims(isl.dim_type.out, dims - n)
    for k in range(n, dims):
        m = m.fix_val(isl.dim_type.out, k, isl.Val.int_from_si(m.get_ctx(), 0))
    return m


def write_order(scop: Scop, a: Statement, b: Statement) -> Literal["before", "after", "mixed"]:
    """Whether every instance of ``a`` runs before (``before``) or after (``after``) every
    instance of ``b`` that writes the same element of their (common) target array, in the
    original schedule; ``mixed`` otherwise."""
    same = scop.access(a, a.write).apply_range(scop.access(b, b.write).reverse())
    dims = 2 * max(len(a.loops), len(b.loops)) + 1
    sa, sb = _padded_schedule(scop, a, dims), _padded_schedule(scop, b, dims)
    if same.is_subset(sa.lex_lt_map(sb)):
        return "before"
    if same.is_subset(sa.lex_gt_map(sb)):
        return "after"
    return "mixed"


def same_elements(scop: Scop, a: Statement, b: Statement) -> tuple[bool, bool]:
    """``(equal, once)``: ``a`` writes exactly the elements ``b`` writes, and each of them
    once (its write access is injective)."""
    acc_a = scop.access(a, a.write)
    acc_b = scop.access(b, b.write)
    return acc_a.range().is_equal(acc_b.range()), acc_a.is_injective()


def image_constraints(scop: Scop, stmt: Statement, keep: tuple[str, ...]) -> tuple[tuple[Affine, str], ...] | None:
    """The projection of ``stmt``'s domain on the loops ``keep`` (in the statement's loop
    order) as affine constraints (``">=0"`` / ``"==0"``) in those loops and the size
    parameters, or None when it is the rectangle of its bounds (nothing to test). Raises
    ``ValueError`` when the projection is not one convex polyhedron without divisions."""
    iters = stmt.iterators
    dom = scop.domain(stmt, fixed_params=False)
    for idx in reversed(range(len(iters))):
        if iters[idx] not in keep:
            dom = dom.project_out(isl.dim_type.set, idx, 1)
    names = [n for n in iters if n in keep]
    fixed = scop._fix_params(dom)
    box = fixed.universe(fixed.get_space()).intersect_params(fixed.params())
    for k in range(len(names)):
        lo, hi = _extreme(fixed, k, upper=False), _extreme(fixed, k, upper=True)
        box = box.lower_bound_val(isl.dim_type.set, k, isl.Val.int_from_si(box.get_ctx(), lo))
        box = box.upper_bound_val(isl.dim_type.set, k, isl.Val.int_from_si(box.get_ctx(), hi))
    if fixed.is_equal(box):
        return None
    dom = dom.coalesce().remove_redundancies()
    bsets = dom.get_basic_sets()
    if len(bsets) != 1 or bsets[0].dim(isl.dim_type.div) > 0:
        raise ValueError(f"the elements {stmt.name} writes are not one convex polyhedron: {dom}")
    params = [str(dom.get_dim_name(isl.dim_type.param, k)) for k in range(dom.dim(isl.dim_type.param))]
    out: list[tuple[Affine, str]] = []
    for c in bsets[0].get_constraints():
        coeffs = {n: c.get_coefficient_val(isl.dim_type.set, k).to_python() for k, n in enumerate(names)}
        coeffs.update({p: c.get_coefficient_val(isl.dim_type.param, k).to_python() for k, p in enumerate(params)})
        out.append((Affine.make(coeffs, c.get_constant_val().to_python()), "==0" if c.is_equality() else ">=0"))
    return tuple(out)


def _extreme(s: isl.Set, k: int, *, upper: bool) -> int:
    pa = s.dim_max(k) if upper else s.dim_min(k)
    vals: list[int] = []
    pa.foreach_piece(lambda _s, aff: vals.append(aff.get_constant_val().to_python()))
    return max(vals) if upper else min(vals)
