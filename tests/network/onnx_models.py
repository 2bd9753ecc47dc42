"""ONNX models built in process with ``onnx.helper`` (nothing downloaded) from the published
layer shapes of ResNet-50 v1 (He et al. 2016, Table 1) and MobileNetV2 (Sandler et al. 2018,
Tables 1 and 2), as a framework exports them: convolutions followed by BatchNormalization
and an activation, residual Adds, pools, Flatten and a Gemm classifier.

Weights are graph inputs with declared shapes and no data (shape inference needs only
their shapes; a full ResNet-50 with 25 M random weights would take seconds to build), except
where a test asks for initializers. Node names are the bundled tables' layer names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper


@dataclass
class GraphBuilder:
    """Nodes, weight inputs and initializers of a graph under construction."""

    nodes: list[Any] = field(default_factory=list)
    weights: list[Any] = field(default_factory=list)
    inits: list[Any] = field(default_factory=list)
    count: int = 0
    random_weights: bool = False

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def weight(self, name: str, shape: tuple[int, ...]) -> str:
        if self.random_weights:
            data = np.random.default_rng(self.count).standard_normal(shape).astype(np.float32)
            self.inits.append(onnx.numpy_helper.from_array(data, name))
        else:
            self.weights.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def op(self, op: str, inputs: list[str], name: str = "", **attrs: Any) -> str:
        out = self.fresh(f"{name or op.lower()}_out")
        self.nodes.append(helper.make_node(op, inputs, [out], name=name or self.fresh(op), **attrs))
        return out

    def conv(self, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1,
             group: int = 1, act: str | None = "Relu") -> str:
        w = self.weight(f"{name}.weight", (cout, cin // group, k, k))
        y = self.op("Conv", [x, w], name, kernel_shape=[k, k], strides=[stride, stride],
                    pads=[k // 2] * 4, group=group)
        bn = [self.weight(f"{name}.bn.{p}", (cout,)) for p in ("scale", "bias", "mean", "var")]
        y = self.op("BatchNormalization", [y, *bn])
        if act == "Relu6":
            return self.op("Clip", [y, self.const(0.0), self.const(6.0)])
        return self.op(act, [y]) if act else y

    def const(self, value: float) -> str:
        name = self.fresh("const")
        self.inits.append(helper.make_tensor(name, TensorProto.FLOAT, [], [value]))
        return name

    def int_const(self, values: list[int]) -> str:
        name = self.fresh("shape")
        self.inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def classifier(self, x: str, name: str, cin: int, cout: int) -> str:
        y = self.op("GlobalAveragePool", [x])
        y = self.op("Flatten", [y], axis=1)
        w = self.weight(f"{name}.weight", (cout, cin))
        b = self.weight(f"{name}.bias", (cout,))
        return self.op("Gemm", [y, w, b], name, transB=1)

    def model(self, out: str, input_dims: list[int | str], name: str) -> onnx.ModelProto:
        x = helper.make_tensor_value_info("input", TensorProto.FLOAT, input_dims)
        y = helper.make_tensor_value_info(out, TensorProto.FLOAT, None)
        graph = helper.make_graph(self.nodes, name, [x, *self.weights], [y], initializer=self.inits)
        return helper.make_model(graph, producer_name="odyssey-tests",
                                 opset_imports=[helper.make_opsetid("", 17)])


def resnet50(batch: int | str = 1, *, random_weights: bool = False) -> onnx.ModelProto:
    """ResNet-50 v1: conv1 7x7/2, max pool 3x3/2, 3-4-6-3 bottlenecks (stride 2 on the first
    1x1 of conv3_1, conv4_1, conv5_1), projection shortcuts, global pool, fc1000."""
    g = GraphBuilder(random_weights=random_weights)
    x = g.conv("input", "conv1", 3, 64, 7, 2)
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (n, w, s) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], 2):
        for k in range(n):
            st = s if k == 0 else 1
            y = g.conv(x, f"conv{stage}_1-{k}", cin, w, 1, st)
            y = g.conv(y, f"conv{stage}_2-{k}", w, w, 3)
            y = g.conv(y, f"conv{stage}_3-{k}", w, 4 * w, 1, act=None)
            short = g.conv(x, f"conv{stage}_sc-0", cin, 4 * w, 1, st, act=None) if k == 0 else x
            x = g.op("Relu", [g.op("Add", [y, short])])
            cin = 4 * w
    return g.model(g.classifier(x, "fc1000", 2048, 1000), [batch, 3, 224, 224], "resnet50")


def mobilenetv2() -> onnx.ModelProto:
    """MobileNetV2 1.0/224: conv1 3x3/2, the (t, c, n, s) rows of Table 2 as inverted
    residuals (1x1 expansion unless t = 1, depthwise 3x3 of stride s through ``group``,
    1x1 projection, Add where stride 1 and widths equal), conv9 1x1 to 1280, classifier."""
    g = GraphBuilder()
    x = g.conv("input", "conv1", 3, 32, 3, 2, act="Relu6")
    cin = 32
    rows = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1)]
    for stage, (t, c, n, s) in enumerate(rows, 2):
        for k in range(n):
            st = s if k == 0 else 1
            y = g.conv(x, f"conv{stage}_1-{k}", cin, cin * t, 1, act="Relu6") if t != 1 else x
            y = g.conv(y, f"conv{stage}_2-{k}", cin * t, cin * t, 3, st, group=cin * t,
                       act="Relu6")
            y = g.conv(y, f"conv{stage}_3-{k}", cin * t, c, 1, act=None)
            x = g.op("Add", [x, y]) if st == 1 and cin == c else y
            cin = c
    x = g.conv(x, "conv9", 320, 1280, 1, act="Relu6")
    return g.model(g.classifier(x, "classifier", 1280, 1000), [1, 3, 224, 224], "mobilenetv2")


def small(extra_op: str = "LSTM") -> onnx.ModelProto:
    """A 3x3 convolution, a grouped convolution (2 groups), two-head attention-like batched
    MatMuls (``Q K^T`` and ``A V`` on a ``2 x 8 x 32`` tensor), and one node of ``extra_op``
    (an LSTM by default, or nothing) that odyssey does not support."""
    g = GraphBuilder(random_weights=True)
    x = g.conv("input", "c1", 4, 8, 3)
    x = g.conv(x, "grouped", 8, 8, 3, group=2)
    heads = g.op("Reshape", [x, g.int_const([2, 8, 32])])
    if extra_op == "LSTM":
        w = g.weight("lstm.W", (1, 64, 32))
        r = g.weight("lstm.R", (1, 64, 16))
        g.nodes.append(helper.make_node("LSTM", [heads, w, r], [g.fresh("lstm_out")],
                                        name="lstm_1", hidden_size=16))
    scores = g.op("MatMul", [heads, g.op("Transpose", [heads], perm=[0, 2, 1])], "scores")
    return g.model(g.op("MatMul", [g.op("Softmax", [scores], axis=-1), heads], "context"),
                   [1, 4, 8, 8], "small")


def single(op: str = "Conv", **attrs: Any) -> onnx.ModelProto:
    """One node: a ``Conv`` 8 -> 8 channels 3x3 on 1 x 8 x 16 x 16 (``attrs`` override its
    attributes), a ``QLinearConv`` or ``ConvInteger`` of that shape, or a ``MatMulInteger`` /
    ``QLinearMatMul`` of 16 x 32 by 32 x 8."""
    nodes: list[Any] = []
    if op in ("Conv", "ConvInteger", "QLinearConv"):
        x_type = TensorProto.FLOAT if op == "Conv" else TensorProto.UINT8
        x = helper.make_tensor_value_info("input", x_type, [1, 8, 16, 16])
        w = helper.make_tensor_value_info("w", x_type, [8, 8, 3, 3])
        kw: dict[str, Any] = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], **attrs}
        if op == "QLinearConv":
            scales = ["xs", "xz", "w", "ws", "wz", "ys", "yz"]
            inputs = ["input", *scales]
        else:
            inputs = ["input", "w"]
        nodes.append(helper.make_node(op, inputs, ["y"], name="n0", **kw))
    else:
        x = helper.make_tensor_value_info("input", TensorProto.UINT8, [16, 32])
        w = helper.make_tensor_value_info("w", TensorProto.UINT8, [32, 8])
        inputs = (["input", "w"] if op == "MatMulInteger"
                  else ["input", "xs", "xz", "w", "ws", "wz", "ys", "yz"])
        nodes.append(helper.make_node(op, inputs, ["y"], name="n0"))
    inits = []
    if op.startswith("QLinear"):
        for n in ("xs", "ws", "ys"):
            inits.append(helper.make_tensor(n, TensorProto.FLOAT, [], [0.1]))
        for n in ("xz", "wz", "yz"):
            inits.append(helper.make_tensor(n, TensorProto.UINT8, [], [0]))
    y = helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)
    graph = helper.make_graph(nodes, "single", [x, w], [y], initializer=inits)
    return helper.make_model(graph, producer_name="odyssey-tests",
                             opset_imports=[helper.make_opsetid("", 17)])


def encoder_layer(tokens: int = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072,
                  prefix: str = "enc1-") -> onnx.ModelProto:
    """One post-norm transformer encoder layer as PyTorch exports BERT's: MatMul + Add for
    each projection, Reshape and Transpose to ``1 x heads x tokens x head_dim``, ``Q K^T``
    (K transposed to ``head_dim x tokens``), Div, Softmax, ``A V``, back to
    ``1 x tokens x hidden``, the output projection, Add, LayerNormalization, the feed-forward
    MatMuls with Gelu (as Erf), Add, LayerNormalization."""
    g = GraphBuilder()
    hd = hidden // heads

    def dense(x: str, name: str, cin: int, cout: int) -> str:
        w = g.weight(f"{name}.weight", (cin, cout))
        return g.op("Add", [g.op("MatMul", [x, w], name), g.weight(f"{name}.bias", (cout,))])

    def split(x: str, perm: list[int]) -> str:
        return g.op("Transpose", [g.op("Reshape", [x, g.int_const([1, tokens, heads, hd])])],
                    perm=perm)

    def norm(x: str, name: str) -> str:
        return g.op("LayerNormalization", [x, g.weight(f"{name}.gamma", (hidden,)),
                                           g.weight(f"{name}.beta", (hidden,))], axis=-1)

    x = "input"
    q = split(dense(x, f"{prefix}q", hidden, hidden), [0, 2, 1, 3])
    k = split(dense(x, f"{prefix}k", hidden, hidden), [0, 2, 3, 1])
    v = split(dense(x, f"{prefix}v", hidden, hidden), [0, 2, 1, 3])
    scores = g.op("Div", [g.op("MatMul", [q, k], f"{prefix}qk"), g.const(float(hd) ** 0.5)])
    ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v], f"{prefix}av")
    ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                           g.int_const([1, tokens, hidden])])
    x = norm(g.op("Add", [x, dense(ctx, f"{prefix}proj", hidden, hidden)]), "ln1")
    h = dense(x, f"{prefix}ffn1", hidden, ffn)
    h = g.op("Mul", [h, g.op("Add", [g.op("Erf", [g.op("Div", [h, g.const(2 ** 0.5)])]),
                                     g.const(1.0)])])
    out = norm(g.op("Add", [x, dense(h, f"{prefix}ffn2", ffn, hidden)]), "ln2")
    return g.model(out, [1, tokens, hidden], "encoder")
