"""The compiler's time limit: a flag, a default that grows with the design, a clear result."""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.codegen.csim import COMPILE_TIMEOUT_S, compile_timeout, run_csim
from odyssey.codegen.generate import generate
from odyssey.codegen.writer import write_design
from odyssey.errors import SimulationError
from tests.codegen.conftest import space_of


def _design(tmp: Path) -> Path:
    ks = space_of("mm.c", I="8", J="8", K="8")
    tiling = {"T_i1": 4, "T_j1": 4, "T_k1": 4, "T_i2": 2, "T_j2": 2, "T_k2": 2}
    return write_design(generate(ks, ks.design("ij-ij.k"), tiling), tmp / "d")


def test_a_compiler_over_its_limit_is_a_compile_error_naming_the_flag(tmp_path: Path) -> None:
    res = run_csim(_design(tmp_path), compile_timeout_s=0.01)
    assert res.status == "compile_error" and "--compile-timeout" in res.message


def test_the_default_limit_grows_with_the_sources(tmp_path: Path) -> None:
    small = tmp_path / "a.cpp"
    small.write_text("int x;\n")
    big = tmp_path / "b.cpp"
    big.write_text("x" * 3_000_000)
    assert compile_timeout([small]) == COMPILE_TIMEOUT_S
    assert compile_timeout([big]) == pytest.approx(COMPILE_TIMEOUT_S + 120.0)


def test_a_non_positive_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SimulationError, match="--compile-timeout"):
        run_csim(_design(tmp_path), compile_timeout_s=0)
