"""The `odyssey` command line: the only package that prints, logs or exits.

Each subcommand module has a ``register(sub)`` that adds its parsers; the
commands import the library lazily so `odyssey --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from odyssey.cli import design_cmds, network_cmd, pareto_cmd, study_cmd, tune_cmds
from odyssey.errors import OdysseyError

#: subcommand modules, in the order `odyssey --help` lists them
COMMAND_MODULES = (design_cmds, tune_cmds, network_cmd, study_cmd, pareto_cmd)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="odyssey", description="Systolic-array generator and auto-tuner for FPGAs")
    sub = p.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
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
