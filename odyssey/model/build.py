"""Build a :class:`DesignModel` from a design descriptor (no per-kernel code).

Design latency, ``accurate`` variant (cycles). Every stage is double-buffered (input blocks
between the I/O chains and the PEs, accumulator blocks between a PE and its drain), so the
array is a pipeline whose steady state is set by its slowest stage, plus the time to fill it
and to empty it. With ``L_m`` each module's latency (:mod:`odyssey.model.latency`),
``V_X`` the visits of input ``X``'s tile, ``first = max_X ceil(L_{L3,X} / V_X)`` (loading
the first tiles: the prologue), ``tile = (PE iterations per tile - 1) * II + depth``,
``visit = tile + (tiles per output visit - 1) * iterations * II`` (the inner reduction tiles
of an output visit run in one pipeline, which fills once) and ``drain = max_d ceil(L_d / visits)`` over the
modules ``d`` whose role is ``drain`` or ``writer`` (the last output tile through the slowest
stage of the drain path: the epilogue), the latency is the largest of

* PE-bound: ``first + L_PE + drain + D_out``;
* input-bound, for each input ``X``: ``ahead(L_{L3,X}) + tile + drain + D_out``, a reader of
  ``v > 2`` visits running at most two visits (its loaders' ping-pong blocks) ahead of the PEs:
  ``ahead(L) = max(L, first + tile + (v - 2) * L / v)``;
* partial-sum-bound: ``L_m + tail + D_out`` for the reader of partial sums (starting with the
  region) and every loader and chain module after it: a loader publishes its block only after
  forwarding the words of the rest of its chain, so the head's PE, which drains first, gets
  its partial sums with the chain's last word; ``tail`` is the last upper-level row's share of
  the epilogue, ``ceil(drain / rows)`` (the whole ``drain`` with one chain level, or when the
  partial sums run through a chain of PEs);
* output-bound: ``first + visit + L_{L3,out}``;
* drain-path module ``m`` (PE drains, drain I/O levels): ``first + visit + L_m``, like the
  writer, plus the module's fill ``F_m`` (a drain chain's forwarding loop: one
  ``chain_hop_cycles`` per module of the rest of the chain, crossed once by a pass's last
  word; while the chain streams the modules after it run ahead by their FIFOs, so each visit
  costs only the loop's own depth). The epilogue ``drain`` counts each stage's fill too:
  ``drain = max_d (ceil(L_d / visits) + F_d)``. The head of the top drain level, which
  feeds the writer, also waits ``overhead + 2 - fifo_depth`` cycles for each burst the
  writer issues (:func:`writer_stall`: the writer pays the overhead after the burst's first
  word, with only the FIFO's words between them), unless it reads the level below at a
  cold pace (``ii_sym > 1``), restarting a row's chain while the writer waits;
* an input's chain or loader module ``m``: ``ahead(L_m) + tile + drain + D_out``, like its reader (it
  forwards words as the reader delivers them, from the region's start);
* any other module ``m`` (feeders, which wait for their first block): ``first + L_m + drain``;

Every DRAM reader and writer runs at ``max(its issue rate, its share of its DRAM channel)``
plus its burst overheads: the descriptor gives each port's channel, the platform the
channel's bytes per cycle, and :func:`odyssey.codegen.channels.port_paces` the share
(ports on one channel split it in proportion to their bytes per pass), which
:mod:`odyssey.model.latency` charges per iteration of each pipelined DRAM loop.

These terms are those of one *pass*: a design whose ordering puts a reduction tile loop outside
the output's loops runs its dataflow region once per iteration of the pass loops (the
ordering's loops up to that reduction loop), reading partial sums back at the start of a pass
and writing them at its end, so module latencies, visits and tiles above are counted within a
pass, and the design takes ``P * pass + (P - 1) * R`` cycles for ``P`` passes and ``R`` the
region's restart (``platforms/assumptions.json``). A pass takes, on average,
``f * pass_read + (1 - f) * pass_quiet``: the fraction ``f`` of the passes that read
partial sums back (their outer reduction indices are not all 0) runs at the pace of its own
slowest stage with the partial-sum path busy, the others without it.

The ``max`` variant (the TENET-style simplification the paper criticises) is
``max(PE compute cycles, max over L3 modules of L_m)``: no prologue, epilogue or drain.
"""

from __future__ import annotations

from collections.abc import Mapping

