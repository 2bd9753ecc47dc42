"""Tests for odyssey.tune.seed.nlsolve with the real solvers (casadi's Ipopt, PySCIPOpt)."""

from __future__ import annotations

import sys

import pyomo.environ as pyo
import pytest

from odyssey.errors import SolverError
from odyssey.tune.seed.nlsolve import NLSolveResult, solve_nl

SOLVERS = ["ipopt", "scip"]


def _projection_model() -> pyo.ConcreteModel:
    """min (x-3)^2 + (y+1)^2 s.t. x + y <= 1: the projection of (3, -1), i.e. (2.5, -1.5), f=0.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x + m.y <= 1)
    m.o = pyo.Objective(expr=(m.x - 3) ** 2 + (m.y + 1) ** 2)
    return m


@pytest.mark.parametrize("solver", SOLVERS)
def test_continuous_nlp_known_optimum(solver: str) -> None:
    r = solve_nl(_projection_model(), solver=solver)  # type: ignore[arg-type]
    assert isinstance(r, NLSolveResult) and r.ok and r.solver == solver
    assert r.status == ("locally_optimal" if solver == "ipopt" else "optimal")
    assert r.values["x"] == pytest.approx(2.5, abs=1e-5)
    assert r.values["y"] == pytest.approx(-1.5, abs=1e-5)
    assert r.objective == pytest.approx(0.5, abs=1e-6)
    assert r.seconds > 0


def _knapsack() -> pyo.ConcreteModel:
    """max 5a + 4b s.t. 6a + 4b <= 24, a + 2b <= 6, a, b >= 0 integer.

    LP relaxation: (3, 1.5) with 21; integer optimum: (4, 0) with 20.
    """
    m = pyo.ConcreteModel()
    m.a = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.b = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.c1 = pyo.Constraint(expr=6 * m.a + 4 * m.b <= 24)
    m.c2 = pyo.Constraint(expr=m.a + 2 * m.b <= 6)
    m.o = pyo.Objective(expr=5 * m.a + 4 * m.b, sense=pyo.maximize)
    return m


def test_scip_keeps_integers_and_finds_the_integer_optimum() -> None:
    r = solve_nl(_knapsack(), solver="scip")
    assert r.status == "optimal"
    assert r.values == {"a": 4.0, "b": 0.0}
    assert r.objective == pytest.approx(20.0)


def test_ipopt_relaxes_integers_and_reports_maximisation_in_model_sense() -> None:
    r = solve_nl(_knapsack(), solver="ipopt")
    assert r.status == "locally_optimal"
    assert r.values["a"] == pytest.approx(3.0, abs=1e-5)
    assert r.values["b"] == pytest.approx(1.5, abs=1e-5)
    assert r.objective == pytest.approx(21.0, abs=1e-5)


def test_scip_solves_a_nonlinear_integer_problem_globally() -> None:
    # min (n - 2.4)^2 + (k - 3.7)^2 s.t. n*k <= 8, integers in [0, 10]:
    # by enumeration the optimum is (2, 4) with 0.16 + 0.09 = 0.25.
    m = pyo.ConcreteModel()
    m.n = pyo.Var(domain=pyo.Integers, bounds=(0, 10))
    m.k = pyo.Var(domain=pyo.Integers, bounds=(0, 10))
    m.c = pyo.Constraint(expr=m.n * m.k <= 8)
    m.o = pyo.Objective(expr=(m.n - 2.4) ** 2 + (m.k - 3.7) ** 2)
    best = min(
        ((n - 2.4) ** 2 + (k - 3.7) ** 2, n, k) for n in range(11) for k in range(11) if n * k <= 8
    )
    r = solve_nl(m, solver="scip")
    assert r.status == "optimal"
    assert (r.values["n"], r.values["k"]) == (best[1], best[2]) == (2.0, 4.0)
    assert r.objective == pytest.approx(best[0], abs=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_infeasible_model_is_reported_not_raised(solver: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x * m.y >= 3)
    m.o = pyo.Objective(expr=m.x + m.y)
    r = solve_nl(m, solver=solver)  # type: ignore[arg-type]
    assert r.status == "infeasible"
    assert r.values == {} and r.objective is None and r.message


def test_trivially_infeasible_constraint_is_reported() -> None:
    m = pyo.ConcreteModel()
    m.z = pyo.Var()
    m.z.fix(1)
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=m.z >= 5)
    m.o = pyo.Objective(expr=m.x**2)
    r = solve_nl(m)
    assert r.status == "infeasible" and "trivially infeasible" in r.message


def _indexed_model() -> pyo.ConcreteModel:
    """Indexed and block variables whose NL order differs from declaration order.

    t['i'] is linear only, t['j'] and t['k'] nonlinear (the NL writer puts
    nonlinear columns first); optimum t = (1, 2, 3), b.z = 4, w fixed at 7.
    """
    m = pyo.ConcreteModel()
    m.t = pyo.Var(["i", "j", "k"], bounds=(-10, 10))
    m.w = pyo.Var()
    m.w.fix(7)
    m.b = pyo.Block()
    m.b.z = pyo.Var(bounds=(0, 10), domain=pyo.Integers)
    m.unused = pyo.Var()
    m.c = pyo.Constraint(expr=m.t["i"] >= 1)
    m.o = pyo.Objective(
        expr=m.t["i"] + (m.t["k"] - 3) ** 2 + (m.t["j"] - 2) ** 2 + (m.b.z - 4.2) ** 2 + m.w
    )
    return m


@pytest.mark.parametrize("solver", SOLVERS)
def test_values_map_back_to_indexed_and_block_variables(solver: str) -> None:
    r = solve_nl(_indexed_model(), solver=solver)  # type: ignore[arg-type]
    assert r.ok
    assert set(r.values) == {"t[i]", "t[j]", "t[k]", "b.z", "w"}
    assert r.values["t[i]"] == pytest.approx(1.0, abs=1e-5)
    assert r.values["t[j]"] == pytest.approx(2.0, abs=1e-5)
    assert r.values["t[k]"] == pytest.approx(3.0, abs=1e-5)
    assert r.values["w"] == 7.0
    assert r.values["b.z"] == (4.0 if solver == "scip" else pytest.approx(4.2, abs=1e-5))
    expected = 1 + (4 - 4.2) ** 2 + 7 if solver == "scip" else 1 + 7
    assert r.objective == pytest.approx(expected, abs=1e-5)


def test_initial_values_follow_the_variable_mapping() -> None:
    # (t^2 - 1)^2 has local minima at -1 and +1; Ipopt stays in the basin it starts in,
    # so each component lands where its own initial value points.
    m = pyo.ConcreteModel()
    m.t = pyo.Var(["a", "b", "c"], initialize={"a": -0.8, "b": 0.7, "c": -0.6})
    m.o = pyo.Objective(expr=sum((m.t[k] ** 2 - 1) ** 2 for k in m.t))
    r = solve_nl(m)
    assert r.status == "locally_optimal"
    got = {k: round(v, 6) for k, v in r.values.items()}
    assert got == {"t[a]": -1.0, "t[b]": 1.0, "t[c]": -1.0}


@pytest.mark.parametrize("solver", SOLVERS)
def test_solvers_print_nothing(solver: str, capfd: pytest.CaptureFixture[str]) -> None:
    solve_nl(_indexed_model(), solver=solver)  # type: ignore[arg-type]
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_time_limit_reaches_ipopt() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=5.0)
    m.o = pyo.Objective(expr=(m.x - 1) ** 4 + pyo.exp(m.x))
    r = solve_nl(m, time_limit_s=1e-9)
    assert r.status == "time_limit" and "CpuTime" in r.message
    assert set(r.values) == {"x"}


def test_time_limit_reaches_scip() -> None:
    m = _indexed_model()
    assert solve_nl(m, solver="scip", time_limit_s=1e-9).status == "time_limit"
    assert solve_nl(m, solver="scip", time_limit_s=30).status == "optimal"


def test_importer_failure_is_a_value() -> None:
    # casadi's NL importer has no if-then-else; the failure comes back as status="error"
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-3, 3), initialize=1)
    m.o = pyo.Objective(expr=pyo.Expr_if(IF=m.x <= 0, THEN=(m.x + 1) ** 2, ELSE=(m.x - 2) ** 2))
    r = solve_nl(m)
    assert r.status == "error" and "If-then-else" in r.message and r.values == {}


def test_writer_failure_is_a_value() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.p = pyo.Param(mutable=True)  # no value: the NL writer cannot evaluate it
    m.o = pyo.Objective(expr=(m.x - m.p) ** 2)
    r = solve_nl(m)
    assert r.status == "error" and "NL writer" in r.message


def test_several_objectives_are_rejected() -> None:
    m = _projection_model()
    m.o2 = pyo.Objective(expr=m.x)  # the NL format would silently use only the first
    r = solve_nl(m)
    assert r.status == "error" and "2 active objectives (o, o2)" in r.message


def test_missing_pyscipopt_raises_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyscipopt", None)  # makes `import pyscipopt` fail
    with pytest.raises(SolverError, match="pip install pyscipopt"):
        solve_nl(_projection_model(), solver="scip")
    assert solve_nl(_projection_model(), solver="ipopt").ok  # Ipopt does not need it


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"solver": "cplex"}, "solver must be 'ipopt' or 'scip'"),
        ({"time_limit_s": 0}, "time_limit_s must be a positive finite number"),
        ({"tol": 0}, r"tol must be a number in \(0, 1\)"),
        ({"seed": -1}, "seed must be an integer"),
    ],
)
def test_invalid_arguments_raise(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(SolverError, match=fragment):
        solve_nl(_projection_model(), **kwargs)  # type: ignore[arg-type]
