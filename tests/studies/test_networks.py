"""The bundled network tables against the published networks, and the loader's checks.

The expected shapes are rebuilt here from each paper's own architecture table (not from the
data files): VGG16 configuration D (Simonyan & Zisserman 2014, Table 1), ResNet-50 (He et
al. 2016, Table 1: stages of 3, 4, 6, 3 bottlenecks, stride 2 on conv3_1, conv4_1, conv5_1,
projection shortcuts where the shape changes) and MobileNetV2 (Sandler et al. 2018,
Table 2: (t, c, n, s) rows; Table 1: expansion, depthwise 3x3 of stride s, projection), each
ending in its fully connected layers (matmul layers of kernels/mm.c, one input vector: I = 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odyssey.errors import NetworkError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.network.networks import (
    KERNEL_SIZES,
    Layer,
    list_networks,
    load_network,
    parse_network,
    unique_shapes,
)

ROOT = Path(__file__).resolve().parents[2]

Shape = tuple[str, str, tuple[int, ...], int]  # name, kind, sizes in kernel order, stride


def _conv(name: str, i: int, o: int, h: int, k: int, stride: int = 1) -> Shape:
    return (name, "pointwise" if k == 1 else "conv", (o, i, h, h, k, k), stride)


def _fc(name: str, i: int, o: int) -> Shape:
    return (name, "matmul", (1, o, i), 1)  # I = 1 row, J = outputs, K = inputs


def published_vgg16() -> list[Shape]:
    out, cin = [], 3
    for block, (width, n, h) in enumerate(
            [(64, 2, 224), (128, 2, 112), (256, 3, 56), (512, 3, 28), (512, 3, 14)], 1):
        for k in range(1, n + 1):
            out.append(_conv(f"conv{block}-{k}", cin, width, h, 3))
            cin = width
    return [*out, _fc("fc6", 7 * 7 * 512, 4096), _fc("fc7", 4096, 4096), _fc("fc8", 4096, 1000)]


def published_resnet50() -> list[Shape]:
    out, cin, h = [_conv("conv1", 3, 64, 112, 7, 2)], 64, 56
    for stage, (n, w, s) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], 2):
        h //= s
        for k in range(n):
            st = s if k == 0 else 1
            out += [_conv(f"conv{stage}_1-{k}", cin, w, h, 1, st),
                    _conv(f"conv{stage}_2-{k}", w, w, h, 3), _conv(f"conv{stage}_3-{k}", w, 4 * w, h, 1)]
            if k == 0:
                out.append(_conv(f"conv{stage}_sc-0", cin, 4 * w, h, 1, st))
            cin = 4 * w
    return [*out, _fc("fc1000", 2048, 1000)]


def published_mobilenetv2() -> list[Shape]:
    out, cin, h = [_conv("conv1", 3, 32, 112, 3, 2)], 32, 112
    rows = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1)]
    for stage, (t, c, n, s) in enumerate(rows, 2):
        for k in range(n):
            st = s if k == 0 else 1
            if t != 1:  # t = 1: no expansion layer
                out.append(_conv(f"conv{stage}_1-{k}", cin, cin * t, h, 1))
            h //= st
            out.append((f"conv{stage}_2-{k}", "depthwise", (cin * t, h, h, 3, 3), st))
            out.append(_conv(f"conv{stage}_3-{k}", cin * t, c, h, 1))
            cin = c
    out.append(_conv("conv9", 320, 1280, 7, 1))
    return [*out, _fc("classifier", 1280, 1000)]


PUBLISHED = {"vgg16": published_vgg16, "resnet50": published_resnet50,
             "mobilenetv2": published_mobilenetv2}


def _shape(layer: Layer) -> Shape:
    return (layer.name, layer.kind, tuple(v for _, v in layer.sizes), layer.stride)


def test_bundled_networks_are_listed() -> None:
    assert list_networks() == ("bert-base", "mobilenetv2", "resnet50", "vgg16", "vit-b16")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_every_shape_matches_the_published_network(name: str) -> None:
    net = load_network(name)
    assert net.name == name
    assert [_shape(layer) for layer in net.layers] == PUBLISHED[name]()


def test_layer_counts() -> None:
    vgg = load_network("vgg16")
    assert (len(vgg.layers), vgg.count("conv"), vgg.count("matmul")) == (16, 13, 3)
    # ResNet-50: the release's 49 (conv1 + 16 bottlenecks x 3) plus the 4 projection shortcuts
    # and the fully connected fc1000
    res = load_network("resnet50")
    assert len(res.layers) == 54
    assert (res.count("conv"), res.count("pointwise"), res.count("depthwise"),
            res.count("matmul")) == (17, 36, 0, 1)
    assert [x.name for x in res.layers if x.origin == "added"] == [
        "conv2_sc-0", "conv3_sc-0", "conv4_sc-0", "conv5_sc-0", "fc1000"]
    assert sum(1 for x in res.layers if x.origin == "original") == 49
    # MobileNetV2: 1 standard + 34 pointwise + 17 depthwise + the classifier; of the release's
    # 36 entries 15 are kept, 20 corrected and 1 removed
    mb = load_network("mobilenetv2")
    assert (mb.count("conv"), mb.count("pointwise"), mb.count("depthwise"),
            mb.count("matmul")) == (1, 34, 17, 1)
    origins = [x.origin for x in mb.layers]
    assert (origins.count("original"), origins.count("corrected"), origins.count("added")) == (15, 20, 18)
    assert all(x.origin == "added" for x in mb.layers if x.kind == "depthwise")
    assert [r.name for r in mb.removed] == ["conv2_1-0"]
    assert dict(mb.removed[0].original) == {"i": 32, "o": 32, "r": 112, "c": 112, "p": 1, "q": 1}


def _paper_order(layer: Layer) -> list[int]:
    """``[I, O, H, W, P, Q]`` as in the paper's Table 7."""
    return [layer.size(n) for n in ("I", "O", "H", "W", "P", "Q")]


