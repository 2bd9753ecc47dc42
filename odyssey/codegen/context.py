"""Shared naming and index arithmetic for the module builders.

Variable names in generated code:

* ``t_<l>``: tile index of band loop ``l`` (``ceil(E_l / T_l1)`` iterations);
* ``x1_<l>``: outer point loop of a time loop (``T_l1 / T_l2``), ``x2_<l>``: latency-hiding
  loop (``T_l2``), ``ln``: SIMD lane (unrolled);
* ``p_<s>``: a PE's (or an I/O module's) position along space loop ``s`` (template argument);
* ``b_<s>``: the position of the block being transferred along an I/O chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from odyssey.codegen.geometry import OperandGeom, Partition
from odyssey.codegen.hls_ast import For, Stmt
from odyssey.codegen.tiling import LoopGeom, Tiling
from odyssey.expr import (
    Expr,
    ceil_div,
    const,
    eceil,
    elog2,
    emax,
    evaluate,
    floor_div,
    lt,
    sym,
    to_c,
    where,
)
from odyssey.polyhedral.affine import Affine
from odyssey.polyhedral.scop import Scop, Statement

#: C names of element types in generated helper function names
TYPE_TAG = {
    "float": "float", "double": "double", "int": "int", "unsigned int": "uint", "short": "short",
    "unsigned short": "ushort", "char": "char", "unsigned char": "uchar", "signed char": "schar",
    "long": "long", "unsigned long": "ulong",
}


def of_bits(ctype: str) -> str:
    """Name of the generated helper turning bits into a ``ctype`` value."""
    return f"{TYPE_TAG[ctype]}_of"


@dataclass(frozen=True)
class Ctx:
    scop: Scop
    main: Statement
    tiling: Tiling
    operands: tuple[OperandGeom, ...]
    c0: str | None  # the initialiser's constant, or None when the output starts from DRAM
    fadd_latency: int  # latency of the reduction operator (cycles)
    #: cycles from a lane's operands to its value: the longest path of the statement's
    #: operators (:func:`odyssey.codegen.pe.rhs_schedule`; an fp32 product: 4)
    rhs_latency: int = 4
    pre_scale: str | None = None  # factor of the DRAM start value (`C *= beta` before the reduction)
    post_scale: str | None = None  # factor of the result (`C *= alpha` after the reduction)
    #: the elements the computation writes, as constraints on the parallel loops, when they are
    #: not the whole box and the drain would otherwise change the others (set, scale)
    image: tuple[tuple[Affine, str], ...] | None = None

    # --- loops -------------------------------------------------------------------------

    @property
    def order(self) -> tuple[str, ...]:
        return self.tiling.design.order

    def g(self, loop: str) -> LoopGeom:
        return self.tiling.loop(loop)

    def tile_loops(self, names: tuple[str, ...], body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """``body`` inside the tile loops ``names`` (outer first), except the pass loops: their
        indices are parameters of every module (see :attr:`pass_loops`)."""
        for name in reversed(names):
            if name not in self.pass_loops:
                body = (For(f"t_{name}", self.g(name).tiles_sym, body),)
        return body

    @property
    def pass_loops(self) -> tuple[str, ...]:
        """Tile loops that the top function runs around the dataflow region, one call of the
        region (a *pass*) per iteration: the ordering's loops up to its last reduction tile loop
        outside the output's loops. Partial sums then leave the array only between passes, so
        no process reads back what the region itself writes: each region is acyclic, and the
        region's return orders the writes of one pass before the reads of the next."""
        red = self.outer_reduction
        if not red:
            return ()
        return self.order[: max(self.order.index(n) for n in red) + 1]

    @property
    def output(self) -> OperandGeom:
        return next(o for o in self.operands if o.role == "output")

    @property
    def inputs(self) -> tuple[OperandGeom, ...]:
        return tuple(o for o in self.operands if o.role == "input")

    @property
    def parallel(self) -> tuple[str, ...]:
        return self.tiling.design.parallel_loops

    @property
    def reduction(self) -> tuple[str, ...]:
        return self.tiling.design.reduction_loops

    @property
    def out_trunc(self) -> int:
        """Tile loops ``order[:out_trunc]`` enumerate the visits of an output tile."""
        return self.output.trunc

    @property
    def outer_reduction(self) -> tuple[str, ...]:
        """Reduction tile loops outside the last output loop: partial sums leave the array."""
        return tuple(n for n in self.order[: self.out_trunc] if n in self.reduction)

    @property
    def inner_reduction(self) -> tuple[str, ...]:
        return tuple(n for n in self.order[self.out_trunc :])

    @property
    def needs_cin(self) -> bool:
        """Partial sums come back from DRAM: there is no initialiser, or the ordering puts a
        reduction tile loop outside the output's loops (then the path exists for every
        tiling; with one tile along those loops it is simply never taken)."""
        return self.c0 is None or bool(self.outer_reduction) or self.image is not None

    def cin_cond(self) -> tuple[str, Expr | None]:
        """C condition under which a visit reads partial sums back, and its frequency."""
        if self.c0 is None or self.image is not None:  # elements outside the image keep theirs
            return "true", None
        parts = [f"t_{n} > 0" for n in self.outer_reduction]
        first: Expr = const(1)  # fraction of visits where every outer reduction index is 0
        for n in self.outer_reduction:
            first = first / self.g(n).tiles_sym
        return (" || ".join(parts) if parts else "false"), const(1) - first

    def first_visit(self) -> str:
        """C condition of the first visit of an output tile (every outer reduction tile index
        is 0): where the start value, not a partial sum, comes back from DRAM."""
        return " && ".join(f"t_{n} == 0" for n in self.outer_reduction) or "true"

    def last_visit(self) -> str:
        """C condition of the last visit of an output tile: where the result is final."""
        return " && ".join(f"t_{n} == {to_c(self.g(n).tiles_sym)} - 1" for n in self.outer_reduction) or "true"

    @property
    def kernel_scalars(self) -> tuple[tuple[str, str], ...]:
        """``(name, C type)`` of the kernel's scalar arguments, broadcast to the PEs."""
        return tuple((sc.name, sc.elem) for sc in self.scop.scalars)

    # --- PE loop nest ------------------------------------------------------------------

    def pe_loops(self) -> list[tuple[str, str, Expr, int]]:
        """The PE's per-tile loops outer to inner: (var, loop, trip, concrete trip)."""
        out: list[tuple[str, str, Expr, int]] = []
        for name in self.order:
            g = self.g(name)
            if not g.space:
                out.append((f"x1_{name}", name, g.outer_sym, g.outer))
        for b in self.tiling.design.band:
            g = self.g(b.name)
            if g.level2 == "latency":
                out.append((f"x2_{b.name}", b.name, g.t2_sym, g.t2))
        return out

    def pe_iterations(self) -> tuple[Expr, int]:
        e: Expr = const(1)
        n = 1
        for _, _, trip, val in self.pe_loops():
            e = e * trip
            n *= val
        return e, n

    def _accumulation_loops(self) -> list[tuple[str, Expr, int]]:
        """The loops of the PE's flattened pipeline, outer to inner, as ``(loop, trip, value)``:
        the inner reduction tile loops (inside the accumulator's lock, a perfect nest with the
        PE loops) and then the PE loops."""
        out = [(n, self.g(n).tiles_sym, self.g(n).tiles) for n in self.inner_reduction]
        out += [(loop, trip, val) for _, loop, trip, val in self.pe_loops()]
        return out

    def recurrence_distance(self) -> int | None:
        """Iterations between two updates of one accumulator element: the product of the
        pipeline's loops inside the innermost reduction loop that iterates (None when none
        iterates: no element is updated twice)."""
        loops = self._accumulation_loops()
        red = [k for k, (loop, _, val) in enumerate(loops) if loop in self.reduction and val > 1]
        if not red:
            return None
        d = 1
        for _, _, val in loops[red[-1] + 1 :]:
            d *= val
        return d

    @property
    def env(self) -> dict[str, int]:
        """Values of the size and tiling parameters and of the operands' word lanes
        (``LANES_<operand>``, ``PACK_<operand>_<d>``): where symbolic twins are evaluated."""
        env = {**self.scop.param_values, **self.tiling.as_dict,
               **{op.lanes_macro: op.lanes for op in self.operands}}
        for op in self.operands:
            env.update(op.pack_values())
        return env

    def pe_ii(self) -> int:
        """Initiation interval of the PE pipeline at the tiling: :meth:`pe_ii_sym` evaluated
        (``II = max(1, ceil(L_op / D))``, ``D`` the :meth:`recurrence_distance`)."""
        return int(evaluate(self.pe_ii_sym(), self.env))

    def pe_depth(self) -> int:
        """Pipeline depth of the PE compute loop at the tiling: :meth:`pe_depth_sym` evaluated."""
        return int(evaluate(self.pe_depth_sym(), self.env))

    def pe_depth_sym(self) -> Expr:
        """Pipeline depth of the PE compute loop: operand read, the statement (``L_rhs``, its
        longest operator path), the combination of the ``S`` SIMD lanes in a balanced tree of
        ``ceil(log2 S)`` adds (printed as one for floating point, which Vitis does not
        reassociate, UG1399 expression balancing; rebalanced by Vitis for integers), the
        accumulation where the PE accumulates (:meth:`accumulation_sym`), the write:
        ``2 + L_rhs + ceil(log2 S) * L_add + acc * L_add``."""
        simd = self.tiling.design.simd_loop
        lanes = self.g(simd).t2_sym if simd else const(1)
        comb = self.fadd_latency
        return const(2 + self.rhs_latency) + eceil(elog2(lanes)) * comb + self.accumulation_sym() * comb

    @property
    def tree_lanes(self) -> bool:
        """Whether the PE prints its lanes' combination as a balanced tree (floating point,
        which the tool would otherwise build as the chain the C text describes); integer lanes
        are printed as a running sum, which the tool rebalances and whose adds fuse into the
        DSPs of the products they add."""
        return self.output.array.is_float

    def accumulation_sym(self) -> Expr:
        """1 where the PE adds each value to its running sum, 0 where the running sum is a
        copy: the accumulation exists when some loop of the PE's pipeline that reduces
        iterates, an inner reduction tile loop (``ceil(E / T_1)`` trips) or a reduction time
        loop (``T_1 / T_2``). When some loop iterates at every legal tiling it is the constant
        1, so the DSP model keeps the monomial ``#PE * SIMD * cost`` of eq. 5-6."""
        upper = {(p.loop, p.level == "array_part"): p.upper for p in self.tiling.design.params}
        trips: list[Expr] = []
        for n in dict.fromkeys((*self.inner_reduction, *(r for r in self.reduction if not self.g(r).space))):
            g = self.g(n)
            inner = n in self.inner_reduction
            if inner:
                trips.append(g.tiles_sym)
            if not g.space:
                trips.append(g.outer_sym)
            # all of n's trips are 1 only with T_1 >= E (inner) and T_2 = T_1 (time loops)
            t1_max = upper.get((n, True), g.extent)
            t2_max = upper.get((n, False), 1 if g.level2 is None else g.extent)
            if inner and (g.extent > t1_max or (not g.space and g.extent > t2_max)):
                return const(1)
        return emax(const(0), *[where(lt(1, t), 1, 0) for t in trips])

    def drain_depth(self) -> int:
        """Read ``acc``, combine with the incoming partial sum, write: ``2 + L_add``."""
        return 2 + self.fadd_latency

    def pe_ii_sym(self) -> Expr:
        """:meth:`pe_ii` as an expression of the tiling: the maximum over the reduction loops
        ``r`` of the pipeline that iterate (trip > 1) of ``ceil(L / D_r)``, ``D_r`` the product
        of the loops inside ``r``; the innermost such ``r`` has the smallest ``D_r``."""
        loops = self._accumulation_loops()
        terms: list[Expr] = [const(1)]
        for k, (loop, trip, _) in enumerate(loops):
            if loop not in self.reduction:
                continue
            d: Expr = const(1)
            for _, t, _ in loops[k + 1 :]:
                d = d * t
            terms.append(where(lt(1, trip), ceil_div(self.fadd_latency, d), 1))
        return emax(*terms)

    def local(self, loop: str, lane: str = "ln") -> str:
        """C value of a loop's offset within the PE's part of a tile (time loops: within the
        tile; space loops: within the PE's ``T_s2`` values)."""
        g = self.g(loop)
        inner = lane if g.level2 == "simd" else (f"x2_{loop}" if g.level2 == "latency" else None)
        if g.space:
            return inner or "0"
        if inner is None:
            return f"x1_{loop}"
        return f"x1_{loop} * T_{loop}2 + {inner}"

    def global_value(self, loop: str, lane: str = "ln") -> str:
        """C value of the original iterator inside a PE with template position ``p_<s>``."""
        g = self.g(loop)
        base = f"{g.lower} + t_{loop} * T_{loop}1" if g.lower else f"t_{loop} * T_{loop}1"
        if g.space:
            return f"({base} + p_{loop} * T_{loop}2 + {self.local(loop, lane)})"
        return f"({base} + {self.local(loop, lane)})"

    # --- accumulator -------------------------------------------------------------------

    def acc_dims(self) -> list[tuple[str, Expr, int]]:
        """(loop, symbolic size, size) of the PE accumulator: one axis per parallel loop."""
        out = []
        for name in self.parallel:
            g = self.g(name)
            out.append((name, g.pe_range_sym, g.pe_range))
        return out

    def acc_size(self) -> tuple[Expr, int]:
        e: Expr = const(1)
        n = 1
        for _, s, v in self.acc_dims():
            e, n = e * s, n * v
        return e, n

    def out_words_sym(self) -> Expr:
        """Words of one accumulator block on the drain path: ``acc / LANES_<output>`` (symbolic
        in the lanes whatever their value at this tiling: the models read it at every tiling;
        a row-major output moves elements)."""
        acc, _ = self.acc_size()
        return acc // sym(self.output.lanes_macro) if self.output.layout == "serialized" else acc

    @property
    def serial_drain(self) -> bool:
        """Whether the PE drains stream their blocks one element per cycle: where none of
        them reads partial sums (no output chain through the PEs, none from DRAM) and the PEs
        do not pack their own words (:attr:`pe_words`: a row-major output). Those that read
        partial sums move a word of ``LANES`` elements per cycle, so the partial-sum path
        streams."""
        d = self.tiling.design
        return self.output.chain is None and not self.needs_cin and not d.word_drain and not self.pe_words

    @property
    def pe_words(self) -> bool:
        """Whether each PE packs its finished results into words itself, in the order it
        finishes them (its pipeline's order: :meth:`emission_axes`), and writes them to its
        drain module through a FIFO one visit of words deep, with no accumulator block and no PE
        drain process, as AutoSA's PE hands its results to a drain module that buffers them:
        by default where no drain reads partial sums (no output chain through the PEs, none
        from DRAM) and the output's DRAM image is serialized (its record follows the words'
        order); ``+wd`` designs have PE drain processes instead. The FIFO holds a visit of
        words, so the PEs never wait for the drain chain within a visit, and the chain moves
        a word per cycle (where a PE drain that streamed one element per cycle made it wait
        LANES cycles per word: :attr:`serial_drain`, now only with a row-major output)."""
        return (not self.tiling.design.word_drain and self.output.chain is None and not self.needs_cin
                and self.output.layout == "serialized")

    def emission_axes(self) -> list[tuple[str, str, Expr]]:
        """The order in which a PE finishes its results: ``(var, loop, trip)`` of its pipeline's
        loops over parallel loops (:meth:`pe_loops`), outer to inner; the result of a point is
        the element ``x1 * T_2 + x2`` of its loop's accumulator axis (:meth:`local`)."""
        return [(var, loop, trip) for var, loop, trip, _ in self.pe_loops() if loop in self.parallel]

    def acc_partition(self) -> tuple[Partition, ...]:
        """Banks of the accumulator block. A serial drain (:attr:`serial_drain`) reads one
        element per cycle, so one bank's two ports serve it and the PE, as AutoSA's PE keeps
        one ``local_C`` bank; a word drain reads ``LANES`` consecutive elements per word, two
        per bank (a BRAM bank has two ports), so ``max(1, LANES / 2)`` cyclic banks (kept at
        factor 1 too: the models read the symbolic factor)."""
        if self.serial_drain:
            return ()
        o = self.output
        return (Partition(1, max(1, o.lanes // 2), emax(1, floor_div(o.lanes_sym, 2))),)

    def acc_index(self, values: dict[str, str]) -> str:
        idx = "0"
        for name, _, _ in self.acc_dims():
            g = self.g(name)
            idx = f"({idx}) * {'T_' + name + ('2' if g.space else '1')} + {values[name]}"
        return idx

    def pe_count(self, loop: str) -> tuple[Expr, int]:
        g = self.g(loop)
        return g.outer_sym, g.outer

