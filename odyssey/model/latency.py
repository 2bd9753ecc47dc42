"""Latency of hardware modules, walked from the module ASTs in the descriptor.

Rules (cycles), the same ones the timed simulation implements:

* a pipelined loop nest (a perfect nest of loops whose innermost loop is pipelined at
  ``II``, flattened by HLS) of ``N`` iterations and depth ``D`` takes
  ``(N - 1) * max(II, pace) + D`` cycles (0 when ``N = 0``), plus the DRAM port's per-burst
  overhead for every burst it issues (``N / run`` bursts per DRAM access of run length
  ``run``). ``pace`` is the cycles per iteration its DRAM accesses need at their ports' share
  of their channels' bandwidth (:mod:`odyssey.codegen.channels`): the sum of the paces of a
  port's accesses in the body, the largest over the ports (0 without DRAM accesses). So a
  DRAM reader or writer takes ``max(its issue rate, bytes / its share of the channel)`` plus
  its burst overheads;
* a drain chain's forwarding loop also waits, once per region, for its last word to cross
  the modules after it (``fill_sym``, :func:`module_fill`): while the chain streams, those
  modules run ahead by their FIFOs and hide the hops, so a visit costs the loop's own depth;
* a loop that is not pipelined takes ``trip * latency(body)`` (no per-iteration overhead);
* an ``if`` takes ``freq * latency(then) + (1 - freq) * latency(else)``;
* statements outside pipelines (declarations, lock acquisition) take 0.

Template parameters (module positions ``p_*``) are set to 0: the head of an I/O chain
moves the most data, so it is the slowest module of its kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from odyssey.codegen.descriptor_schema import ExprJson, ModuleJson, StmtJson, nested_blocks
from odyssey.expr import Const, Expr, const, emax, from_json, lt, substitute, where
from odyssey.platforms import assumption


def _expr(obj: ExprJson, subst: Mapping[str, Expr]) -> Expr:
    e = from_json(obj)
    return substitute(e, subst) if subst else e


def _pipelined_chain(node: StmtJson) -> list[StmtJson] | None:
    chain = [node]
    cur = node
    while cur.get("pipeline_ii") is None:
        body = cur.get("body", [])
        if len(body) != 1 or body[0].get("type") != "for":
            return None
        cur = body[0]
        chain.append(cur)
    return chain


def _dram_nodes(stmts: Sequence[StmtJson]) -> list[StmtJson]:
    out: list[StmtJson] = []
    for s in stmts:
        t = s.get("type")
        if t in ("dram_read", "dram_write"):
            out.append(s)
        for block in nested_blocks(s):
            out.extend(_dram_nodes(block))
    return out


def _issue(ii: Expr, pace: Expr) -> Expr:
    """Cycles between iterations: ``max(II, pace)``, folded when both are numbers."""
    if isinstance(pace, Const) and isinstance(ii, Const):
        return ii if pace.value <= ii.value else pace
    return emax(ii, pace)


def _pace(body: Sequence[StmtJson], paces: Mapping[str, Expr]) -> Expr:
    """Cycles per iteration the DRAM accesses of ``body`` need: per port the sum of its
    accesses' paces, the largest over the ports (0 without accesses or without ``paces``)."""
    per: dict[str, Expr] = {}
    for d in _dram_nodes(body):
        port = d["port"]
        if port in paces:
            per[port] = per.get(port, const(0)) + paces[port]
    return emax(*per.values()) if per else const(0)


def block_latency(
    stmts: Sequence[StmtJson], subst: Mapping[str, Expr], *, burst_overhead: int,
    taken: bool | None = None, paces: Mapping[str, Expr] | None = None,
) -> Expr:
    """Latency in cycles of a statement list (see the module docstring). ``taken`` forces
    every ``if`` that carries a frequency to be taken (True) or not (False); ``paces`` gives
    each DRAM port's cycles per word at its share of its channel (none: no bandwidth limit)."""
    total: Expr = const(0)
    for s in stmts:
        total = total + _stmt_latency(s, subst, burst_overhead, taken, paces or {})
    return total


