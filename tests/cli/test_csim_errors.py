"""A design the compiler rejects: `odyssey csim` says so on standard error, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.cli import main


def test_compile_error_goes_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mm8"
    assert main(["generate", "mm", "-D", "I=8", "-D", "J=8", "-D", "K=8", "--design", "ij-ij.k",
                 "--tiling", "T_i1=4,T_j1=4,T_k1=4,T_i2=2,T_j2=2,T_k2=2", "--out", str(out)]) == 0
    kernel = out / "kernel.cpp"
    kernel.write_text(kernel.read_text() + "\nthis is not C++;\n")
    capsys.readouterr()
    assert main(["csim", str(out), "--concurrent"]) == 2
    got = capsys.readouterr()
    assert "compile_error" in got.err and "kernel.cpp" in got.err
    assert "compile_error" not in got.out
