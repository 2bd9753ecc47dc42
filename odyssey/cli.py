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


def _cmd_generate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from odyssey.codegen.generate import generate
    from odyssey.codegen.tiling import parse_tiling_text
    from odyssey.codegen.writer import write_design
    from odyssey.frontend import load_scop
    from odyssey.mapping.space import analyse

    scop = load_scop(args.kernel, _defines(args.define))
    ks = analyse(scop, max_dim=3)
    design = ks.design(args.design)
    values = parse_tiling_text(args.tiling)
    gen = generate(ks, design, values, seed=args.seed, command=["odyssey", *sys.argv[1:]])
    out = write_design(gen, Path(args.out))
    t = gen.tiling
    dims = " x ".join(str(g.outer) for g in t.space)
    print(f"wrote {out}/ (kernel.cpp, kernel.h, host.cpp, hls.tcl, Makefile, descriptor.json)")
    print(f"design {design.id}: dataflow {design.dataflow}, ordering {design.ordering}; "
          f"array {dims} = {t.num_pes} PEs; tiling {t.describe()}")
    padded = [g.name for g in t.loops if g.is_padded]
    if padded:
        print("zero-padded loops: " + ", ".join(f"{g.name} {g.extent}->{g.padded}" for g in t.loops if g.is_padded))
    if gen.model_only:
        print(f"model only: {gen.model_only}")
    return 0


def _cmd_csim(args: argparse.Namespace) -> int:
    import json as _json
    from pathlib import Path

    from odyssey.codegen.csim import run_csim

    d = Path(args.dir)
    desc_path = d / "descriptor.json"
    if not desc_path.is_file():
        raise OdysseyError(f"{d}: not a design directory (no descriptor.json); create one with `odyssey generate`")
    desc = _json.loads(desc_path.read_text())
    reason = desc.get("design", {}).get("model_only")
    if reason:
        print(f"{d}: design {desc['design']['id']} is model-only ({reason}); nothing to simulate")
        return 3
    res = run_csim(d, timeout_s=args.timeout)
    print(f"{d}: {res.status}: {res.message} (compile {res.compile_seconds:.1f} s, run {res.run_seconds:.2f} s)")
    if not res.passed and res.status in ("compile_error", "runtime_error", "deadlock", "mismatch"):
        tail = (res.stderr or res.stdout).strip().splitlines()[-20:]
        for line in tail:
            print("  " + line)
    return 0 if res.passed else 1


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

    g = sub.add_parser("generate", help="generate the HLS C++ design of one design and tiling")
    g.add_argument("kernel")
    g.add_argument("-D", dest="define", action="append", default=[], metavar="NAME=VALUE")
    g.add_argument("--design", required=True, help="design id or index from `odyssey designs`")
    g.add_argument("--tiling", required=True, metavar="T_i1=16,...",
                   help="tiling factors by name (see `odyssey designs --json`)")
    g.add_argument("--out", required=True, help="output directory (replaced if it holds an odyssey design)")
    g.add_argument("--seed", type=int, default=1, help="seed of the testbench's random inputs")
    g.set_defaults(func=_cmd_generate)

    c = sub.add_parser("csim", help="build and run a generated design's C simulation with g++")
    c.add_argument("dir", help="design directory written by `odyssey generate`")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds before a run counts as hung")
    c.set_defaults(func=_cmd_csim)
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
