"""`odyssey study`: run an architecture study of the paper and write its results."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from odyssey.cli._common import positive_float, table
from odyssey.cli._engine import add_engine_options, engine_from
from odyssey.errors import OdysseyError


def _cmd_study(args: argparse.Namespace) -> int:
    from odyssey.platforms import load_platform
    from odyssey.studies.registry import STUDIES, get_study
    from odyssey.studies.study import StudyContext
    from odyssey.studies.writer import check_out, format_value, write_study

    if args.list:
        rows = [["name", "reproduces", "designs", "method"]]
        rows += [[s.name, s.paper, s.designs, s.method] for s in STUDIES.values()]
        print(table(rows))
        return 0
    if args.name is None:
        raise OdysseyError("odyssey study: give a study NAME, or --list to see them")
    study = get_study(args.name)
    preset_name: Literal["full", "quick"] = "quick" if args.quick else "full"
    out = check_out(Path(args.out) if args.out else _default_out(study.name, args.quick))
    platform = load_platform(args.platform or study.platform)
    live = sys.stderr.isatty()
    start = time.perf_counter()

    def say(msg: str) -> None:
        stamp = f"[{study.name} {time.perf_counter() - start:5.0f} s] {msg}"
        if live:
            print(f"\r{stamp}\x1b[K", end="", file=sys.stderr, flush=True)
        else:
            print(stamp, file=sys.stderr, flush=True)

    ctx = StudyContext(preset=study.preset(preset_name), platform=platform, seed=args.seed,
                       time_s=args.time, say=say, engine=engine_from(args))
    try:
        res = study.execute(ctx)
    finally:
        if live:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    path = write_study(study, res, out)
    print(f"{study.title} ({preset_name} preset, {res.seconds:.1f} s)")
    rows = [["quantity", "ours", "paper", "source"]]
    for h in res.headlines:
        rows.append([h.label, format_value(h.value, h.unit),
                     format_value(h.paper, h.unit) if h.paper is not None else "-", h.source or "-"])
    print(table(rows))
    print(f"wrote {path}/ (README.md, {study.name}.csv, {len(res.plots)} plot(s))")
    return 0


def _default_out(name: str, quick: bool) -> Path:
    """``docs/results/NAME`` for the full preset; a temporary folder for ``--quick``, so a
    quick run never replaces the committed results."""
    if quick:
        return Path(tempfile.gettempdir()) / "odyssey-studies" / f"{name}-quick"
    return Path("docs") / "results" / name


def register(sub: Any) -> None:
    """Add this module's subcommands to the `odyssey` parser."""
    st = sub.add_parser("study", help="run an architecture study of the paper (figures and tables)")
    st.add_argument("name", nargs="?", help="study name (`--list` shows them)")
    st.add_argument("--list", action="store_true", help="list the studies and exit")
    st.add_argument("--quick", action="store_true",
                    help="small sizes and budgets (seconds; what the tests run)")
    st.add_argument("--out", metavar="DIR",
                    help="output folder (default docs/results/NAME; with --quick a temporary one)")
    st.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    st.add_argument("--time", type=positive_float, metavar="SECONDS",
                    help="time budget per unit of work (per design, per layer; the study's "
                         "README says which), instead of the preset's")
    st.add_argument("--platform", help="bundled platform name or JSON file (default: the study's, u250)")
    add_engine_options(st, "per-design optima of the studies that compute them")
    st.set_defaults(func=_cmd_study)
