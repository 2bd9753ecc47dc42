"""The `odyssey` command line: the only module that prints, logs or exits."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from odyssey.errors import OdysseyError


def _defines(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise OdysseyError(f"-D {item}: expected NAME=VALUE, e.g. -D I=1024")
        out[name] = value
    return out


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cmd_designs(args: argparse.Namespace) -> int:
    from odyssey.frontend import load_scop
    from odyssey.mapping.report import design_record, design_table
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, _defines(args.define))
    ks = analyse(scop, max_dim=args.max_dim)
    if args.json:
        print(json.dumps([design_record(d) for d in ks.designs], indent=1))
        return 0
    main = scop.statement(ks.statement)
    print(f"{args.kernel}: {main.text}")
    print("sizes: " + ", ".join(f"{n}={v}" for n, v in scop.params))
    for lg in ks.legality:
        print(f"  loop {lg.loop}: {'space loop candidate' if lg.space_ok else 'time only'} ({lg.reason})")
    dataflows = sorted({d.dataflow for d in ks.designs}, key=lambda s: (s.count(","), s))
    print(f"{len(dataflows)} dataflows x {len(ks.orderings)} orderings = {len(ks.designs)} designs")
    print(_table(design_table(ks)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="odyssey", description="Systolic-array generator and auto-tuner for FPGAs")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("designs", help="list the space-time mappings and pruned loop orderings of a kernel")
    d.add_argument("kernel", help="C file with a #pragma scop region")
    d.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE",
                   help="override a size parameter (repeatable)")
    d.add_argument("--max-dim", type=int, choices=(1, 2, 3), default=2,
                   help="largest systolic array dimension (default 2)")
    d.add_argument("--json", action="store_true", help="print a JSON list of designs")
    d.set_defaults(func=_cmd_designs)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except OdysseyError as exc:
        print(f"odyssey: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # output piped into `head` and friends
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("odyssey: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
