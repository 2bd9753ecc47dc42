"""Bad input gets a clear error naming file, line and construct; exit code 2; no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey.cli import main

HEAD = "#define N 8\nvoid f(float A[N][N], float B[N][N], float *p) {\n"


def _run(tmp_path: Path, body: str, capsys: pytest.CaptureFixture[str], *, raw: bool = False) -> str:
    src = tmp_path / "bad.c"
    src.write_text(body if raw else HEAD + "#pragma scop\n" + body + "#pragma endscop\n}\n")
    code = main(["designs", str(src)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("odyssey: error: ")
    return err


def test_no_scop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, HEAD + "  A[0][0] = 1;\n}\n", capsys, raw=True)
    assert "bad.c" in err and "#pragma scop" in err


def test_empty_scop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "", capsys)
    assert "bad.c:3" in err and "no statement" in err


def test_non_affine_subscript(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "for (int i = 0; i < N; i++)\n for (int j = 0; j < N; j++)\n  A[i*j][0] += B[i][j];\n"
    err = _run(tmp_path, body, capsys)
    assert "bad.c:6" in err and "i * j" in err and "not affine" in err


def test_pointer_inside_scop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "for (int i = 0; i < N; i++)\n  p[i] = B[i][0];\n", capsys)
    assert "bad.c:5" in err and "`p` is a pointer" in err and "float p[" in err


def test_pointer_dereference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "for (int i = 0; i < N; i++)\n  A[i][0] = *p;\n", capsys)
    assert "bad.c:5" in err and "pointer dereference" in err


def test_function_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "for (int i = 0; i < N; i++)\n  A[i][0] = sqrtf(B[i][0]);\n", capsys)
    assert "bad.c:5" in err and "function `sqrtf`" in err


def test_while_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "int i = 0;\nwhile (i < N) { A[i][0] = 0; i++; }\n", capsys)
    assert "bad.c:" in err and ("while" in err or "declaration" in err)


def test_while_loop_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "while (1) { A[0][0] = 0; }\n", capsys)
    assert "bad.c:4" in err and "`while` loop" in err


def test_unknown_array(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "for (int i = 0; i < N; i++)\n  A[i][0] += Z[i];\n", capsys)
    assert "bad.c:5" in err and "array `Z` is not declared" in err


def test_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "for (int i = 0; i < N; i++\n  A[i][0] = 1;\n", capsys)
    assert "bad.c:" in err and "syntax error" in err


def test_non_unit_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(tmp_path, "for (int i = 0; i < N; i += 2)\n  A[i][0] = 1;\n", capsys)
    assert "bad.c:4" in err and "step by +1" in err


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", "does/not/exist.c"]) == 2
    err = capsys.readouterr().err
    assert "does/not/exist.c: no such file" in err and "bundled kernels are" in err


def test_bad_define(kernels_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", str(kernels_dir / "mm.c"), "-D", "I=big"]) == 2
    assert "-D I=big" in capsys.readouterr().err


def test_lu_is_rejected_with_the_reason(kernels_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", str(kernels_dir / "lu.c")]) == 2
    err = capsys.readouterr().err
    assert "lu.c:10" in err and "not uniform" in err


def test_second_computation_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "for (int i = 0; i < N; i++) {\n  A[i][0] = B[i][0];\n  B[i][1] = A[i][1];\n}\n"
    err = _run(tmp_path, body, capsys)
    assert "two dependent computations" in err and "one after the other" in err
