"""The network argument of `odyssey network`: a bundled name, an odyssey-network/1 JSON file or
an ONNX model (read here, imported by :func:`odyssey.network.onnx_import.import_onnx`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from odyssey.errors import NetworkError

if TYPE_CHECKING:
    from odyssey.network.networks import Network

INPUT_SHAPE_HELP = ("shape of a model input with symbolic dimensions, NAME=DIMS, e.g. "
                    "--input-shape input=1x3x224x224 (repeatable; ONNX models only)")


def input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``--input-shape NAME=1x3x224x224`` as ``("NAME", (1, 3, 224, 224))``."""
    name, sep, dims = text.partition("=")
    parts = dims.lower().split("x")
    if not sep or not name or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(
            f"expected NAME=DIMS with positive integer dimensions joined by x, e.g. "
            f"input=1x3x224x224, got {text!r}")
    return name, tuple(int(p) for p in parts)


def load_network_arg(network: str, shapes: list[tuple[str, tuple[int, ...]]] | None) -> Network:
    """The network a command line names; ``.onnx`` files are read and imported (their
    warnings go to standard error), anything else is :func:`load_network`'s."""
    from odyssey.network.networks import load_network

    given = dict(shapes or [])
    if len(given) != len(shapes or []):
        names = [n for n, _ in shapes or []]
        twice = sorted({n for n in names if names.count(n) > 1})
        raise NetworkError(f"--input-shape {twice[0]} is given more than once")
    if not network.lower().endswith(".onnx"):
        if given:
            raise NetworkError("--input-shape applies to ONNX models (.onnx) only, not to "
                               f"{network}")
        return load_network(network)
    from odyssey.network.onnx_import import import_onnx

    path = Path(network)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NetworkError(f"{path}: cannot read the ONNX model: {exc.strerror}") from None
    net = import_onnx(data, source=str(path), name=path.stem, input_shapes=given)
    warned: dict[str, list[str]] = {}
    for node in net.nodes:
        if node.warning:
            warned.setdefault(f"{node.op}: {node.warning}", []).append(node.name)
    for text, names in warned.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        print(f"odyssey: warning: {len(names)} node(s) {shown} ({text})", file=sys.stderr)
    return net