def test_spot_checks_against_the_papers() -> None:
    vgg = load_network("vgg16")
    assert _paper_order(vgg.layer("conv1-1")) == [3, 64, 224, 224, 3, 3]  # paper Table 7
    assert _paper_order(vgg.layer("conv1-2")) == [64, 64, 224, 224, 3, 3]
    assert _paper_order(vgg.layer("conv5-3")) == [512, 512, 14, 14, 3, 3]
    res = load_network("resnet50")
    conv1 = res.layer("conv1")
    assert (_paper_order(conv1), conv1.stride) == ([3, 64, 112, 112, 7, 7], 2)
    # a bottleneck of conv3_x: 1x1 512->128, 3x3 128, 1x1 128->512 at 28 x 28
    assert [_paper_order(res.layer(f"conv3_{k}-1")) for k in (1, 2, 3)] == [
        [512, 128, 28, 28, 1, 1], [128, 128, 28, 28, 3, 3], [128, 512, 28, 28, 1, 1]]
    assert res.layer("conv3_1-0").stride == 2 and res.layer("conv3_2-0").stride == 1
    assert _paper_order(res.layer("conv5_3-2")) == [512, 2048, 7, 7, 1, 1]
    mb = load_network("mobilenetv2")
    assert (_paper_order(mb.layers[0]), mb.layers[0].stride) == ([3, 32, 112, 112, 3, 3], 2)
    assert mb.layers[1].kind == "depthwise" and mb.layers[1].dims == {
        "C": 32, "H": 112, "W": 112, "P": 3, "Q": 3}
    assert mb.layers[-2].name == "conv9" and _paper_order(mb.layers[-2]) == [320, 1280, 7, 7, 1, 1]
    fc = mb.layers[-1]  # the classifier: one 1280-vector times a 1280 x 1000 matrix
    assert (fc.name, fc.kernel, fc.dims, fc.macs) == ("classifier", "mm",
                                                      {"I": 1, "J": 1000, "K": 1280}, 1_280_000)
    dw = mb.layer("conv3_2-0")  # first block of the 24-channel sequence: stride 2, 112 -> 56
    assert (dw.dims["C"], dw.dims["H"], dw.stride) == (96, 56, 2)
    fixed = mb.layer("conv3_1-1")  # the release had 24 -> 96
    assert (_paper_order(fixed)[:2], fixed.origin) == ([24, 144], "corrected")
    assert dict(fixed.original or ()) == {"i": 24, "o": 96, "r": 56, "c": 56, "p": 1, "q": 1}


