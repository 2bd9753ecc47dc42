"""Reading a C source file: bytes in, text out, with the encoding detected.

A kernel file is read as bytes and decoded as UTF-8 (a leading byte-order mark is
dropped), else as Latin-1 (ISO-8859-1, which maps every byte to one character: a comment
written in an 8-bit Western encoding then still reads). Files in UTF-16 or UTF-32 (by
their byte-order mark) and binary files (a NUL byte) are refused, naming the encoding.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from odyssey.errors import KernelParseError

#: byte-order marks of the encodings a C preprocessor cannot read, longest first
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 (little endian)"),
    (codecs.BOM_UTF32_BE, "UTF-32 (big endian)"),
    (codecs.BOM_UTF16_LE, "UTF-16 (little endian)"),
    (codecs.BOM_UTF16_BE, "UTF-16 (big endian)"),
)


def decode_source(data: bytes, path: Path) -> str:
    """The text of C source ``data`` (read from ``path``, named in errors): UTF-8 with or
    without a byte-order mark, else Latin-1; UTF-16/32 and binary data are refused."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    else:
        for bom, name in _WIDE_BOMS:
            if data.startswith(bom):
                raise KernelParseError(
                    f"{path}: the file is encoded in {name}; odyssey reads C sources in UTF-8 or "
                    f"Latin-1: convert it, e.g. `iconv -f {name.split()[0]} -t UTF-8`")
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise KernelParseError(
            f"{path}:{line}: a NUL byte: this is not a text file (or it is UTF-16/32 without a "
            "byte-order mark); odyssey reads C sources in UTF-8 or Latin-1")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_source(path: Path) -> str:
    """:func:`decode_source` of the file at ``path``; an unreadable file is a KernelParseError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KernelParseError(f"{path}: cannot read the kernel file: {exc.strerror}") from None
    return decode_source(data, path)
