"""The `odyssey` command line: the only package that prints, logs or exits.

Each subcommand module has a ``register(sub)`` that adds its parsers; the
commands import the library lazily so `odyssey --help` stays fast.

Exit status: 0 when the command did what was asked; 2 when it could not (bad input, an
infeasible request, a failed simulation, an output that could not be written where asked:
the message says what, where and how to fix it); 130 when interrupted (the results so far
are printed and written). An unexpected exception (a bug in odyssey) is a one-line message
and status 2 too; ``odyssey --debug ...`` shows its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from odyssey import __version__
from odyssey.cli import design_cmds, network_cmd, pareto_cmd, report_cmd, study_cmd, tune_cmds
from odyssey.cli._output import FAILED, check_outputs, json_to_stdout, set_json_stream
from odyssey.errors import OdysseyError
from odyssey.runtime import tune_gc, tune_malloc

#: subcommand modules, in the order `odyssey --help` lists them
COMMAND_MODULES = (design_cmds, tune_cmds, network_cmd, study_cmd, pareto_cmd, report_cmd)

#: the exit statuses of every command
EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 2, 130


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="odyssey", description="Systolic-array generator and auto-tuner for FPGAs",
        epilog="exit status: 0 done, 2 could not be done (the message says why), 130 "
               "interrupted (results so far kept). `odyssey COMMAND --help` describes a command.")
    p.add_argument("--version", action="version", version=f"odyssey {__version__}",
                   help="print the version and exit")
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an unexpected error (for bug reports)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return p


def _run(args: argparse.Namespace) -> int:
    check_outputs(args)
    if not json_to_stdout(args):
        set_json_stream(None)
        return int(args.func(args))
    # `--json -`: standard output carries the JSON alone, the report goes to standard error
    set_json_stream(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return int(args.func(args))
    finally:
        set_json_stream(None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help and --version (0), a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    FAILED.clear()
    tune_gc()  # odyssey.runtime: fewer full collections over the models of a long run
    tune_malloc()  # and large numpy temporaries reused, not mapped afresh each time
    try:
        code = _run(args)
    except OdysseyError as exc:
        print(f"odyssey: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # output piped into `head` and friends
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print("odyssey: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError as exc:  # a limit of the machine (or of `ulimit -v`), not a bug
        detail = f" ({str(exc).splitlines()[0]})" if str(exc) else ""
        print(f"odyssey: error: out of memory{detail}; give smaller sizes or budgets, or run it "
              "where more memory is available", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:
        if args.debug:
            raise
        text = str(exc).splitlines()[0] if str(exc) else ""
        print(f"odyssey: internal error: {type(exc).__name__}{': ' + text if text else ''}\n"
              "This is a bug in odyssey, not in your input: please report it with the command "
              "line. `odyssey --debug ...` shows the traceback.", file=sys.stderr)
        return EXIT_ERROR
    if code not in (EXIT_OK, EXIT_INTERRUPTED):
        code = EXIT_ERROR
    return EXIT_ERROR if FAILED and code == EXIT_OK else code


if __name__ == "__main__":
    sys.exit(main())
