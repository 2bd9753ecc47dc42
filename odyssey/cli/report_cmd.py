"""`odyssey report`: an offline HTML page of a design, a search or a network."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

REPORT_HELP = ("a generated design directory (its model at its tiling), or the --json record of "
               "`odyssey model`, `tune`, `optimum` or `network`")


def default_out(source: Path) -> Path:
    """Where the report of ``source`` goes without --out: into a design directory itself, or
    beside a JSON record in ``<stem>-report/``."""
    return source if source.is_dir() else source.with_name(f"{source.stem}-report")


def _cmd_report(args: argparse.Namespace) -> int:
    from odyssey.cli._output import is_report_dir
    from odyssey.fsutil import check_dir_target
    from odyssey.report import load_input, write_report

    source = Path(args.input)
    out = check_dir_target(Path(args.out) if args.out else default_out(source), "--out", replaceable=is_report_dir)
    rep = load_input(source)
    page, data = write_report(rep, out)
    print(f"{rep['title']}: wrote {page} and {data}")
    return 0


def register(sub: Any) -> None:
    """Add this module's subcommand to the `odyssey` parser."""
    r = sub.add_parser("report", help="write an offline HTML page (and its figures as JSON) of a design, "
                                      "a search or a network")
    r.add_argument("input", metavar="INPUT", help=REPORT_HELP)
    r.add_argument("--out", metavar="DIR", help="folder of report.html and report.json (default: the design "
                                                 "directory itself, or NAME-report/ beside a NAME.json record)")
    r.set_defaults(func=_cmd_report, outputs=())
