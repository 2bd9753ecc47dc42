"""Solve Pyomo models with Ipopt (through casadi) or SCIP, via an AMPL ``.nl`` file.

There is no Ipopt executable on PyPI, so Pyomo's usual ``SolverFactory("ipopt")``
is not available. What works with wheels only:

1. Pyomo's NL writer (v2, :class:`pyomo.repn.plugins.nl_writer.NLWriter`) writes
   the model to ``model.nl`` *without* symbolic labels (casadi's importer rejects
   the comment lines those add) and returns the list of variables in NL order.
2. ``solver="ipopt"``: :class:`casadi.NlpBuilder` ``.import_nl`` reads the file
   into symbolic ``x``, ``f``, ``g`` with bounds ``x_lb``/``x_ub``/``g_lb``/
   ``g_ub`` and start ``x_init``; ``casadi.nlpsol(..., "ipopt", ...)`` solves it
   with the Ipopt 3.14 bundled in the casadi wheel. Integer variables are relaxed
   (casadi's ``discrete`` flags are not passed on), so the result is a local
   optimum of the continuous relaxation.
3. ``solver="scip"``: PySCIPOpt's ``Model.readProblem`` reads the same file and
   solves the MINLP globally, integers kept. SCIP names variables from the
   ``model.col`` file written next to the ``.nl`` (one name per line, ``v<k>``
   for NL column ``k``), which is how its results are mapped back.

NL column ``k`` is ``NLWriterInfo.variables[k]``, so values are reported under
each Pyomo variable's ``name`` (``t[i]``, ``b.z``). Fixed variables are reported
with their fixed value; variables that appear in no active constraint or
objective are not sent to the solver and not reported. Maximisation objectives
are reported in the model's own sense.

Failures are values: infeasibility, time limits and solver or importer errors
come back as :class:`NLSolveResult` with a status and a message. Only invalid
arguments and a missing optional dependency (PySCIPOpt) raise SolverError.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import casadi
import numpy as np
import pyomo.environ as pyo
from pyomo.common.errors import InfeasibleConstraintException
from pyomo.repn.plugins.nl_writer import NLWriter

from odyssey.errors import SolverError

Status = Literal["optimal", "locally_optimal", "infeasible", "time_limit", "error"]
SolverName = Literal["ipopt", "scip"]

_IPOPT_STATUS: dict[str, Status] = {
    "Solve_Succeeded": "locally_optimal",
    "Solved_To_Acceptable_Level": "locally_optimal",
    "Infeasible_Problem_Detected": "infeasible",
    "Maximum_CpuTime_Exceeded": "time_limit",
    "Maximum_WallTime_Exceeded": "time_limit",
}
# "gaplimit": stopped with a relative gap <= tol, i.e. optimal within tol.
_SCIP_STATUS: dict[str, Status] = {
    "optimal": "optimal",
    "gaplimit": "optimal",
    "infeasible": "infeasible",
    "timelimit": "time_limit",
}
_INTEGRALITY_TOL = 1e-6


@dataclass(frozen=True, slots=True)
class NLSolveResult:
    """Outcome of :func:`solve_nl`.

    ``values`` maps Pyomo variable names to values (empty unless the solver
    returned a point; a ``time_limit`` point may be infeasible). ``objective`` is
    in the model's sense, ``None`` without a point or objective. ``seconds`` is
    wall time for writing and solving.
    """

    status: Status
    values: dict[str, float]
    objective: float | None
    seconds: float
    message: str
    solver: str

    @property
    def ok(self) -> bool:
        """Whether the solver reports a (locally) optimal point."""
        return self.status in ("optimal", "locally_optimal")


@dataclass(frozen=True, slots=True)
class _Point:
    status: Status
    x: list[float] | None
    objective: float | None
    message: str


def _check_args(solver: str, time_limit_s: float, tol: float, seed: int) -> None:
    if solver not in ("ipopt", "scip"):
        raise SolverError(f"solver must be 'ipopt' or 'scip', got {solver!r}")
    if not (isinstance(time_limit_s, int | float) and 0 < time_limit_s < math.inf):
        raise SolverError(f"time_limit_s must be a positive finite number, got {time_limit_s!r}")
    if not (isinstance(tol, int | float) and 0 < tol < 1):
        raise SolverError(f"tol must be a number in (0, 1), got {tol!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise SolverError(f"seed must be an integer in [0, 2**31), got {seed!r}")


def _import_pyscipopt() -> Any:
    try:
        import pyscipopt
    except ImportError as exc:
        raise SolverError(
            "solver='scip' needs PySCIPOpt, which is not installed; install it with "
            "`pip install pyscipopt` (or `pip install odyssey[scip]`), or use solver='ipopt'"
        ) from exc
    return pyscipopt


def _solve_ipopt(nl: Path, time_limit_s: float, tol: float) -> _Point:
    builder = casadi.NlpBuilder()
    builder.import_nl(str(nl), {})
    problem: dict[str, Any] = {
        "x": casadi.vertcat(*builder.x),
        "f": builder.f,
        "g": casadi.vertcat(*builder.g),
    }
    options: dict[str, Any] = {
        "ipopt.print_level": 0,
        "ipopt.sb": "yes",  # no banner
        "print_time": False,
        "ipopt.max_cpu_time": float(time_limit_s),
        "ipopt.max_wall_time": float(time_limit_s),
        "ipopt.tol": float(tol),
        "error_on_fail": False,
        # the importer builds MX graphs; SX expressions (casadi's `expand`) build the
        # derivatives and evaluate them several times faster (MM 1024^3 `ij-ij.k`: 0.07 s
        # from import to solution instead of 0.29 s, the same 35 Ipopt iterations)
        "expand": True,
    }
    solver = casadi.nlpsol("odyssey_ipopt", "ipopt", problem, options)
    sol = solver(
        x0=builder.x_init, lbx=builder.x_lb, ubx=builder.x_ub, lbg=builder.g_lb, ubg=builder.g_ub
    )
    raw = str(solver.stats().get("return_status", "unknown"))
    status = _IPOPT_STATUS.get(raw, "error")
    if status in ("infeasible", "error"):
        return _Point(status, None, None, f"Ipopt: {raw}")
    x = np.asarray(sol["x"].full(), dtype=float).ravel().tolist()
    return _Point(status, x, float(sol["f"]), f"Ipopt: {raw}")


@contextlib.contextmanager
def _quiet_fd2() -> Iterator[None]:
    """Silence file descriptor 2 (C-level stderr) for the duration of the block."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to silence
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _solve_scip(nl: Path, n_vars: int, time_limit_s: float, tol: float, seed: int) -> _Point:
    scip = _import_pyscipopt().Model()
    scip.hideOutput()
    scip.setParam("limits/time", float(time_limit_s))
    scip.setParam("limits/gap", float(tol))
    scip.setParam("randomization/randomseedshift", seed)
    with _quiet_fd2():  # SCIP's LP solver writes warnings to the C stderr, past hideOutput()
        scip.readProblem(str(nl))
        scip.optimize()
    raw = str(scip.getStatus())
    status = _SCIP_STATUS.get(raw, "error")
    if status in ("infeasible", "error") or scip.getNSols() == 0:
        return _Point(status, None, None, f"SCIP: {raw}")
    x: list[float | None] = [None] * n_vars
    for var in scip.getVars():
        name = var.name
        # extra variables SCIP adds (nlobjvar, objconstant) carry no v<k> name
        if name.startswith("v") and name[1:].isdigit() and int(name[1:]) < n_vars:
            x[int(name[1:])] = float(scip.getVal(var))
    missing = [k for k, v in enumerate(x) if v is None]
    if missing:
        return _Point("error", None, None, f"SCIP: NL columns {missing} not found in the solution")
    objective = float(scip.getObjVal())
    return _Point(status, [float(v) for v in x if v is not None], objective, f"SCIP: {raw}")


