"""One self-contained HTML page per report (inline CSS and SVG; no script, font or image is
fetched), and ``report.json`` beside it with every figure the page shows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from odyssey.report import charts

_CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.l, th.l { text-align: left; }
figure { margin: 0.8em 0; overflow-x: auto; } svg { max-width: 100%; height: auto; }
.bad { font-weight: bold; } .note { color: #555; font-size: 0.9em; }
"""


def _num(v: Any, digits: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int | float):
        return f"{v:,.{digits}f}"
    return escape(str(v))


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1, text: Sequence[str] = ()) -> str:
    """An HTML table; the first ``left`` columns and those named in ``text`` are text
    (left-aligned), the others numbers."""
    lefts = {k for k, h in enumerate(head) if k < left or h in text}
    th = "".join(f'<th class="{"l" if k in lefts else ""}">{escape(h)}</th>' for k, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td class="{"l" if k in lefts else ""}">{c}</td>' for k, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _figure(svg: str | None, caption: str) -> str:
    if not svg:
        return ""
    return f"<figure>{svg}<figcaption class=\"note\">{escape(caption)}</figcaption></figure>"


def _design(rep: Mapping[str, Any]) -> list[str]:
    h = rep["headline"]
    share = h["share_of_roofline"]
    rows = [["latency", f"{_num(h['latency_cycles'])} cycles = {h['latency_ms']:.3f} ms"],
            ["throughput", f"{h['throughput_gops']:,.1f} GOP/s at {h['clock_mhz']:g} MHz"],
            ["share of the roofline", "-" if share is None else f"{100 * share:.1f}%"],
            ["bounded by", _num(h["bottleneck"])],
            ["fits the device", "yes" if h["feasible"] else f'<span class="bad">no: {escape(str(h["reason"]))}</span>'],
            ["tiling", escape(", ".join(f"{k}={v}" for k, v in h["tiling"].items()))]]
    out = ["<h2>Headline</h2>", _table(["figure", "value"], rows, left=2)]
    if rep.get("array"):
        out += ["<h2>The array</h2>", _figure(charts.array_picture(rep["array"]),
                                              "PEs of the space loops, the operands and the DRAM ports.")]
    res = rep["resources"]
    out += ["<h2>Resources</h2>", _figure(charts.resource_bars(res), "Each resource's share of the usable budget "
                                          "(the kernel region times the platform's usable fraction)."),
            _table(["resource", "used", "usable", "share of usable", "device region"],
                   [[r["resource"], _num(r["used"]), _num(r["usable"]),
                     f"{100 * r['used'] / r['usable']:.1f}%" if r["usable"] else "-", _num(r["device"])] for r in res])]
    out += ["<h2>Roofline</h2>", _figure(charts.roofline(rep["roofline"]), "Compute roof: every usable DSP in a "
                                         "lane at the clock; DRAM roof: every channel at its peak bandwidth.")]
    mods = rep["modules"]
    out += ["<h2>Modules</h2>", _figure(charts.module_bars(mods), "Latency of each module's instances; "
                                        "the bottleneck is named in its label."),
            _table(["module", "latency (cycles)", "bottleneck", "DSP", "LUT", "FF", "BRAM18K", "URAM"],
                   [[escape(m["name"]), _num(m["latency_cycles"]), "yes" if m["bottleneck"] else "",
                     *(_num(m[r]) for r in ("dsp", "lut", "ff", "bram18k", "uram"))] for m in mods])]
    sim = rep.get("simulation")
    if sim:
        out += ["<h2>Timed simulation</h2>",
                _table(["figure", "cycles"], [["simulated", _num(sim["simulated_cycles"])],
                                              ["model", f'{_num(sim["model_cycles"])} '
                                                        f'({sim["model_error_percent"]:+.2f}%)']], left=2)]
        if sim["timeline"]:
            out.append(_figure(charts.timeline(sim["timeline"]),
                               "Each process (the most stalled, at most 40) running and stalled, from the "
                               "timed simulation (`odyssey sim --trace`)."))
    return out


def _search(rep: Mapping[str, Any]) -> list[str]:
    h = rep["headline"]
    ds = rep["designs"]
    out = ["<h2>Headline</h2>", _table(["figure", "value"], [
        ["designs", _num(h["designs"])], ["best", f"{escape(str(h['best']))}: {h['best_gops']:,.1f} GOP/s"],
        ["proven optimal", f"{h['proven']} of {h['designs']}"]], left=2)]
    out += ["<h2>Designs</h2>", _figure(charts.design_bars(ds), "Best throughput of each design, with its "
                                        "proof status printed on its bar.")]
    cols = [r for r in ("dsp", "lut", "ff", "bram18k", "uram") if any(r in d for d in ds)]
    out.append(_table(["design", "GOP/s", "status", "gap", "seconds", *[c.upper() for c in cols], "tiling"],
                      [[escape(d["design"]), _num(d["throughput_gops"], 1), escape(d["status"]),
                        "-" if d["gap"] is None else f"{100 * d['gap']:.2f}%", _num(d["seconds"], 1),
                        *(_num(d.get(c)) for c in cols),
                        escape(", ".join(f"{k}={v}" for k, v in d["tiling"].items()))] for d in ds],
                      text=("status", "tiling")))
    for by in ("samples", "seconds"):
        svg = charts.convergence(ds, by=by)
        if svg:
            out += [f"<h2>Convergence ({by})</h2>", _figure(svg, f"Best throughput found so far against {by}, "
                                                            "each curve named at its end.")]
    return out


def _network(rep: Mapping[str, Any]) -> list[str]:
    h = rep["headline"]
    lays = rep["layers"]
    out = ["<h2>Headline</h2>", _table(["figure", "value"], [
        ["layers", _num(h["layers"])], ["throughput", f"{h['throughput_gops']:,.1f} GOP/s"],
        ["latency", f"{h['latency_ms']:.3f} ms"], ["every layer tuned", "yes" if h["complete"] else "no"]], left=2)]
    out += ["<h2>Layers</h2>", _figure(charts.layer_bars(lays), "Each layer's throughput; its share of the "
                                       "network's time is printed on its bar."),
            _table(["layer", "kind", "design", "GOP/s", "DSP efficiency", "share of time"],
                   [[escape(lay["name"]), escape(lay["kind"]), escape(str(lay["design"])),
                     _num(lay["throughput_gops"], 1), f"{100 * lay['dsp_efficiency']:.1f}%",
                     f"{100 * lay['share_of_time']:.1f}%"] for lay in lays], left=3)]
    return out


def _pareto(rep: Mapping[str, Any]) -> list[str]:
    h = rep["headline"]
    f = h["fastest"]
    rows = [["objectives", escape(", ".join(h["objectives"]))], ["points on the front", _num(h["points"])],
            ["hypervolume (share of the reference box)", f"{h['hypervolume']:.4f}"],
            ["evaluations", _num(h["evaluations"])],
            ["search", escape(f"{h['method']}, {h['status']}" + (" (exact)" if h["exact"] else ""))]]
    if f is not None:
        rows.append(["fastest point", escape(f"{f['design']}: {f['throughput_gops']:,.1f} GOP/s, "
                                              f"{f['dsp']:,.0f} DSP, {f['bram18k']:,.0f} BRAM18K ({f['tiling']})")])
    out = ["<h2>Headline</h2>", _table(["figure", "value"], rows, left=2)]
    if rep["points"]:
        out += ["<h2>The front</h2>", _figure(charts.front(rep["points"]), "Every point of the front: its "
                                              "throughput against its DSP and its BRAM18K; the designs with most "
                                              "points each have a marker shape, with their counts.")]
    out += ["<h2>Designs</h2>", _table(["design", "legal tilings", "evaluated", "on the front"],
                                       [[escape(d["design"]), _num(d["legal_tilings"]), _num(d["evaluated"]),
                                         _num(d["on_front"])] for d in sorted(rep["designs"],
                                                                               key=lambda d: -d["on_front"])])]
    return out


def html_page(rep: Mapping[str, Any]) -> str:
    """The page of a report (see :mod:`odyssey.report.data`)."""
    body = {"design": _design, "search": _search, "network": _network, "pareto": _pareto}[rep["kind"]](rep)
    title = escape(rep["title"])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title>"
            f"<style>{_CSS}</style></head><body><h1>{title}</h1>"
            f"<p class=\"note\">odyssey report of {escape(rep['source'])}; every figure is in report.json beside "
            "this page.</p>" + "\n".join(body) + "</body></html>\n")


def write_report(rep: Mapping[str, Any], out: Path) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.json`` into ``out`` (created); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    page = out / "report.html"
    data = out / "report.json"
    page.write_text(html_page(rep))
    data.write_text(json.dumps(rep, indent=1) + "\n")
    return page, data


__all__ = ["html_page", "write_report"]
