"""Plain-data report of one model evaluation (what `odyssey model` prints; no printing here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from odyssey.model.design_model import RESOURCES, DesignModel
from odyssey.platforms import available


def model_record(model: DesignModel, tiling: Mapping[str, int]) -> dict[str, Any]:
    """The JSON record of `odyssey model --json`: every resource (``dsp``, ``lut``, ``ff``,
    ``bram18k``, ``uram``) at the top level with its ``budget`` (the kernel region's usable
    share) and ``share`` of it, per module (``modules``: latency, DSP, LUT, FF, BRAM18K of all
    its instances) and for the m_axi adapters and control interface (``interfaces``)."""
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
            mod: dict[str, Any] = {"name": name, "latency_cycles": float(v)}
            for res in ("dsp", "lut", "ff"):
                mod[res] = float(r.get(f"{res}@{name}", 0.0))
            mod["lut"] += sum(float(r.get(f"lutram:{b}", 0.0)) for b in owners.get(name, ()))
            # the module's buffers, and the FIFOs' and adapters' BRAM it holds (none today)
            mod["bram18k"] = sum(float(r[f"bram:{b}"]) for b in owners.get(name, ())) \
                + float(r.get(f"bram18k@{name}", 0.0))
            mod["uram"] = sum((float(r.get(f"uram:{b}", 0.0)) for b in owners.get(name, ())), 0.0)
            mod["bottleneck"] = name == bottleneck or (bottleneck == "PE" and name in pe_modules)
            modules.append(mod)
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
        **{res: float(r[res]) for res in RESOURCES},
        "budget": {res: available(plat, res) for res in RESOURCES},
        "share": {res: float(r[res]) / available(plat, res) if available(plat, res) else 0.0 for res in RESOURCES},
        "kernel_region": {res: getattr(plat.kernel_resources, res) for res in RESOURCES},
        "clock_mhz": plat.clock_mhz,
        "interfaces": {res: float(r.get(f"{res}@ports", 0.0)) for res in ("lut", "ff", "bram18k")},
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
        "uram_by_buffer": {k[len("uram:"):]: float(v) for k, v in r.items() if k.startswith("uram:")},
        "offchip_bytes": {k[len("offchip:"):]: float(v) for k, v in r.items() if k.startswith("offchip:")},
        "offchip_bytes_total": float(r["offchip_bytes"]),
        "roofline": roofline(model, float(r["offchip_bytes"])),
        "dram_ports": [{**port, "pace_cycles_per_word": float(r[f"pace:{port['name']}"])}
                       for port in cast(list[dict[str, Any]], model.info.get("ports", []))
                       if f"pace:{port['name']}" in r],
    }


def roofline(model: DesignModel, offchip_bytes: float) -> dict[str, float]:
    """The design's point and roofs: its operations and arithmetic intensity (operations per
    off-chip byte); the compute roof, every usable DSP in a lane (``dsp_per_lane`` DSPs, each
    lane ``ops_per_lane`` operations per cycle at the clock); the DRAM roof, every channel of
    the platform's kernel memories at its peak bandwidth (GB/s)."""
    plat = model.platform
    per_lane = max(float(cast(float, model.info.get("dsp_per_lane", 0.0))), 0.0)
    ops_lane = float(cast(float, model.info.get("ops_per_lane", 2)))
    lanes = available(plat, "dsp") // per_lane if per_lane else 0.0
    dram = sum(m.channels * m.bandwidth_gbps_per_channel for m in plat.memories)
    return {"ops": model.ops, "intensity_ops_per_byte": model.ops / offchip_bytes if offchip_bytes else 0.0,
            "compute_roof_gops": lanes * ops_lane * plat.clock_mhz / 1e3, "dram_roof_gbs": dram}

