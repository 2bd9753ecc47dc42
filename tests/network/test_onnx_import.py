"""ONNX import: models built in process (tests/network/onnx_models.py) against the bundled
tables, every node accounted for, and the errors a user can cause."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("onnx")

from odyssey.cli import main  # noqa: E402
from odyssey.errors import NetworkError  # noqa: E402
from odyssey.network.networks import (  # noqa: E402
    Layer,
    load_network,
    network_document,
    parse_network,
    unique_shapes,
)
from odyssey.network.onnx_import import import_onnx  # noqa: E402
from tests.network.onnx_models import mobilenetv2, resnet50, single, small  # noqa: E402


def _shape(layer: Layer) -> tuple[object, ...]:
    return (layer.name, layer.kind, layer.sizes, layer.stride, layer.batch, layer.dilation)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_resnet50_gives_the_bundled_table() -> None:
    model = resnet50()
    net = import_onnx(model.SerializeToString(), source="resnet50.onnx", name="resnet50")
    table = load_network("resnet50")
    assert [_shape(x) for x in net.layers] == [_shape(x) for x in table.layers]
    # identical (kind, sizes) groups: the same searches, seeded alike (task_seed), as the table
    assert [(g.kind, g.sizes, g.names) for g in unique_shapes(net)] == [
        (g.kind, g.sizes, g.names) for g in unique_shapes(table)]
    assert net.macs == table.macs
    # every node accounted for, in graph order
    assert [n.name for n in net.nodes] == [n.name or "" for n in model.graph.node]
    outcomes = Counter((n.outcome, n.op) for n in net.nodes)
    assert outcomes == {("layer", "Conv"): 53, ("layer", "Gemm"): 1,
                        ("fused", "BatchNormalization"): 53,
                        ("no systolic work", "Relu"): 49, ("no systolic work", "Add"): 16,
                        ("no systolic work", "MaxPool"): 1,
                        ("no systolic work", "GlobalAveragePool"): 1,
                        ("no systolic work", "Flatten"): 1}
    assert sum(u.count for u in net.unmapped) == len(net.nodes) - 54
    bn = next(n for n in net.nodes if n.op == "BatchNormalization")
    assert (bn.layers, bn.reason) == (("conv1",), "folded into conv1's weights and bias at "
                                                  "inference: no systolic work of its own")
    conv1 = net.layer("conv1")
    assert (conv1.stride, conv1.pads) == (2, (3, 3, 3, 3))
    fc = net.layer("fc1000")
    assert (fc.kind, fc.dims) == ("matmul", {"I": 1, "J": 1000, "K": 2048})


def test_mobilenetv2_gives_the_bundled_table_depthwise_through_group() -> None:
    net = import_onnx(mobilenetv2(), source="mobilenetv2.onnx", name="mobilenetv2")
    table = load_network("mobilenetv2")
    assert [_shape(x) for x in net.layers] == [_shape(x) for x in table.layers]
    dw = net.layer("conv3_2-0")
    assert (dw.kind, dw.stride) == ("depthwise", 2)
    node = next(n for n in net.nodes if n.name == "conv3_2-0")
    assert node.reason.startswith("depthwise convolution (group 96 = channels)")
    # Relu6 exported as Clip: elementwise
    assert Counter(n.op for n in net.nodes if n.outcome == "no systolic work")["Clip"] == 35


def test_unsupported_op_is_listed_and_the_rest_mapped() -> None:
    net = import_onnx(small(), source="small.onnx", name="small")
    assert [(x.name, x.kind, x.dims, x.batch) for x in net.layers] == [
        ("c1", "conv", {"O": 8, "I": 4, "H": 8, "W": 8, "P": 3, "Q": 3}, 1),
        # 2 groups of 4 -> 4 channels: two ordinary convolutions
        ("grouped", "conv", {"O": 4, "I": 4, "H": 8, "W": 8, "P": 3, "Q": 3}, 2),
        # per-head attention: Q K^T and A V of 2 heads as batched multiplies
        ("scores", "matmul", {"I": 8, "J": 8, "K": 32}, 2),
        ("context", "matmul", {"I": 8, "J": 32, "K": 8}, 2)]
    lstm = next(n for n in net.nodes if n.op == "LSTM")
    assert (lstm.name, lstm.outcome) == ("lstm_1", "not supported")
    assert "recurrent" in lstm.reason
    assert any(u.op == "LSTM" and u.name == "lstm_1" for u in net.unmapped)
    assert net.macs == 8 * 4 * 64 * 9 + 2 * 4 * 4 * 64 * 9 + 2 * 8 * 8 * 32 + 2 * 8 * 32 * 8


@pytest.mark.parametrize("op", ["ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul"])
def test_quantized_nodes_map_to_fp32_with_a_warning(op: str) -> None:
    net = import_onnx(single(op), source="q.onnx", name="q")
    (node,) = net.nodes
    assert node.outcome == "layer" and "tuned as fp32" in node.warning
    want = ({"I": 16, "J": 8, "K": 32} if "MatMul" in op
            else {"O": 8, "I": 8, "H": 16, "W": 16, "P": 3, "Q": 3})
    assert net.layers[0].dims == want


def test_stride_dilation_and_auto_pad_are_recorded() -> None:
    layer = import_onnx(single(strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2]),
                        source="s.onnx", name="s").layers[0]
    # (16 + 4 - 2*(3-1) - 1) // 2 + 1 = 8
    assert (layer.stride, layer.dilation, layer.pads, layer.dims["H"]) == (2, 2, (2, 2, 2, 2), 8)
    auto = import_onnx(single(auto_pad="SAME_UPPER", pads=None, strides=[2, 2]),
                       source="s.onnx", name="s").layers[0]
    # total padding max((8-1)*2 + 3 - 16, 0) = 1 per axis, the odd one at the end
    assert (auto.dims["H"], auto.pads) == (8, (0, 0, 1, 1))


def test_batch_from_input_shape_and_weights_shared_over_rows() -> None:
    with pytest.raises(NetworkError, match=r"r\.onnx: input `input` has shape Nx3x224x224, "
                                           r"with symbolic .*--input-shape input=1x3x224x224"):
        import_onnx(resnet50("N"), source="r.onnx", name="r")
    net = import_onnx(resnet50("N"), source="r.onnx", name="r", input_shapes={"input": (2, 3, 224, 224)})
    assert {x.batch for x in net.layers if x.kind != "matmul"} == {2}
    # the classifier's weights are shared by the two images: one multiply of 2 rows
    assert (net.layer("fc1000").dims["I"], net.layer("fc1000").batch) == (2, 1)
    assert "input input 2x3x224x224" in net.title


@pytest.mark.parametrize(("shapes", "message"), [
    ({"image": (1, 3, 224, 224)}, r"--input-shape image=\.\.\.: the model r\.onnx has no input "
                                  r"`image`; its inputs: input"),
    ({"input": (1, 3, 224)}, r"the input has 4 dimensions \(Nx3x224x224\), not 3"),
    ({"input": (1, 4, 224, 224)}, r"dimension 1 of the input is fixed at 3 in the model, not 4"),
])
def test_bad_input_shapes(shapes: dict[str, tuple[int, ...]], message: str) -> None:
    with pytest.raises(NetworkError, match=message):
        import_onnx(resnet50("N"), source="r.onnx", name="r", input_shapes=shapes)


def test_not_onnx_and_unmappable_nodes() -> None:
    for data in (b'{"format": "odyssey-network/1"}', b"", b"\x00\x01garbage"):
        with pytest.raises(NetworkError, match=r"x\.onnx: not an ONNX model"):
            import_onnx(data, source="x.onnx", name="x")
    with pytest.raises(NetworkError, match=r"s\.onnx: node n0 \(Conv\): strides \[2, 1\] differ "
                                           r"between the two axes; odyssey records one stride"):
        import_onnx(single(strides=[2, 1]), source="s.onnx", name="s")
    with pytest.raises(NetworkError, match=r"node n0 \(Conv\): dilations \[1, 2\] differ"):
        import_onnx(single(dilations=[1, 2], pads=[1, 2, 1, 2]), source="s.onnx", name="s")


def test_without_the_onnx_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    with pytest.raises(NetworkError, match=r"needs the onnx package: pip install 'odyssey\[onnx\]'"):
        import_onnx(b"", source="x.onnx", name="x")


def test_table_round_trips() -> None:
    net = import_onnx(small(), source="small.onnx", name="small")
    back = parse_network(json.dumps(network_document(net)), source="small.onnx")
    assert back == net
    for name in ("vgg16", "mobilenetv2"):
        table = load_network(name)
        again = parse_network(json.dumps(network_document(table)), source=table.path)
        assert again == table


def test_cli_tunes_an_onnx_model_and_writes_its_table(tmp_path: Path) -> None:
    model = tmp_path / "one.onnx"
    model.write_bytes(single("QLinearConv").SerializeToString())
    table, out = tmp_path / "one.json", tmp_path / "run.json"
    rc, stdout, stderr = _run(["network", str(model), "--design", "oh-ohw.ipq", "--samples", "12",
                               "--table", str(table), "--json", str(out)])
    assert rc == 0, stderr
    assert "1 node(s) n0 (QLinearConv: quantized node tuned as fp32" in stderr
    assert "1 graph nodes: 1 -> layers (QLinearConv 1)" in stdout
    assert "(1 conv layers, 1 of 1;" in stdout
    doc = json.loads(table.read_text())
    assert doc["format"] == "odyssey-network/1" and doc["layers"][0]["pads"] == [1, 1, 1, 1]
    assert load_network(table).layers == import_onnx(single("QLinearConv"), source="x",
                                                     name="one").layers
    record = json.loads(out.read_text())
    assert record["nodes"][0]["outcome"] == "layer"
    assert record["totals"]["tuned_kinds"] == {"conv": 1}


def test_cli_dry_run_lists_the_layers_and_tunes_nothing(tmp_path: Path) -> None:
    model, table = tmp_path / "small.onnx", tmp_path / "small.json"
    model.write_bytes(small().SerializeToString())
    rc, stdout, stderr = _run(["network", str(model), "--dry-run", "--table", str(table)])
    assert rc == 0, stderr
    assert "4 layers (2 conv + 2 matmul), 4 unique shapes" in stdout and "not tuned" in stdout
    assert "grouped  conv    I4 O4 8x8 k3x3 x2  cnn.c" in stdout
    assert "1 not supported (LSTM: lstm_1)" in stdout and table.is_file()
    rc, stdout, _ = _run(["network", "resnet50", "--dry-run"])
    assert rc == 0 and "conv1       conv       I3 O64 112x112 k7x7 /2    cnn_s2.c" in stdout


@pytest.mark.parametrize(("setup", "argv", "message"), [
    ("text", ["network", "{model}"], "not an ONNX model"),
    ("symbolic", ["network", "{model}"], "--input-shape input=1x3x224x224"),
    ("symbolic", ["network", "{model}", "--input-shape", "input=1x3x224"],
     "the input has 4 dimensions"),
    ("symbolic", ["network", "{model}", "--input-shape", "input=1x3xAx224"],
     "expected NAME=DIMS with positive integer dimensions"),
    ("none", ["network", "vgg16", "--input-shape", "input=1x3x224x224"],
     "--input-shape applies to ONNX models"),
    ("none", ["network", "{model}"], "cannot read the ONNX model"),
    ("none", ["network", "vgg16", "--dry-run", "--json", "-"], "--dry-run tunes nothing"),
    ("none", ["network", "vgg16", "--transfer", "--table", "{model}"],
     "--table and --dry-run apply to the per-layer tuning"),
])
def test_cli_errors_exit_2(tmp_path: Path, setup: str, argv: list[str], message: str) -> None:
    model = tmp_path / "m.onnx"
    if setup == "text":
        model.write_text("not a model\n")
    elif setup == "symbolic":
        model.write_bytes(resnet50("N").SerializeToString())
    rc, _, stderr = _run([a.format(model=model) for a in argv])
    assert rc == 2 and message in stderr, stderr


def test_layer_checks() -> None:
    with pytest.raises(NetworkError, match="a matmul layer has no stride, dilation or pads"):
        Layer("m", "matmul", (("I", 1), ("J", 2), ("K", 3)), stride=2)
    with pytest.raises(NetworkError, match="pads must be 4 integers"):
        Layer("c", "conv", (("O", 1), ("I", 1), ("H", 1), ("W", 1), ("P", 3), ("Q", 3)),
              pads=(1, 1, 1))  # type: ignore[arg-type]
    layer = Layer("a", "matmul", (("I", 128), ("J", 128), ("K", 64)), batch=12)
    assert (layer.unit_macs, layer.macs, layer.describe()) == (
        128 * 128 * 64, 12 * 128 * 128 * 64, "128x64 * 64x128 x12")
    assert dataclasses.replace(layer, batch=1).shape_key == layer.shape_key


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300), cut=st.integers(min_value=0, max_value=20000),
       flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=5))
def test_any_bytes_give_a_network_or_a_network_error(data: bytes, cut: int,
                                                     flips: list[tuple[int, int]]) -> None:
    """Random bytes, and real models cut short, with random bytes spliced in or with bytes
    changed, never end in anything but a network or a NetworkError (the CLI's exit 2). A
    run of 16,000 such models by hand found names that are not UTF-8 (bytes where the format
    has strings) ending in a TypeError; they are a NetworkError now."""
    real = REALS[cut % len(REALS)]
    changed = bytearray(real)
    for at, value in flips:
        changed[at % len(changed)] = value
    for blob in (data, real[:cut], real[:cut] + data + real[cut:], bytes(changed)):
        try:
            net = import_onnx(blob, source="x.onnx", name="x")
        except NetworkError:
            continue
        assert net.layers and len(net.nodes) >= len(net.layers)


REALS = (single().SerializeToString(), small().SerializeToString(),
         single("QLinearConv").SerializeToString())


def test_names_that_are_not_text_are_a_network_error() -> None:
    real = single().SerializeToString()
    at = real.index(b"n0")  # the node's name
    broken = real[:at] + b"\xc6" + real[at + 1:]
    with pytest.raises(NetworkError, match=r"x\.onnx: not a valid ONNX model: the name or "
                                           r"operator .* is not UTF-8 text"):
        import_onnx(broken, source="x.onnx", name="x")