from odyssey.codegen.array_ir import BufferRole
from odyssey.codegen.channels import PortTraffic, accesses_per_pass, port_paces
from odyssey.codegen.descriptor_schema import SCHEMA_VERSION, Descriptor, ExprJson, OperandJson
from odyssey.codegen.roles import ModuleKind
from odyssey.errors import ModelError, PlatformError
from odyssey.expr import (
    Expr,
    Mul,
    const,
    eceil,
    emax,
    emin,
    from_json,
    lt,
    mul,
    substitute,
    where,
)
from odyssey.model.design_model import DesignModel, ParamSpec
from odyssey.model.fabric import dsp_cut, fabric_usage
from odyssey.model.latency import (
    feeder_ii,
    module_fill,
    module_latency,
    pipeline_depth,
    read_back_fraction,
)
from odyssey.model.resources import (
    bram18k,
    dsp,
    dsp_per_lane,
    loop_table,
    offchip_bytes,
    simd_lanes,
    uram_blocks,
)
from odyssey.platforms import Platform, assumption

VARIANTS = ("accurate", "max")


def _e(obj: ExprJson, subst: Mapping[str, Expr]) -> Expr:
    return substitute(from_json(obj), subst)


def writer_stall(burst_overhead: int) -> int:
    """Cycles the module feeding the DRAM writer waits per burst the writer issues. The writer
    reads a burst's first word at ``a``, pays the overhead after that access's cycle and
    reads the next word at ``a + 1 + overhead``; the feeder writes word ``k`` of the burst at
    ``h + k`` (``h + 1 = a``, one cycle FIFO latency) until its ``k``-th write needs the slot of
    read ``k - D`` (``D`` = ``fifo_depth``), free one cycle after that read: its write ``D + 1``
    waits for read 1 and lands at ``a + 2 + overhead`` instead of ``h + D + 1``, a wait of
    ``overhead + 2 - D`` (0 when the FIFO holds the overhead's words)."""
    return max(0, burst_overhead + 2 - int(assumption("fifo_depth").value))


