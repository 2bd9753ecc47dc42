"""`odyssey study`: run an architecture study of the paper and write its results."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Literal

from odyssey.cli._common import PLATFORM_HELP, positive_float, seed, table
from odyssey.cli._engine import add_engine_options, engine_from
from odyssey.cli._output import add_json, emit_dir, emit_json, outputs
from odyssey.errors import OdysseyError

#: width of `odyssey study --list`
LIST_WIDTH = 100


def _cmd_study(args: argparse.Namespace) -> int:
    from odyssey.platforms import load_platform
    from odyssey.studies.registry import STUDIES, get_study
    from odyssey.studies.study import StudyContext
    from odyssey.studies.writer import check_out, format_value, write_study

    if args.list:
        print(_study_list(STUDIES.values()))
        return 0
    if args.name is None:
        raise OdysseyError("odyssey study: give a study NAME, or --list to see them")
    study = get_study(args.name)
    preset_name: Literal["full", "quick"] = "quick" if args.quick else "full"
    from odyssey.fsutil import check_dir_target

    out = check_dir_target(check_out(Path(args.out) if args.out else
                                     _default_out(study.name, args.quick)), "--out")
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
    except KeyboardInterrupt:  # a study with a design finished returns what it has
        print(f"odyssey: interrupted before any design finished: nothing written to {out}/",
              file=sys.stderr)
        return 130
    finally:
        if live:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    path = emit_dir(out, lambda folder: write_study(study, res, folder))
    print(f"{study.title} ({preset_name} preset, {res.seconds:.1f} s)")
    rows = [["quantity", "ours", "paper", "source"]]
    for h in res.headlines:
        rows.append([h.label, format_value(h.value, h.unit),
                     format_value(h.paper, h.unit) if h.paper is not None else "-", h.source or "-"])
    print(table(rows))
    print(f"wrote {path}/ (README.md, {study.name}.csv, {len(res.plots)} plot(s))")
    if args.json is not None:
        import json

        emit_json(args.json, json.loads((path / "study.json").read_text()))
    if ctx.stop.is_set():
        print("odyssey: interrupted; the results of the designs that finished are above and "
              f"in {path}/", file=sys.stderr)
        return 130
    return 0


def _study_list(studies: Any) -> str:
    """One block per study, at most :data:`LIST_WIDTH` columns: the name and what it
    reproduces, then its designs and method, wrapped."""
    import textwrap

    studies = list(studies)
    indent = max(len(s.name) for s in studies) + 2
    lines = []
    for s in studies:
        for n, (label, text) in enumerate((("", s.paper), ("designs: ", s.designs),
                                           ("method: ", s.method))):
            head = s.name.ljust(indent) if n == 0 else " " * indent
            lines += textwrap.wrap(label + text, LIST_WIDTH, initial_indent=head,
                                   subsequent_indent=" " * (indent + 2))
    return "\n".join(lines)


def _default_out(name: str, quick: bool) -> Path:
    """``odyssey-results/NAME`` in the working directory for the full preset; a temporary
    folder for ``--quick``. Never the committed ``docs/results/`` (give ``--out`` for that)."""
    import tempfile

    if quick:
        return Path(tempfile.gettempdir()) / "odyssey-studies" / f"{name}-quick"
    return Path("odyssey-results") / name


def register(sub: Any) -> None:
    """Add this module's subcommands to the `odyssey` parser."""
    st = sub.add_parser("study", help="run an architecture study of the paper (figures and tables)")
    st.add_argument("name", nargs="?", help="study name (`--list` shows them)")
    st.add_argument("--list", action="store_true", help="list the studies and exit")
    st.add_argument("--quick", action="store_true",
                    help="small sizes and budgets (seconds; what the tests run)")
    st.add_argument("--out", metavar="DIR",
                    help="output folder, replaced if it holds an earlier study (default "
                         "odyssey-results/NAME; with --quick a temporary one; the committed "
                         "results are docs/results/NAME)")
    st.add_argument("--seed", type=seed, default=0, help="random seed (default 0)")
    st.add_argument("--time", type=positive_float, metavar="SECONDS",
                    help="time budget per unit of work (per design, per layer; the study's "
                         "README says which), instead of the preset's")
    st.add_argument("--platform",
                    help=PLATFORM_HELP.replace("(default u250)", "(default: the study's, u250)"))
    add_json(st, "the study's record (the same as study.json in the output folder)")
    add_engine_options(st, "per-design optima of the studies that compute them")
    st.set_defaults(func=_cmd_study, outputs=outputs(("out", "study"), ("json", "file")))
