"""What a report shows, as plain data (``report.json``): read from a generated design or from
the ``--json`` record of ``model``, ``tune``, ``optimum`` or ``network``.

A report is a dict with ``kind`` (``design``, ``search``, ``pareto`` or ``network``), ``title`` and the
figures of its page; :mod:`odyssey.report.page` draws it. Nothing here prints or draws.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from odyssey.errors import ReportError

RESOURCES = ("dsp", "lut", "ff", "bram18k", "uram")


def load_input(path: Path) -> dict[str, Any]:
    """The report of ``path``: a generated design directory (its ``descriptor.json``) or a
    JSON record of ``odyssey model``, ``tune``, ``optimum`` or ``network``."""
    if path.is_dir():
        desc = path / "descriptor.json"
        if not desc.is_file():
            raise ReportError(f"{path}: not a generated design (no descriptor.json); give a design "
                              "directory of `odyssey generate` or a --json record of model, tune, optimum or network")
        return design_from_descriptor(desc)
    if not path.is_file():
        raise ReportError(f"{path}: no such file or directory")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not a JSON record ({exc}); give the --json output of model, tune, "
                          "optimum or network, or a design directory") from None
    return from_record(data, str(path), folder=path.parent)


def from_record(data: Any, source: str, *, folder: Path | None = None) -> dict[str, Any]:
    """The report of a parsed JSON record (see :func:`load_input`); ``folder`` is where a
    Pareto record's ``front.csv`` is (its ``points_in``)."""
    if isinstance(data, dict) and "objectives" in data and "hypervolume" in data and "designs" in data:
        return pareto_report(data, source, folder)
    if isinstance(data, dict) and "modules" in data and "latency_cycles" in data and "budget" in data:
        return design_report(data, source)
    if isinstance(data, dict) and isinstance(data.get("layers"), list) and "totals" in data:
        return network_report(data, source)
    if isinstance(data, dict) and isinstance(data.get("designs"), list):
        return search_report(data, source)
    if isinstance(data, list) and data and isinstance(data[0], dict) and "design" in data[0]:
        return search_report({"designs": data}, source)
    if isinstance(data, dict) and "design" in data and "status" in data and "tiling" in data:
        return search_report({**data, "designs": [data]}, source)  # one design's `optimum`
    raise ReportError(f"{source}: not a record odyssey reports on (expected the --json of `odyssey model`, "
                      "`tune`, `optimum` or `network`)")


def design_from_descriptor(path: Path) -> dict[str, Any]:
    """The report of a generated design: the model of its descriptor at its tiling (the same
    record as ``odyssey model --json``) and its array's shape."""
    from odyssey.codegen.descriptor import load_descriptor
    from odyssey.model.build import model_from_descriptor
    from odyssey.model.report import model_record
    from odyssey.platforms import design_platform

    desc = load_descriptor(path)
    model = model_from_descriptor(desc, design_platform(str(desc["platform"]), float(desc["clock_mhz"])))
    out = design_report(model_record(model, desc["tiling"]), str(path.parent))
    out["array"] = array_shape(desc)
    sim = _simulation(path.parent / "sim.json", float(out["headline"]["latency_cycles"]))
    if sim is not None:
        out["simulation"] = sim
    return out


