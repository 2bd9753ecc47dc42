"""Plain-data views of the design space for JSON output and tables (no printing here)."""

from __future__ import annotations

from typing import Any

from odyssey.mapping.space import Design, KernelSpace


def design_record(d: Design) -> dict[str, Any]:
    """The JSON record of one design (the `odyssey designs --json` interface)."""
    out = next(o for o in d.operands if o.role == "output")
    return {
        "id": d.id,
        "index": d.index,
        "dataflow": d.dataflow,
        "ordering": d.ordering,
        "space_loops": list(d.space_loops),
        "time_loops": list(d.time_loops),
        "order": list(d.order),
        "reduction_loops": list(d.reduction_loops),
        "parallel_loops": list(d.parallel_loops),
        "simd_candidates": list(d.simd_candidates),
        "simd_loop": d.simd_loop,
        "loops": [{"name": b.name, "lower": b.lower, "extent": b.extent,
                   "extent_expr": str(b.extent_expr) if b.extent_expr is not None else None,
                   "rectangular": b.rectangular} for b in d.band],
        "arrays": [
            {"ref": o.ref_id, "array": o.array, "role": o.role, "transport": o.transport,
             "along": o.chain_loop, "reuse_loops": list(o.reuse_loops)}
            for o in d.operands
        ],
        "output": {
            "array": out.array,
            "accumulates": ("across PEs along " + out.chain_loop) if out.chain_loop else "in each PE",
            "drains": "from the end of each PE chain" if out.chain_loop else "from every PE",
            "between_partitions": d.output_accumulation,
        },
        "params": [p.as_json() for p in d.params],
    }


def space_record(ks: KernelSpace) -> dict[str, Any]:
    return {
        "kernel": ks.scop.file,
        "function": ks.scop.function,
        "params": dict(ks.scop.params),
        "statement": ks.scop.statement(ks.statement).text,
        "initializers": [ks.scop.statement(s).text for s in ks.initializers],
        "finalizers": [ks.scop.statement(s).text for s in ks.finalizers],
        "scalars": [{"name": sc.name, "elem": sc.elem} for sc in ks.scop.scalars],
        "space_loops": [{"loop": lg.loop, "legal": lg.space_ok, "reason": lg.reason}
                        for lg in ks.legality],
        "reuse": [{"ref": r.ref_id, "array": r.array, "kind": r.kind,
                   "vectors": [list(v) for v in r.vectors]} for r in ks.reuse],
        "orderings": ["<" + ",".join("[" + ",".join(g) + "]" for g in o if g) + ">"
                      for o in ks.orderings],
        "designs": [design_record(d) for d in ks.designs],
    }


def design_table(ks: KernelSpace) -> list[list[str]]:
    """Rows for a readable table: header first."""
    rows = [["#", "id", "dataflow", "ordering", "chain", "direct", "output", "simd", "params"]]
    for d in ks.designs:
        chain = ",".join(f"{o.array}>{o.chain_loop}" for o in d.operands
                         if o.role == "input" and o.transport == "chain") or "-"
        direct = ",".join(o.array for o in d.operands
                          if o.role == "input" and o.transport == "direct") or "-"
        out = next(o for o in d.operands if o.role == "output")
        where = f"chain>{out.chain_loop}" if out.chain_loop else "per-PE"
        if d.output_accumulation != "on_chip":
            where += " +partial"
        rows.append([str(d.index), d.id, d.dataflow, d.ordering, chain, direct, where,
                     d.simd_loop or "-", str(len(d.params))])
    return rows
