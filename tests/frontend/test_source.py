"""C sources are read as bytes: UTF-8 (with or without a BOM) or Latin-1, others refused;
sizes beyond 2**62 are an error naming the parameter, its value and the limit."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.errors import KernelParseError
from odyssey.frontend import decode_source, load_scop
from odyssey.frontend.bundled import bundled_kernel
from odyssey.frontend.preprocess import MAX_SIZE


def _mm() -> Path:
    path = bundled_kernel("mm")
    assert path is not None
    return path


MM = _mm().read_bytes()


def test_decode_utf8_bom_latin1() -> None:
    p = Path("k.c")
    assert decode_source(b"int x; // caf\xc3\xa9\n", p) == "int x; // caf\u00e9\n"
    assert decode_source(codecs.BOM_UTF8 + b"int x;\n", p) == "int x;\n"
    assert decode_source(b"// caf\xe9\n", p) == "// caf\u00e9\n"  # not UTF-8: Latin-1


@pytest.mark.parametrize(("data", "named"), [
    ("int x;\n".encode("utf-16"), "UTF-16"),
    ("int x;\n".encode("utf-32"), "UTF-32"),
    ("int x;\n".encode("utf-16-le"), "NUL byte"),
])
def test_decode_refuses_wide_and_binary(data: bytes, named: str) -> None:
    with pytest.raises(KernelParseError, match=named):
        decode_source(data, Path("k.c"))


@pytest.mark.parametrize("prefix", [codecs.BOM_UTF8, b"// r\xe9sum\xe9 en Latin-1\n"])
def test_bom_and_latin1_kernels_parse(tmp_path: Path, prefix: bytes) -> None:
    src = tmp_path / "k.c"
    src.write_bytes(prefix + MM)
    plain = load_scop(_mm())
    scop = load_scop(src)
    assert scop.params == plain.params
    assert len(scop.statements) == len(plain.statements)


def test_utf16_kernel_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "k.c"
    src.write_bytes(MM.decode().encode("utf-16"))
    assert main(["designs", str(src)]) == 2
    err = capsys.readouterr().err
    assert "UTF-16" in err and "internal error" not in err


@pytest.mark.parametrize("value", [str(MAX_SIZE + 1), "99999999999999999999"])
def test_size_beyond_limit_is_exit_2(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["designs", "mm", "-D", f"I={value}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("odyssey: error: ") and "internal error" not in err
    assert f"-D I={value}" in err and "2**62" in err


def test_size_at_limit_is_accepted() -> None:
    scop = load_scop(_mm(), {"I": str(MAX_SIZE)})
    assert dict(scop.params)["I"] == MAX_SIZE
