"""Plain-data report of one model evaluation (what `odyssey model` prints; no printing here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from odyssey.model.design_model import DesignModel
from odyssey.platforms import available


def model_record(model: DesignModel, tiling: Mapping[str, int]) -> dict[str, Any]:
    """The JSON record of `odyssey model --json`."""
    r = model.evaluate_one(tiling)
    plat = model.platform
    bounds = {k[len("bound:"):]: float(v) for k, v in r.items() if k.startswith("bound:")}
    bottleneck = max(bounds, key=lambda k: bounds[k]) if bounds else None
    modules = []
    owners = cast(Mapping[str, list[str]], model.info.get("buffers_of", {}))
    pe_modules = set(cast(list[str], model.info.get("pe_modules", [])))
    for k, v in r.items():
        if k.startswith("module:"):
            name = k[len("module:"):]
            modules.append({"name": name, "latency_cycles": float(v),
                            "bram18k": sum(float(r[f"bram:{b}"]) for b in owners.get(name, ())),
                            "bottleneck": name == bottleneck or (bottleneck == "PE" and name in pe_modules)})
    seconds = float(r["latency_cycles"]) / (plat.clock_mhz * 1e6)
    bram_parts = {k[len("bram:"):]: float(v) for k, v in r.items() if k.startswith("bram:")}
    return {
        "design": model.design_id,
        "variant": model.variant,
        "platform": plat.name,
        "tiling": dict(tiling),
        "feasible": bool(r["feasible"]),
        "reason": r["reason"],
        "latency_cycles": float(r["latency_cycles"]),
        "latency_seconds": seconds,
        "throughput_gops": float(r["throughput_gops"]),
        "dsp": float(r["dsp"]), "bram18k": float(r["bram18k"]), "uram": float(r["uram"]),
        "budget": {res: available(plat, res) for res in ("dsp", "bram18k", "uram")},
        "pe_ii": float(r["pe_ii"]),
        "compute_cycles": float(r["compute_cycles"]),
        "comm_cycles": float(r["comm_cycles"]),
        "prologue_cycles": float(r["prologue_cycles"]),
        "drain_cycles": float(r["drain_cycles"]),
        "padding_ratio": float(r["padding_ratio"]),
        "bottleneck": bottleneck,
        "bounds": bounds,
        "modules": modules,
        "bram18k_by_buffer": bram_parts,
        "offchip_bytes": {k[len("offchip:"):]: float(v) for k, v in r.items() if k.startswith("offchip:")},
        "offchip_bytes_total": float(r["offchip_bytes"]),
        "dram_ports": [{**port, "pace_cycles_per_word": float(r[f"pace:{port['name']}"])}
                       for port in cast(list[dict[str, Any]], model.info.get("ports", []))
                       if f"pace:{port['name']}" in r],
    }
