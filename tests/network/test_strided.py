"""Stride-2 convolutions modelled exactly: the stride-2 kernels (kernels/cnn_s2.c,
kernels/dwconv_s2.c) chosen for stride-2 layers, their input traffic against the closed form
of the strided loop nest, and a stride-2 design under C simulation and the static check."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from odyssey.cli import main
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.network.networks import kernel_for, models_stride, stride_note
from odyssey.platforms import load_platform

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "odyssey" / "kernels"
SIZES = {"O": 8, "I": 4, "H": 6, "W": 6, "P": 3, "Q": 3}


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_stride_2_layers_take_the_stride_2_kernels(tmp_path: Path) -> None:
    cnn = KERNELS / "cnn.c"
    assert kernel_for("conv", cnn, stride=2) == KERNELS / "cnn_s2.c"
    assert kernel_for("pointwise", cnn, stride=2) == KERNELS / "cnn_s2.c"
    assert kernel_for("depthwise", cnn, stride=2) == KERNELS / "dwconv_s2.c"
    assert kernel_for("conv", cnn) == cnn and kernel_for("matmul", cnn) == KERNELS / "mm.c"
    # no stride-16 kernel: the stride-1 one, with a note saying what is approximate
    assert kernel_for("conv", cnn, stride=16) == cnn and not models_stride(cnn, 16)
    assert "stride 16 modelled as stride 1" in stride_note(cnn, 16)
    own = tmp_path / "my.c"
    own.write_text((KERNELS / "cnn.c").read_text())
    assert kernel_for("conv", own, stride=2) == own
    assert "no my_s2.c next to" in stride_note(own, 2)
    assert stride_note(KERNELS / "cnn_s2.c", 2) == ""


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("tiles", [(4, 3, 6, 4), (8, 2, 3, 2)])
def test_input_traffic_is_the_strided_loop_nests(stride: int, tiles: tuple[int, ...]) -> None:
    """Design oh-ohw.ipq reads each input tile once per (o, h, w, i) tile:
    ``4 bytes * (O/T_o1)(H/T_h1)(W/T_w1)(I/T_i1) * T_i1 * (S*T_h1 + P - S)(S*T_w1 + Q - S)``
    (stride 1: the ``(T_h1 + P - 1)(T_w1 + Q - 1)`` halo tile)."""
    to, th, tw, ti = tiles
    name = "cnn.c" if stride == 1 else "cnn_s2.c"
    ks = analyse(load_scop(KERNELS / name, {k: str(v) for k, v in SIZES.items()}))
    model = build_model(ks, ks.design("oh-ohw.ipq"), platform=load_platform("u250"),
                        variant="accurate")
    tiling = {"T_o1": to, "T_h1": th, "T_w1": tw, "T_i1": ti, "T_p1": 3, "T_q1": 3,
              "T_o2": to // 2, "T_h2": th, "T_w2": tw, "T_i2": 2}
    got = model.evaluate_one(tiling)["offchip:fi"]
    o, i, h, w, p, q = (SIZES[k] for k in ("O", "I", "H", "W", "P", "Q"))
    tiles_read = (o // to) * (h // th) * (w // tw) * (i // ti)
    want = 4 * tiles_read * ti * (stride * th + p - stride) * (stride * tw + q - stride)
    assert got == want


def test_network_tunes_strided_layers_with_their_kernels(tmp_path: Path) -> None:
    conv = {"O": 4, "I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}
    net = {"format": "odyssey-network/1", "name": "s", "title": "strided", "source": "test",
           "layers": [
               {"name": "c1", "kind": "conv", "sizes": conv},
               {"name": "c2", "kind": "conv", "sizes": conv, "stride": 2},
               {"name": "d2", "kind": "depthwise", "stride": 2,
                "sizes": {"C": 4, "H": 4, "W": 4, "P": 3, "Q": 3}},
               {"name": "c3", "kind": "conv", "sizes": conv, "stride": 3}]}
    path, out = tmp_path / "s.json", tmp_path / "out.json"
    path.write_text(json.dumps(net))
    rc, stdout, stderr = _run(["network", str(path), "--design", "oh-ohw.ipq", "--samples", "12",
                               "--json", str(out)])
    assert rc == 0, stderr
    record = json.loads(out.read_text())
    kernels = {x["name"]: Path(x["kernel"]).name for x in record["layers"]}
    assert kernels == {"c1": "cnn.c", "c2": "cnn_s2.c", "d2": "dwconv_s2.c", "c3": "cnn.c"}
    # same sizes, other strides: three shapes, not one
    assert [(s["stride"], len(s["layers"])) for s in record["shapes"]] == [
        (1, 1), (2, 1), (2, 1), (3, 1)]
    assert "c3: stride 3 modelled as stride 1" in stdout


@pytest.mark.slow
def test_a_stride_2_design_passes_csim_and_the_static_check(tmp_path: Path) -> None:
    pytest.importorskip("hls4ml")  # Xilinx's C-simulation headers
    out = tmp_path / "s2"
    defines = [x for k, v in SIZES.items() for x in ("-D", f"{k}={v}")]
    rc, _, err = _run(["generate", "cnn_s2", *defines, "--design", "oh-ohw.ipq", "--tiling",
                       "T_o1=4,T_h1=3,T_w1=6,T_i1=4,T_p1=3,T_q1=3,T_o2=2,T_h2=3,T_w2=6,T_i2=2",
                       "--out", str(out)])
    assert rc == 0, err
    rc, stdout, err = _run(["check", str(out)])
    assert rc == 0 and ": ok" in stdout, stdout + err
    rc, stdout, err = _run(["csim", str(out)])
    assert rc == 0 and "ODYSSEY CSIM PASS 288 outputs match" in stdout, stdout + err