def _stmt_latency(s: StmtJson, subst: Mapping[str, Expr], burst_overhead: int,
                  taken: bool | None, paces: Mapping[str, Expr]) -> Expr:
    t = s.get("type")
    if t == "for":
        chain = _pipelined_chain(s)
        if chain is not None:
            inner = chain[-1]
            n: Expr = const(1)
            for loop in chain:
                n = n * _expr(loop["trip"], subst)
            ii_sym, ii_num = inner.get("ii_sym"), inner.get("pipeline_ii")
            assert ii_num is not None  # the chain ends at its pipelined loop
            ii = _expr(ii_sym, subst) if ii_sym is not None else const(ii_num)
            depth = _depth(inner, subst)
            bursts: Expr = const(0)
            for d in _dram_nodes(inner["body"]):
                bursts = bursts + n / _expr(d.get("run", 1), subst)
            body = (n - 1) * _issue(ii, _pace(inner["body"], paces)) + depth + bursts * burst_overhead
            return where(lt(0, n), body, 0)
        if s.get("unroll"):
            return const(0)
        return _expr(s["trip"], subst) * block_latency(s["body"], subst, burst_overhead=burst_overhead,
                                                       taken=taken, paces=paces)
    if t == "if":
        freq: Expr
        recorded = s.get("freq")
        if recorded is None:
            freq = const(1)
        elif taken is None:
            freq = _expr(recorded, subst)
        else:
            freq = const(1 if taken else 0)
        then = block_latency(s["then"], subst, burst_overhead=burst_overhead, taken=taken, paces=paces)
        other = block_latency(s.get("else", []), subst, burst_overhead=burst_overhead, taken=taken, paces=paces)
        return freq * then + (const(1) - freq) * other
    if t == "block":
        return block_latency(s["body"], subst, burst_overhead=burst_overhead, taken=taken, paces=paces)
    return const(0)


def module_latency(module: ModuleJson, subst: Mapping[str, Expr], *, burst_overhead: int,
                   taken: bool | None = None, paces: Mapping[str, Expr] | None = None) -> Expr:
    """Latency of one module (its head instance) in cycles; ``taken`` and ``paces`` as in
    :func:`block_latency`."""
    local = dict(subst)
    for tp in module.get("template", []):
        local[tp.split()[-1]] = const(0)
    return block_latency(module["ast"], local, burst_overhead=burst_overhead, taken=taken, paces=paces)


def module_fill(module: ModuleJson, subst: Mapping[str, Expr]) -> Expr:
    """Cycles a module's last word of a region waits, once, beyond its loops' latencies: the
    largest ``fill_sym`` of its loops (a drain chain's forwarding loop: one hop per module
    after it, hidden by their FIFOs while the chain streams), 0 without one. The head
    instance's (position parameters 0), like :func:`module_latency`."""
    local = dict(subst)
    for tp in module.get("template", []):
        local[tp.split()[-1]] = const(0)
    fills: list[Expr] = []
    stack = list(module["ast"])
    while stack:
        s = stack.pop()
        fill = s.get("fill_sym") if s.get("type") == "for" else None
        if fill is not None:
            fills.append(_expr(fill, local))
        for block in nested_blocks(s):
            stack.extend(block)
    return emax(*fills) if fills else const(0)


def read_back_fraction(module: ModuleJson, subst: Mapping[str, Expr]) -> Expr | None:
    """The frequency of the first ``if`` that carries one in ``module`` (the fraction of the
    passes that read partial sums back, for the partial-sum reader), or None."""
    stack = list(module["ast"])
    while stack:
        s = stack.pop(0)
        freq = s.get("freq")
        if s.get("type") == "if" and freq is not None:
            return _expr(freq, subst)
        for block in nested_blocks(s):
            stack = list(block) + stack
    return None


def _first_pipelined(module: ModuleJson) -> StmtJson | None:
    """A module's first pipelined loop in program order (depth first), or None."""
    stack = list(module["ast"])
    while stack:
        s = stack.pop(0)
        if s.get("type") == "for" and s.get("pipeline_ii") is not None:
            return s
        for block in nested_blocks(s):
            stack = list(block) + stack
    return None


def pipeline_depth(module: ModuleJson, subst: Mapping[str, Expr]) -> Expr:
    """Depth (cycles) of a module's first pipelined loop, symbolic when recorded so
    (the PE's depth depends on its SIMD factor); the I/O default when there is none."""
    loop = _first_pipelined(module)
    return _depth(loop, subst) if loop is not None else const(assumption("io_pipeline_depth").value)


def feeder_ii(module: ModuleJson, subst: Mapping[str, Expr]) -> Expr:
    """Cycles per iteration of a module's first pipelined loop: its ``ii_sym`` when recorded
    (a drain chain level reading the level below at that chain's cold pace), else its II."""
    loop = _first_pipelined(module)
    if loop is None:
        return const(1)
    ii_sym, ii_num = loop.get("ii_sym"), loop.get("pipeline_ii")
    assert ii_num is not None  # what _first_pipelined looks for
    return _expr(ii_sym, subst) if ii_sym is not None else const(ii_num)


def _depth(loop: StmtJson, subst: Mapping[str, Expr]) -> Expr:
    depth_sym = loop.get("depth_sym")
    if depth_sym is not None:
        return _expr(depth_sym, subst)
    return const(int(loop.get("pipeline_depth") or assumption("io_pipeline_depth").value))