def test_multiply_accumulates_match_the_published_totals() -> None:
    # VGG16: 15.35 GMAC in the 13 CONV layers (sum of O*I*H*W*9), 15.47 with the FC layers
    vgg = load_network("vgg16")
    assert sum(x.macs for x in vgg.layers if x.kind == "conv") == 15_346_630_656
    assert vgg.macs == 15_470_264_320 and all(u.macs == 0 for u in vgg.unmapped)
    # ResNet-50: "3.8 x 10^9 FLOPs" (multiply-adds; He et al. Table 1)
    res = load_network("resnet50")
    total = res.macs + sum(u.macs for u in res.unmapped)
    assert 3.8e9 <= total < 3.9e9
    # MobileNetV2 1.0 / 224: "300M" multiply-adds (Sandler et al. Table 4)
    mb = load_network("mobilenetv2")
    total = mb.macs + sum(u.macs for u in mb.unmapped)
    assert abs(total - 300e6) / 300e6 < 0.005
    # the removed t=1 expansion would add 12.8M (32*32*112*112)
    assert 32 * 32 * 112 * 112 == 12_845_056


def test_unmapped_layers_are_listed_with_reasons() -> None:
    for name in list_networks():
        net = load_network(name)
        assert net.unmapped and all(u.reason for u in net.unmapped) and net.source
        assert "stride 1" in net.note or net.count("conv") == 0  # bert-base: no convolution
    for name in ("vgg16", "resnet50", "mobilenetv2"):
        assert "cnn_s2.c" in load_network(name).note
    for name in ("vgg16", "resnet50", "mobilenetv2"):  # the FC layers are tuned: none left out
        assert all(u.op != "fully_connected" for u in load_network(name).unmapped)


def test_unique_shapes_groups_identical_layers() -> None:
    counts = {name: len(unique_shapes(load_network(name))) for name in list_networks()}
    assert counts == {"vgg16": 12, "resnet50": 21, "mobilenetv2": 31, "bert-base": 6,
                      "vit-b16": 7}
    vgg = unique_shapes(load_network("vgg16"))
    assert [g.names for g in vgg][5:9] == [("conv3-2", "conv3-3"), ("conv4-1",),
                                           ("conv4-2", "conv4-3"), ("conv5-1", "conv5-2", "conv5-3")]
    for name in list_networks():
        net = load_network(name)
        groups = unique_shapes(net)
        assert sorted(n for g in groups for n in g.names) == sorted(x.name for x in net.layers)
        assert len({(g.kind, g.sizes) for g in groups}) == len(groups)
        for g in groups:
            assert all((x.kind, x.sizes) == (g.kind, g.sizes) for x in g.layers)
    # the conv2 projection shortcut has the shape of the expansions: tuned once with them
    res = unique_shapes(load_network("resnet50"))
    assert next(g for g in res if "conv2_sc-0" in g.names).names == (
        "conv2_3-0", "conv2_sc-0", "conv2_3-1", "conv2_3-2")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_every_shape_parses_with_its_kernel(name: str) -> None:
    for group in unique_shapes(load_network(name)):
        layer = group.first
        kernel = ROOT / "kernels" / f"{layer.kernel}.c"
        scop = load_scop(kernel, layer.defines())
        assert dict(scop.params) == layer.dims
        space = analyse(scop)
        # the paper's 30 CNN designs (10 dataflows x 3 orderings), also for 1x1 kernels whose
        # p and q loops have extent 1; dwconv.c has 6 dataflows x 2 orderings, mm.c 18 designs
        want = {"cnn": 30, "dwconv": 12, "mm": 18}[layer.kernel]
        assert len(space.designs) == want, layer.name


def test_layer_kernel_sizes_and_defines() -> None:
    layer = load_network("mobilenetv2").layer("conv3_2-0")
    assert layer.kernel == "dwconv" and tuple(layer.dims) == KERNEL_SIZES["dwconv"]
    assert layer.defines() == {"C": "96", "H": "56", "W": "56", "P": "3", "Q": "3"}
    assert layer.macs == 96 * 56 * 56 * 9 and layer.ops == 2 * layer.macs
    with pytest.raises(NetworkError, match="kind `conv` does not match its 1x1 kernel"):
        Layer("x", "conv", (("O", 1), ("I", 1), ("H", 1), ("W", 1), ("P", 1), ("Q", 1)))
    with pytest.raises(NetworkError, match="sizes must be C, H, W, P, Q"):
        Layer("x", "depthwise", (("O", 1), ("I", 1), ("H", 1), ("W", 1), ("P", 1), ("Q", 1)))