def _simulation(path: Path, model_cycles: float) -> dict[str, Any] | None:
    """The design's timed simulation (``sim.json``, which `odyssey sim` keeps beside it):
    simulated and modelled cycles and, where it was traced, each process's timeline; None
    where none passed."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("status") != "pass" or not rec.get("simulated_cycles"):
        return None
    sim = float(rec["simulated_cycles"])
    return {"simulated_cycles": sim, "model_cycles": model_cycles,
            "model_error_percent": 100.0 * (model_cycles - sim) / sim,
            "modules": list(rec.get("modules", [])), "timeline": list(rec.get("timeline", []))}


def array_shape(desc: Mapping[str, Any]) -> dict[str, Any]:
    """The array drawn on a design's page: PEs per space loop (rows, columns), the operands
    with their role and the loop along which each moves through the PEs, and each DRAM port
    with its memory channel."""
    space = list(desc["design"]["space_loops"])
    dims = []
    for name in space:
        t1, t2 = int(desc["tiling"][f"T_{name}1"]), int(desc["tiling"][f"T_{name}2"])
        dims.append({"loop": name, "pes": -(-t1 // max(t2, 1))})
    pes = {d["loop"]: d["pes"] for d in dims}
    total = 1
    for n in pes.values():
        total *= n
    operands = []
    for o in desc["operands"]:
        chain = o.get("chain_loop")
        length = pes.get(chain, 1) if chain else 0
        # a chain runs along its loop through every PE of one line of the grid
        operands.append({"name": o["name"], "role": o["role"], "chain": chain,
                         "chains": total // length if length else 0, "chain_pes": length})
    ports = [{"name": p["name"], "direction": p["direction"], "channel": p["channel"], "memory": p["memory"]}
             for p in desc["ports"]]
    return {"space_loops": space, "dims": dims, "num_pes": total, "operands": operands, "ports": ports}


def design_report(rec: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A design's page from an ``odyssey model --json`` record."""
    roof = rec.get("roofline") or {}
    compute_roof = float(roof.get("compute_roof_gops", 0.0))
    dram_roof = float(roof.get("dram_roof_gbs", 0.0))
    intensity = float(roof.get("intensity_ops_per_byte", 0.0))
    attainable = min(compute_roof, dram_roof * intensity) if compute_roof and intensity else compute_roof
    gops = float(rec["throughput_gops"])
    return {
        "kind": "design", "source": source,
        "title": f"design {rec['design']} on {rec['platform']}",
        "headline": {
            "design": rec["design"], "platform": rec["platform"], "clock_mhz": float(rec["clock_mhz"]),
            "tiling": dict(rec["tiling"]), "feasible": bool(rec["feasible"]), "reason": rec.get("reason", ""),
            "latency_cycles": float(rec["latency_cycles"]), "latency_ms": float(rec["latency_seconds"]) * 1e3,
            "throughput_gops": gops, "bottleneck": rec.get("bottleneck"),
            "share_of_roofline": gops / attainable if attainable else None,
        },
        "resources": [{"resource": r, "used": float(rec[r]), "usable": float(rec["budget"][r]),
                       "device": float(rec["kernel_region"].get(r, 0.0)) if isinstance(rec.get("kernel_region"), dict)
                       else 0.0} for r in RESOURCES],
        "roofline": {"intensity_ops_per_byte": intensity, "throughput_gops": gops,
                     "compute_roof_gops": compute_roof, "dram_roof_gbs": dram_roof},
        "modules": [{"name": m["name"], "latency_cycles": float(m["latency_cycles"]),
                     "bottleneck": bool(m["bottleneck"]), **{r: float(m.get(r, 0.0)) for r in RESOURCES}}
                    for m in rec["modules"]],
        "offchip_bytes": dict(rec.get("offchip_bytes", {})),
    }


def _front_points(data: Mapping[str, Any], source: str, folder: Path | None) -> list[dict[str, Any]]:
    """A Pareto record's points: its own ``points``, or the rows of the ``front.csv`` it names
    (``points_in``, beside the record), read by :func:`odyssey.tune.pareto.load_front`."""
    from odyssey.tune.pareto import load_front

    csv_text = None
    if not isinstance(data.get("points"), list):
        name = data.get("points_in")
        path = (folder or Path(".")) / str(name)
        if not name or not path.is_file():
            raise ReportError(f"{source}: the Pareto record keeps its points in {path}, which is not there; "
                              "report the record in the folder `odyssey pareto --out` wrote")
        csv_text = path.read_text()
    return [{"design": p.design_id, "latency_cycles": p.latency_cycles, "throughput_gops": p.throughput_gops,
             "dsp": p.dsp, "bram18k": p.bram18k, "tiling": " ".join(f"{k}={v}" for k, v in p.tiling.items())}
            for p in load_front(data, csv_text).points]


