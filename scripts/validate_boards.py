"""odyssey's model of AutoSA's six published U250 designs against their on-board figures.

Usage: python scripts/validate_boards.py [--out docs/results/boards]

For each design of ``docs/results/boards/autosa_u250.json`` (the published LUT, FF, BRAM36,
DSP, clock and kernel time of the board build), builds odyssey's model of the same array,
SIMD factor, tiling and problem size on the U250 at the clock the board reached, and writes
``validation.csv`` and ``validation.md`` (the table of docs/validation.md) with every figure
side by side and its ratio: DSP, LUT, FF, BRAM18K (a BRAM36 tile is two BRAM18K), URAM, and
cycles (the kernel time times the board's clock); and the figures of the same design with
AutoSA's binding of every buffer to block RAM (``+bram``) and with PE drain processes that move
a word per cycle from ping-pong blocks (``+wd``; by default the PEs pack their own words) where
they differ. Nothing here is fitted: the model's
constants are the platform tables (odyssey/platforms/*.json, each with its source).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
from pathlib import Path

from odyssey.frontend import load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.platforms import available, load_platform

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "results" / "boards" / "autosa_u250.json"
FIGURES = ("dsp", "lut", "ff", "bram18k", "uram", "cycles")
#: the same design with AutoSA's binding (`+bram`) and with PE drain processes (`+wd`)
VARIANTS = ("+bram", "+wd")


def model_design(entry: dict, suffix: str = "") -> dict[str, float]:
    """odyssey's figures for one board design, at the board's clock (its design id with
    ``suffix``, e.g. ``+bram`` for AutoSA's binding of every buffer to block RAM)."""
    od, board = entry["odyssey"], entry["board"]
    path = bundled_kernel(od["kernel"])
    assert path is not None, od["kernel"]
    ks = analyse(load_scop(path, {k: str(v) for k, v in od["sizes"].items()}))
    plat = dataclasses.replace(load_platform("u250"), clock_mhz=float(board["mhz"]))
    model = build_model(ks, ks.design(od["design"] + suffix), platform=plat)
    r = model.evaluate_one(od["tiling"])
    out = {f: float(r[f]) for f in ("dsp", "lut", "ff", "bram18k", "uram")}
    out["cycles"] = float(r["latency_cycles"])
    out["feasible"] = bool(r["feasible"])
    out["reason"] = str(r["reason"])
    out["gops"] = float(r["throughput_gops"])
    for res in ("dsp", "lut", "ff", "bram18k", "uram"):
        out[f"budget_{res}"] = available(plat, res)
    return out


def board_figures(entry: dict) -> dict[str, float]:
    b = entry["board"]
    return {"dsp": b["dsp"], "lut": b["lut"], "ff": b["ff"], "bram18k": 2 * b["bram36"], "uram": float("nan"),
            "cycles": b["kernel_time_s"] * b["mhz"] * 1e6}


def printed_bram(entry: dict) -> tuple[int, list[tuple[str, int]]] | None:
    """AutoSA's own printed buffers of a design (where its printed code is public), priced with
    odyssey's RAMB18E2 shapes (``platforms/fabric.json``, ``bram``) as block RAM, since AutoSA
    binds each of them to it: the BRAM18K they take, in total and per buffer. A check of the
    BRAM pricing on a design odyssey did not generate."""
    from odyssey.platforms.fabric import fabric_costs

    printed = entry.get("printed_buffers")
    if printed is None:
        return None
    bram = fabric_costs().bram
    rows = [(b["module"], b["instances"] * b["copies"] * bram.blocks(b["width"], b["depth"]))
            for b in printed["buffers"]]
    m = fabric_costs().m_axi  # each bundle's read and write burst buffers, as odyssey prices its own
    words = m.num_outstanding * m.max_burst_length
    rows.append(("m_axi adapters", sum(2 * bram.blocks(w, words) for w in printed.get("m_axi_widths", []))))
    return sum(n for _, n in rows), rows


def _ratio(ours: float, board: float) -> float:
    """odyssey's figure over the board's (NaN where the board publishes none)."""
    return ours / board if board == board and board else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "boards")
    args = ap.parse_args()
    data = json.loads(DATA.read_text())
    rows = []
    for entry in data["designs"]:
        ours, board = model_design(entry), board_figures(entry)
        row: dict[str, object] = {"design": entry["name"], "odyssey_design": entry["odyssey"]["design"],
                                  "array": "x".join(map(str, entry["array"])), "simd": entry["simd"],
                                  "mhz": entry["board"]["mhz"], "feasible": ours["feasible"],
                                  "reason": ours["reason"]}
        for f in FIGURES:
            row[f"{f}_odyssey"] = ours[f]
            row[f"{f}_board"] = board[f]
            row[f"{f}_ratio"] = _ratio(ours[f], board[f])
        # the same design with AutoSA's binding of every buffer to block RAM (`+bram`), and
        # with drains that move a word per cycle, as AutoSA's drain modules do (`+wd`)
        for suffix in VARIANTS:
            other = model_design(entry, suffix)
            for f in FIGURES:
                row[f"{f}_{suffix[1:]}_odyssey"] = other[f]
                row[f"{f}_{suffix[1:]}_ratio"] = _ratio(other[f], board[f])
        rows.append(row)
        print(f"{entry['name']:12s} " + "  ".join(
            f"{f} {ours[f]:,.0f}/{board[f]:,.0f} ({row[f'{f}_ratio']:.2f})" for f in FIGURES if f != "uram")
            + f"  feasible={ours['feasible']} {ours['reason']}")
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "validation.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["| design | array x SIMD | MHz | figure | odyssey | board | ratio |", "|---|---|---|---|--:|--:|--:|"]
    for row in rows:
        for f in FIGURES:
            if f == "uram":
                lines.append(f"| {row['design']} | | | uram | {row['uram_odyssey']:,.0f} | not published | |")
                continue
            head = (f"| {row['design']} (`{row['odyssey_design']}`) | {row['array']} x {row['simd']} | {row['mhz']} "
                    if f == "dsp" else "| | | ")
            lines.append(f"{head}| {f} | {row[f + '_odyssey']:,.0f} | {row[f + '_board']:,.0f} "
                         f"| {row[f + '_ratio']:.3f} |")
            for suffix in VARIANTS:
                v = suffix[1:]
                if f != "uram" and row[f"{f}_{v}_odyssey"] != row[f"{f}_odyssey"]:
                    lines.append(f"| | | | {f}, `{suffix}` | {row[f'{f}_{v}_odyssey']:,.0f} | {row[f + '_board']:,.0f} "
                                 f"| {row[f'{f}_{v}_ratio']:.3f} |")
    for entry in data["designs"]:
        priced = printed_bram(entry)
        if priced is None:
            continue
        total, parts = priced
        board = 2 * entry["board"]["bram36"]
        lines += ["", f"{entry['name']}: AutoSA's printed buffers priced with odyssey's RAMB18E2 shapes: "
                  f"{total:,} BRAM18K, {total / board:.3f} of the board's {board:,} "
                  f"({'; '.join(f'{m}: {n:,}' for m, n in parts)})"]
        print(f"{entry['name']:12s} AutoSA's printed buffers: {total:,} BRAM18K of the board's {board:,}")
    (args.out / "validation.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