# ---- loader errors: the file, the key, the value --------------------------------------------

def _doc(**layer: object) -> dict[str, object]:
    base: dict[str, object] = {"name": "c1", "kind": "conv",
                               "sizes": {"O": 4, "I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}}
    base.update(layer)
    return {"format": "odyssey-network/1", "name": "t", "title": "t", "source": "test",
            "layers": [base]}


def _write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "net.json"
    path.write_text(json.dumps(doc))
    return path


def test_loader_accepts_a_custom_file(tmp_path: Path) -> None:
    net = load_network(_write(tmp_path, _doc()))
    assert net.name == "t" and net.layers[0].dims["O"] == 4 and net.path.endswith("net.json")


@pytest.mark.parametrize(("change", "message"), [
    ({"sizes": {"O": -3, "I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}},
     r"net\.json: layers\[0\]\.sizes\.O must be a positive integer, got -3"),
    ({"sizes": {"I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}},
     r"net\.json: missing required key 'layers\[0\]\.sizes\.O'"),
    ({"kind": "dense"}, r"net\.json: layers\[0\]\.kind must be one of conv, depthwise, pointwise, matmul, got \"dense\""),
    ({"strides": 2}, r"net\.json: unknown key 'layers\[0\]\.strides'"),
    ({"kind": "pointwise"}, r"net\.json: layers\[0\]: .*kind `pointwise` does not match its 3x3 kernel"),
    ({"origin": "corrected"}, r"net\.json: layers\[0\]: a `corrected` layer records"),
    ({"stride": 0}, r"net\.json: layers\[0\]\.stride must be a positive integer, got 0"),
])
def test_loader_errors_name_the_file_and_key(tmp_path: Path, change: dict[str, object],
                                             message: str) -> None:
    with pytest.raises(NetworkError, match=message):
        load_network(_write(tmp_path, _doc(**change)))


def test_loader_errors_on_the_document(tmp_path: Path) -> None:
    doc = _doc()
    doc["layers"] = [doc["layers"][0], doc["layers"][0]]  # type: ignore[index]
    with pytest.raises(NetworkError, match=r"layers\[1\]\.name 'c1' repeats"):
        load_network(_write(tmp_path, doc))
    with pytest.raises(NetworkError, match=r"net\.json: missing required key 'layers'"):
        load_network(_write(tmp_path, {k: v for k, v in _doc().items() if k != "layers"}))
    with pytest.raises(NetworkError, match=r"net\.json: format must be 'odyssey-network/1'"):
        load_network(_write(tmp_path, {**_doc(), "format": "v0"}))
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n  "layers": [,]}')
    with pytest.raises(NetworkError, match=r"bad\.json:2:\d+: invalid JSON"):
        load_network(bad)
    with pytest.raises(NetworkError, match=r"missing\.json: cannot read the network file"):
        load_network(tmp_path / "missing.json")
    with pytest.raises(NetworkError, match="unknown network `vgg19`; bundled networks: "
                                           "bert-base, mobilenetv2, resnet50, vgg16, vit-b16"):
        load_network("vgg19")
    with pytest.raises(NetworkError, match=r"<text>: layers must be a list"):
        parse_network(json.dumps({**_doc(), "layers": {}}), source="<text>")


def test_conv_only_consumers_skip_the_matmul_layers() -> None:
    from odyssey.errors import StudyError
    from odyssey.network.shared_array import network_shapes as shared_shapes
    from odyssey.studies.cnn_dataflows import network_shapes

    # VGG16's 12 unique shapes: 9 convolutions (cnn.c) and the 3 fully connected (mm.c)
    assert len(network_shapes("vgg16")[1]) == 9
    assert len(shared_shapes(load_network("vgg16"))) == 9
    assert len(shared_shapes(load_network("vit-b16"))) == 1  # the patch embedding
    with pytest.raises(StudyError, match="no conv or pointwise layer"):
        shared_shapes(load_network("bert-base"))