def pareto_report(data: Mapping[str, Any], source: str, folder: Path | None) -> dict[str, Any]:
    """A Pareto front's page (``odyssey pareto`` record): its points (throughput against DSP
    and BRAM), each design's share of the front, the hypervolume."""
    points = _front_points(data, source, folder)
    fastest = min(points, key=lambda p: p["latency_cycles"]) if points else None
    return {
        "kind": "pareto", "source": source,
        "title": f"Pareto front of {data.get('kernel', 'the kernel')} on {data.get('platform', '')}".strip(),
        "headline": {"objectives": list(data["objectives"]), "points": len(points),
                     "hypervolume": float(data["hypervolume"]), "evaluations": int(data.get("evaluations", 0)),
                     "method": data.get("method"), "status": data.get("status"), "exact": bool(data.get("exact")),
                     "fastest": fastest},
        "designs": [{"design": d["design"], "legal_tilings": int(d["legal_tilings"]),
                     "evaluated": int(d["evaluated"]), "on_front": int(d["on_front"])} for d in data["designs"]],
        "points": points,
    }


def _used(v: Any) -> float:
    """A resource figure of a tune record (``{"used": ...}``) or an optimum record (a number)."""
    return float(v["used"]) if isinstance(v, dict) else float(v or 0.0)


def search_report(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A search's page from a ``tune`` or ``optimum`` record: every design's best, its
    resources and its proof status, and each design's convergence where the record traces it."""
    designs = []
    for r in data["designs"]:
        if not isinstance(r, dict) or "design" not in r:
            raise ReportError(f"{source}: a design entry without `design`: {str(r)[:80]}")
        status = r.get("status") or ("optimal" if r.get("proven_optimal") else "best found")
        designs.append({
            "design": r["design"], "dataflow": r.get("dataflow", ""), "ordering": r.get("ordering", ""),
            "throughput_gops": float(r.get("throughput_gops") or 0.0),
            "latency_cycles": float(r.get("latency_cycles") or 0.0), "status": status,
            "gap": float(r["gap"]) if isinstance(r.get("gap"), int | float) else None,
            "seconds": float(r.get("seconds") or 0.0), "tiling": dict(r.get("tiling") or {}),
            **{res: _used(r.get(res)) for res in RESOURCES if res in r},
            "trace": [{"samples": float(t.get("samples", 0)), "seconds": float(t.get("seconds", 0.0)),
                       "throughput_gops": float(t.get("throughput_gops", 0.0))} for t in r.get("trace", [])
                      if isinstance(t, dict)],
        })
    best = max(designs, key=lambda d: d["throughput_gops"], default=None)
    return {"kind": "search", "source": source,
            "title": f"search over {len(designs)} design(s)" + (f" on {data['platform']}" if data.get("platform") else ""),
            "headline": {"designs": len(designs), "best": best["design"] if best else None,
                         "best_gops": best["throughput_gops"] if best else 0.0,
                         "proven": sum(d["status"] == "optimal" for d in designs),
                         "platform": data.get("platform"), "kernel": data.get("kernel")},
            "designs": designs}


def network_report(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A network's page from an ``odyssey network`` record: each layer's design, GOP/s,
    DSP utilization and share of the network's time."""
    totals = data["totals"]
    total_cycles = float(totals.get("latency_cycles") or 0.0)
    layers = []
    for lay in data["layers"]:
        cycles = float(lay.get("latency_cycles") or 0.0)  # the layer's whole batch
        layers.append({"name": lay["name"], "kind": lay.get("kind", ""), "design": lay.get("design"),
                       "throughput_gops": float(lay.get("throughput_gops") or 0.0),
                       "dsp_efficiency": float(lay.get("dsp_efficiency") or 0.0),
                       "latency_cycles": cycles, "share_of_time": cycles / total_cycles if total_cycles else 0.0})
    return {"kind": "network", "source": source,
            "title": f"network {data.get('title') or data.get('network')}",
            "headline": {"network": data.get("network"), "layers": len(layers),
                         "throughput_gops": float(totals.get("throughput_gops") or 0.0),
                         "latency_ms": float(totals.get("latency_ms") or 0.0), "complete": bool(totals.get("complete")),
                         "platform": data.get("platform"), "clock_mhz": data.get("clock_mhz")},
            "layers": layers}


__all__ = ["RESOURCES", "array_shape", "design_from_descriptor", "design_report", "from_record",
           "load_input", "network_report", "search_report"]