def channel_paces(desc: Descriptor, subst: Mapping[str, Expr], rates: Mapping[str, float]) -> dict[str, Expr]:
    """Cycles per word of every DRAM port at its share of its channel, in the tuning parameters:
    ``rates`` maps a memory kind to a channel's bytes per cycle (a port of a kind it lacks has
    no bandwidth limit)."""
    counts = accesses_per_pass([(m.get("template", []), m["ast"]) for m in desc["modules"]], subst)
    out: dict[str, Expr] = {}
    for kind, rate in rates.items():
        traffic = [PortTraffic(p["name"], int(p["channel"]), _e(p["lanes_sym"], subst) * (int(p["elem_bits"]) // 8),
                               counts.get(p["name"], const(0)))
                   for p in desc["ports"] if p["memory"] == kind]
        out.update(port_paces(traffic, rate))
    return out


def model_expressions(desc: Descriptor, *, burst_overhead: int, variant: str = "accurate",
                      region_restart: int | None = None, rates: Mapping[str, float] | None = None) -> dict[str, Expr]:
    """Every model expression of a descriptor, in the tuning parameters (sizes substituted);
    ``rates`` (memory kind -> bytes per cycle of a channel) bounds the DRAM ports by their
    channels' bandwidth (none: by their issue rate and bursts only)."""
    if variant not in VARIANTS:
        raise ModelError(f"unknown model variant `{variant}`; choose one of {', '.join(VARIANTS)}")
    if desc.get("schema_version") != SCHEMA_VERSION:
        raise ModelError(f"descriptor schema {desc.get('schema_version')} is not {SCHEMA_VERSION} (the "
                         "version this odyssey reads); regenerate the design with `odyssey generate`")
    if region_restart is None:
        region_restart = assumption("region_restart_cycles").value
    subst: dict[str, Expr] = {k: const(v) for k, v in desc["sizes"].items()}
    for op in desc["operands"]:
        subst[op["lanes_macro"]] = _e(op["lanes_sym"], subst)
        for macro, factor in zip(op["pack_macros"], op["pack_sym"], strict=True):
            if macro != op["lanes_macro"]:  # a box dimension's elements per word (trips divide by it)
                subst[macro] = _e(factor, subst)
    loops = loop_table(desc, subst)
    mods = {m["name"]: m for m in desc["modules"]}
    paces = channel_paces(desc, subst, rates or {})
    lat = {name: module_latency(m, subst, burst_overhead=burst_overhead, paces=paces) for name, m in mods.items()}
    # a drain chain module's last word of a pass crosses the modules after it once (0 elsewhere)
    fill = {name: module_fill(m, subst) for name, m in mods.items()}
    out_op = next(o for o in desc["operands"] if o["role"] == "output")
    inputs = [o for o in desc["operands"] if o["role"] == "input"]

    passes = list(desc["passes"]["loops"])

    def visits(names: list[str]) -> Expr:
        return mul(*[loops[n]["tiles"] for n in names]) if names else const(1)

    def visits_in_pass(names: list[str]) -> Expr:
        return visits([n for n in names if n not in passes])

    n_pass = visits(passes)
    pass_tiles = visits_in_pass([lp["name"] for lp in desc["loops"]])
    pe_names = [n for n, m in mods.items() if m["kind"] == "pe"]
    pe_mod = mods[pe_names[0]]
    ii = _e(desc["compute"]["pe_ii_sym"], subst)
    iters = _e(desc["compute"]["pe_iterations_per_tile_sym"], subst)
    tile = (iters - 1) * ii + pipeline_depth(pe_mod, subst)
    # the rows of the drain's upper levels: the blocks of every injection loop but the lowest
    row_blocks = mul(*[loops[s]["outer"] for s in out_op["injection_loops"][:-1]]) \
        if len(out_op["injection_loops"]) > 1 else const(1)
    out_visits = visits_in_pass(out_op["reload_loops"])
    reader = {m["operand"]: n for n, m in mods.items() if m["kind"] == "io_l3_in"}
    by_name = {o["name"]: o for o in inputs}
    # visits an input's path can move before the PEs take any: the blocks of its lowest-level
    # block ring (``hls::stream_of_blocks``, 2 deep: a ping-pong pair) when double-buffered
    ahead_blocks = {o["name"]: 2 if any(b["operand"] == o["name"] and b["double_buffered"]
                                        for b in desc["memory"] if b["role"] == "input_block") else 1
                    for o in inputs}
    l3_out_name = next(n for n, m in mods.items() if m["role"] == "writer")
    # a chain's boundary module moves a subset of what its head moves: never the slowest
    drain_path = [n for n, m in mods.items() if m["role"] in ("drain", "writer") and not m["boundary"]]
    d_out = pipeline_depth(mods[l3_out_name], subst)
    inner_tiles = pass_tiles / out_visits
    # the PEs' first output visit: its inner reduction tiles run in one pipeline (the tile
    # loops inside the block lock, or every loop of a PE that packs its own words, are one
    # perfect nest with the PE loops), which fills once
    visit = tile + (inner_tiles - 1) * iters * ii
    # the writer pays a burst's overhead after the burst's first word, before it reads the
    # next: the drain chain head that feeds it (the top drain level's head: one position
    # parameter) waits, with only its FIFO's words between them (writer_stall)
    feeder = [n for n, m in mods.items() if m["kind"] == "io_drain" and not m["boundary"]
              and len(m.get("template", [])) == 1]
    stall: dict[str, Expr] = {}  # the feeder's wait, the same in every pass_terms below
    if feeder:
        bursts = module_latency(mods[l3_out_name], subst, burst_overhead=1, paces=paces) \
            - module_latency(mods[l3_out_name], subst, burst_overhead=0, paces=paces)
        # a feeder that reads its level below at a cold pace (ii_sym > 1: an upper level whose
        # rows' words do not fit in their FIFO) already waits for that row's chain to restart
        # at the start of every visit, while the writer pays its overhead: hidden there
        cold = lt(1, feeder_ii(mods[feeder[0]], subst))
        stall[feeder[0]] = where(cold, 0, bursts * writer_stall(burst_overhead))

    def pass_terms(lat: Mapping[str, Expr]) -> tuple[dict[str, Expr], Expr, Expr]:
        """The bounds of one pass with module latencies ``lat``, its prologue and epilogue."""
        stalled = {**lat, **{n: lat[n] + w for n, w in stall.items()}}
        l3_in = {o["name"]: lat[reader[o["name"]]] for o in inputs}
        first = emax(*[eceil(l3_in[o["name"]] / visits_in_pass(o["reload_loops"])) for o in inputs]) \
            if inputs else const(0)
        # the epilogue: the last output tile's way out, through the slowest stage of the drain
        # path (the PE drains, the drain I/O levels and the writer): each stage's time per
        # visit of an output tile, from its own AST, and its fill
        drain = emax(*[eceil(lat[n] / out_visits) + (0 if mods[n]["kind"] == "pe_drain" else eceil(fill[n]))
                       for n in drain_path])
        terms: dict[str, Expr] = {
            "PE": first + emax(*[lat[n] for n in pe_names]) + drain + d_out,
            l3_out_name: first + visit + lat[l3_out_name],
        }

        def ahead(o: OperandJson, l_m: Expr) -> Expr:
            """When a module of input ``o``'s path, taking ``l_m`` for its ``v`` visits, ends:
            it runs ahead of the PEs by the blocks its loaders hold (``ahead_blocks``), then
            waits for the PEs to free one (``first + tile``) and moves the other ``v - B``
            visits at its own pace."""
            v = visits_in_pass(o["reload_loops"])
            b = ahead_blocks[o["name"]]
            late = emin(1, emax(0, v - b))  # 1 when there are more visits than blocks
            return emax(l_m, late * (first + tile + l_m / v * (v - b)))

        for o in inputs:
            terms[reader[o["name"]]] = ahead(o, l3_in[o["name"]]) + tile + drain + d_out
        # after the partial-sum path's last word: a partial-sum loader of the lowest chain
        # publishes its block only after forwarding the words of every module after it in
        # that chain (one block lock around both), so the chain's head, whose PE drains
        # first, gets its partial sums with the chain's last word: the rows of the upper
        # levels (``row_blocks``) are read and drained in the same order, and after the last
        # word the last row's share of the visit's epilogue remains (the whole epilogue with
        # one chain, or when the partial sums run through a chain of PEs)
        cin_tail = drain if out_op["chain_loop"] is not None else eceil(drain / row_blocks)
        for n, m in mods.items():
            if m["kind"] == "io_l3_cin":
                # the partial-sum reader starts with the region, like the input readers
                terms[n] = lat[n] + cin_tail + d_out
            # a chain's boundary module moves a subset of what its head moves: never the bound
            elif m["role"] == "drain" and not m["boundary"]:
                # the drain path starts with the first output visit, like the writer
                terms[n] = first + visit + stalled[n] + fill[n]
            elif m["role"] in ("chain", "loader") and not m["boundary"]:
                # chains and loaders forward words as the reader delivers them: they start
                # with the region, and after their last word the last tile is fed,
                # computed and drained, as after the reader's
                path = by_name.get(m["operand"] or "")  # None on the partial-sum path
                if path is None:
                    # the partial sums meet the accumulators at the PEs' drains, not at the
                    # start of a tile: after the last word only its block's way out remains,
                    # as after the partial-sum reader's
                    terms[n] = lat[n] + cin_tail + d_out
                else:
                    terms[n] = ahead(path, lat[n]) + tile + drain + d_out
            elif m["kind"] not in ("pe", "io_l3_in", "io_l3_out") and not m["boundary"]:
                terms[n] = first + lat[n] + drain
        return terms, first, drain

    terms, first, drain = pass_terms(lat)
    cin = next((m for m in mods.values() if m["kind"] == "io_l3_cin"), None)
    read_frac = read_back_fraction(cin, subst) if cin is not None else None
    if read_frac is None:
        passes_total = n_pass * emax(*terms.values())
    else:
        # passes that read partial sums back and passes that do not run at their own pace:
        # a fraction f of the P passes reads (the partial-sum path is busy), the rest does not
        reading, _, _ = pass_terms({n: module_latency(m, subst, burst_overhead=burst_overhead, taken=True,
                                                      paces=paces) for n, m in mods.items()})
        quiet, _, _ = pass_terms({n: module_latency(m, subst, burst_overhead=burst_overhead, taken=False,
                                                    paces=paces) for n, m in mods.items()})
        passes_total = n_pass * (read_frac * emax(*reading.values()) + (1 - read_frac) * emax(*quiet.values()))
    comm = n_pass * emax(*[lat[reader[o["name"]]] for o in inputs], lat[l3_out_name])
    compute = n_pass * emax(*[lat[n] for n in pe_names])  # what the PEs take (inner tiles flattened)
    latency = passes_total + (n_pass - 1) * region_restart if variant == "accurate" \
        else emax(compute, comm)
    total_bram, bram_parts = bram18k(desc, subst)
    total_uram, uram_parts = uram_blocks(desc, subst)
    bram_smooth, _ = bram18k(desc, subst, smooth=True)
    fabric, per_module, lutram = fabric_usage(desc, subst)
    traffic, per_array = offchip_bytes(desc, subst, burst_overhead=burst_overhead)
    exprs: dict[str, Expr] = {
        "latency": latency, "dsp": fabric.dsp, "lut": fabric.lut, "ff": fabric.ff,
        "bram18k": total_bram + fabric.bram18k, "uram": total_uram, "dsp_pe": dsp(desc, subst),
        "offchip_bytes": traffic, "bram18k_smooth": bram_smooth + fabric.bram18k, "compute_cycles": compute,
        "comm_cycles": comm, "pe_ii": ii, "prologue_cycles": first, "drain_cycles": drain,
        "padding_ratio": _padding(desc, loops), "passes": n_pass,
    }
    for name, e in terms.items():
        exprs[f"bound:{name}"] = e
    for name, e in lat.items():
        exprs[f"module:{name}"] = e + fill[name]
    for name, e in bram_parts.items():
        exprs[f"bram:{name}"] = e
    for name, e in uram_parts.items():
        exprs[f"uram:{name}"] = e
    for name, u in per_module.items():
        for r in ("dsp", "lut", "ff", "bram18k"):
            exprs[f"{r}@{name}"] = getattr(u, r)
    for name, e in lutram.items():
        exprs[f"lutram:{name}"] = e
    cut = dsp_cut(desc, subst, simd_lanes(desc, subst), dsp_per_lane(desc))
    if cut is not None and not isinstance(fabric.dsp, Mul):
        exprs["dsp_cut"] = cut  # a monomial below the DSP total, for the exact optimum's budget cut
    for name, e in per_array.items():
        exprs[f"offchip:{name}"] = e
    for name, e in paces.items():
        exprs[f"pace:{name}"] = e
    return exprs


def _padding(desc: Descriptor, loops: Mapping[str, dict[str, Expr]]) -> Expr:
    """Padded iteration volume over the original volume (1 = no padding)."""
    padded: Expr = const(1)
    real = 1
    for lp in desc["loops"]:
        padded = padded * loops[lp["name"]]["tiles"] * loops[lp["name"]]["t1"]
        real *= int(lp["extent"])
    return padded / real


def model_from_descriptor(desc: Descriptor, platform: Platform, *, variant: str = "accurate",
                          ops: float | None = None) -> DesignModel:
    kinds = sorted({p["memory"] for p in desc["ports"]})
    try:
        memories = [platform.memory(k) for k in kinds]
    except PlatformError as exc:
        raise ModelError(f"{exc}: the descriptor's DRAM ports use {', '.join(kinds)}; model it on the platform "
                         "it was generated for, or regenerate it with that --platform") from None
    burst = int(memories[0].burst_overhead_cycles if memories else platform.kernel_memory.burst_overhead_cycles)
    rates = {m.kind: m.bytes_per_cycle(platform.clock_mhz) for m in memories}
    exprs = model_expressions(desc, burst_overhead=burst, variant=variant, rates=rates)
    params = tuple(ParamSpec(p["name"], p["loop"], p["level"], int(p["lower"]), int(p["upper"]), p["divides"])
                   for p in desc["params"])
    if ops is None:
        points = 1
        for lp in desc["loops"]:
            points *= int(lp["extent"])
        ops = float(len(desc["compute"]["ops_per_lane"]) * points)
    return DesignModel(desc["design"]["id"], params, exprs, platform, ops=ops, variant=variant,
                       info={"dataflow": desc["design"]["dataflow"], "ordering": desc["design"]["ordering"],
                             "buffers_of": buffer_owners(desc),
                             "pe_modules": [m["name"] for m in desc["modules"] if m["kind"] == "pe"],
                             "ports": [{"name": p["name"], "memory": p["memory"], "channel": p["channel"],
                                        "connectivity": p["connectivity"]} for p in desc["ports"]],
                             "modules": [m["name"] for m in desc["modules"]],
                             "dsp_per_lane": dsp_per_lane(desc),
                             "ops_per_lane": len(desc["compute"]["ops_per_lane"])})


#: the module kind that fills each kind of buffer
_OWNER_KIND: dict[BufferRole, ModuleKind] = {"input_block": "io_buf_inter", "partial_sums": "io_buf_inter",
                                             "accumulator": "pe", "running_sums": "pe"}


def buffer_owners(desc: Descriptor) -> dict[str, list[str]]:
    """Buffers by the module that fills them: the first module (in the descriptor's order) of
    the owning kind and operand, so a buffer's BRAM is reported once, not on every variant."""
    out: dict[str, list[str]] = {}
    for m in desc["memory"]:
        kind = _OWNER_KIND.get(m["role"])
        owner = next((mod["name"] for mod in desc["modules"] if mod["kind"] == kind
                      and (kind == "pe" or mod["operand"] == m["operand"])), None)
        if owner is not None:
            out.setdefault(owner, []).append(m["name"])
    return out
