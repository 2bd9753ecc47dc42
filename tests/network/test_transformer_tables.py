"""The bundled transformer tables (bert-base, vit-b16) rebuilt from their papers, and an ONNX
encoder layer exported the way PyTorch does it mapped to the same layers.

BERT-base: Devlin et al. 2019, section 3 (L = 12, H = 768, A = 12, feed-forward 4H), sequence
128. ViT-B/16: Dosovitskiy et al. 2021, Table 1 (12 layers, D = 768, MLP 3072, 12 heads) and
section 3.1 (16 x 16 patches: 224/16 = 14, 196 patches + the class token = 197 tokens).
"""

from __future__ import annotations

import pytest

from odyssey.network.networks import Layer, load_network, unique_shapes

Shape = tuple[str, str, tuple[int, ...], int, int]  # name, kind, sizes, stride, batch


def _mm(name: str, i: int, j: int, k: int, batch: int = 1) -> Shape:
    return (name, "matmul", (i, j, k), 1, batch)


def _encoder(n: int, tokens: int, hidden: int = 768, heads: int = 12, ffn: int = 3072) -> list[Shape]:
    p, hd = f"enc{n}-", hidden // heads
    return [_mm(p + "q", tokens, hidden, hidden), _mm(p + "k", tokens, hidden, hidden),
            _mm(p + "v", tokens, hidden, hidden),
            _mm(p + "qk", tokens, tokens, hd, heads),  # per head: (T x d) (d x T)
            _mm(p + "av", tokens, hd, tokens, heads),  # per head: (T x T) (T x d)
            _mm(p + "proj", tokens, hidden, hidden),
            _mm(p + "ffn1", tokens, ffn, hidden), _mm(p + "ffn2", tokens, hidden, ffn)]


def published_bert_base() -> list[Shape]:
    return [s for n in range(1, 13) for s in _encoder(n, 128)] + [_mm("pooler", 1, 768, 768)]


def published_vit_b16() -> list[Shape]:
    patches = (224 // 16) ** 2
    embed = ("patch-embed", "conv", (768, 3, 14, 14, 16, 16), 16, 1)
    return [embed, *(s for n in range(1, 13) for s in _encoder(n, patches + 1)),
            _mm("head", 1, 1000, 768)]


def _shape(layer: Layer) -> Shape:
    return (layer.name, layer.kind, tuple(v for _, v in layer.sizes), layer.stride, layer.batch)


@pytest.mark.parametrize(("name", "published"), [("bert-base", published_bert_base),
                                                 ("vit-b16", published_vit_b16)])
def test_every_layer_matches_the_paper(name: str, published: object) -> None:
    net = load_network(name)
    assert [_shape(x) for x in net.layers] == published()  # type: ignore[operator]
    assert all(u.macs == 0 for u in net.unmapped)


def test_operation_counts() -> None:
    # BERT-base at 128 tokens: 11.17 GMAC (22.3 GFLOP), the figure usually quoted
    bert = load_network("bert-base")
    per_layer = 4 * 128 * 768 * 768 + 2 * 12 * 128 * 128 * 64 + 2 * 128 * 768 * 3072
    assert per_layer == 931_135_488
    assert bert.macs == 12 * per_layer + 768 * 768
    # ViT-B/16: 17.56 GMAC (timm lists 17.6 GMACs for vit_base_patch16_224)
    vit = load_network("vit-b16")
    assert vit.macs == 768 * 3 * 196 * 256 + 12 * 1_453_954_560 + 768 * 1000
    assert round(vit.macs / 1e9, 2) == 17.56
    # identical shapes tuned once: 6 for BERT (the q, k, v and output projections share one)
    assert [len(g.layers) for g in unique_shapes(bert)] == [48, 12, 12, 12, 12, 1]
    assert len(unique_shapes(vit)) == 7


def test_an_onnx_encoder_layer_maps_to_the_table() -> None:
    pytest.importorskip("onnx")
    from odyssey.network.onnx_import import import_onnx
    from tests.network.onnx_models import encoder_layer

    net = import_onnx(encoder_layer(), source="enc.onnx", name="enc")
    want = [_shape(x) for x in load_network("bert-base").layers[:8]]
    assert [_shape(x) for x in net.layers] == want
    assert {n.op for n in net.nodes if n.outcome == "no systolic work"} == {
        "Add", "Div", "Erf", "LayerNormalization", "Mul", "Reshape", "Softmax", "Transpose"}
    assert not any(n.outcome == "not supported" for n in net.nodes)