def solve_nl(
    model: pyo.ConcreteModel,
    *,
    solver: SolverName = "ipopt",
    time_limit_s: float = 30,
    tol: float = 1e-8,
    seed: int = 0,
) -> NLSolveResult:
    """Solve ``model`` through an ``.nl`` file with Ipopt (local, integers relaxed) or SCIP.

    ``time_limit_s`` goes to Ipopt as ``max_cpu_time``/``max_wall_time`` and to
    SCIP as ``limits/time``; ``tol`` to Ipopt as ``tol`` and to SCIP as the
    relative gap ``limits/gap``; ``seed`` to SCIP as
    ``randomization/randomseedshift`` (Ipopt is deterministic). Nothing is
    printed. Raises SolverError only for invalid arguments or when
    ``solver="scip"`` and PySCIPOpt is not installed.
    """
    _check_args(solver, time_limit_s, tol, seed)
    if solver == "scip":
        _import_pyscipopt()
    start = time.perf_counter()

    def result(status: Status, message: str, values: dict[str, float] | None = None,
               objective: float | None = None) -> NLSolveResult:
        return NLSolveResult(status, values or {}, objective, time.perf_counter() - start,
                             message, solver)

    with tempfile.TemporaryDirectory(prefix="odyssey_nl_") as tmp:
        nl = Path(tmp) / "model.nl"
        try:
            with nl.open("w") as stream:
                info = NLWriter().write(
                    model,
                    stream,
                    symbolic_solver_labels=False,
                    linear_presolve=False,
                    scale_model=False,
                    export_defined_variables=False,
                )
        except InfeasibleConstraintException as exc:
            return result("infeasible", f"Pyomo NL writer: {exc}")
        except Exception as exc:  # noqa: BLE001 - any writer failure is reported, not raised
            return result("error", f"Pyomo NL writer: {type(exc).__name__}: {exc}")
        if len(info.objectives) > 1:
            names = ", ".join(o.name for o in info.objectives)
            return result("error", f"the model has {len(info.objectives)} active objectives "
                          f"({names}); deactivate all but one")
        variables = list(info.variables)
        nl.with_suffix(".col").write_text("".join(f"v{k}\n" for k in range(len(variables))))
        try:
            if solver == "ipopt":
                point = _solve_ipopt(nl, time_limit_s, tol)
            else:
                point = _solve_scip(nl, len(variables), time_limit_s, tol, seed)
        except Exception as exc:  # noqa: BLE001 - solver/importer failures become values
            return result("error", f"{solver}: {type(exc).__name__}: {exc}")
    if point.x is None:
        return result(point.status, point.message)
    values: dict[str, float] = {}
    for var, value in zip(variables, point.x, strict=True):
        if solver == "scip" and var.is_integer() and abs(value - round(value)) <= _INTEGRALITY_TOL:
            value = float(round(value))
        values[var.name] = value
    for var in model.component_data_objects(pyo.Var, active=True, descend_into=True):
        if var.fixed and var.value is not None:
            values[var.name] = float(var.value)
    objective = point.objective if info.objectives else None
    # casadi minimises -f for a maximisation; SCIP keeps the model's sense
    if objective is not None and solver == "ipopt" and info.objectives[0].sense == pyo.maximize:
        objective = -objective
    return result(point.status, point.message, values, objective)
