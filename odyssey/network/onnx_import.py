"""An ONNX model as an odyssey network: every node a layer, or listed with the reason it is not.

:func:`import_onnx` (bytes or a ``ModelProto`` in, a frozen
:class:`~odyssey.network.networks.Network` out; reading the file is the caller's job) runs
ONNX shape inference, then maps each node of the main graph, in graph order:

* ``Conv`` (``ConvInteger``, ``QLinearConv``) of input ``N x C x H_in x W_in``, weights
  ``M x C/g x kH x kW`` and output ``N x M x H x W`` (2-D; a 1-D convolution is one with
  ``H = kH = 1``):

  - ``group = 1``: a ``conv`` (``pointwise`` when 1x1) layer ``O=M, I=C, H, W, P=kH, Q=kW``,
    ``batch = N``;
  - ``group = C = M``: a ``depthwise`` layer ``C, H, W, P, Q``, ``batch = N``;
  - any other ``group = g``: ``g`` ordinary convolutions ``O=M/g, I=C/g``, ``batch = N*g``;

  stride, dilation and pads (``auto_pad`` resolved) are recorded on the layer; strides or
  dilations that differ between the two axes, or a 3-D convolution, are a NetworkError.
* ``MatMul`` (``MatMulInteger``, ``QLinearMatMul``) ``A[..., M, K] * B[..., K, N]`` and ``Gemm``
  (``transA``/``transB`` applied): a ``matmul`` layer ``I=M, J=N, K`` of ``kernels/mm.c``;
  with a batched ``B`` (attention's ``Q K^T`` and ``A V``), ``batch`` is the broadcast
  product of the leading dimensions; with a 2-D ``B`` (weights shared over the leading
  dimensions of ``A``), those dimensions fold into ``I``.
* The quantized forms are tuned as fp32 and carry a warning (:data:`~.onnx_ops.QUANTIZED_WARNING`).
* A ``BatchNormalization`` of a mapped node's output is ``fused`` into that layer (folded
  into its weights at inference). Elementwise, pooling, other normalization, softmax,
  reduction, data-movement and (de)quantization nodes do no systolic work; other operators (``ConvTranspose``, ``LSTM``, ...) are not
  supported. Both are listed in :attr:`Network.unmapped` (by operator) and every node in
  :attr:`Network.nodes`.

Inputs with symbolic dimensions need their shapes (``input_shapes``); errors name the node,
its operator and what to do. The ``onnx`` package is imported only here, and only when a
model is imported (``pip install 'odyssey[onnx]'``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from odyssey.errors import NetworkError
from odyssey.network.networks import Layer, LayerKind, Network, NodeAccount, Unmapped
from odyssey.network.onnx_ops import (
    CONV_OPS,
    MATMUL_OPS,
    NO_WORK,
    QUANTIZED_OPS,
    QUANTIZED_WARNING,
    no_work_reason,
    unsupported_reason,
)

INSTALL_HINT = "pip install 'odyssey[onnx]'"

Dims = tuple[int | str | None, ...]  # a tensor's dimensions: value, symbol, or unknown


def _onnx() -> Any:
    """The ``onnx`` module, or a NetworkError saying how to install it."""
    try:
        import onnx
        import onnx.shape_inference
    except ImportError:
        raise NetworkError(f"reading ONNX models needs the onnx package: {INSTALL_HINT}") from None
    return onnx


def import_onnx(model: bytes | Any, *, source: str, name: str,
                input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Network:
    """The network of ONNX ``model`` (its serialized bytes or a ``ModelProto``); ``source``
    names it in messages, ``name`` is the network's name; ``input_shapes`` sets the shapes of
    graph inputs (required where a dimension is symbolic). Raises NetworkError for bytes that
    are not an ONNX model, a bad input shape, a failed shape inference, a compute node whose
    shapes or attributes cannot be mapped, or a graph with no mappable node."""
    onnx = _onnx()
    proto = _parse(onnx, model, source)
    graph = proto.graph
    _check_text(proto, source)
    _set_input_shapes(graph, dict(input_shapes or {}), source)
    try:
        proto = onnx.shape_inference.infer_shapes(proto, strict_mode=True, data_prop=True)
    except (onnx.shape_inference.InferenceError, UnicodeError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NetworkError(f"{source}: ONNX shape inference failed: {first}; check the model "
                           "with onnx.checker.check_model, or fix --input-shape") from None
    graph = proto.graph
    shapes = _shapes(graph)
    layers: list[Layer] = []
    accounts: list[NodeAccount] = []
    used: set[str] = set()
    made_by: dict[str, str] = {}  # output tensor of a mapped node -> its layer's name
    for k, node in enumerate(graph.node):
        label = _unique(node.name or f"{node.op_type}_{k}", used)
        where = _Node(source, label, node.op_type)
        if node.op_type in CONV_OPS or node.op_type in MATMUL_OPS:
            layer, reason = (_conv(where, node, shapes) if node.op_type in CONV_OPS
                             else _matmul(where, node, shapes))
            layers.append(layer)
            made_by.update(dict.fromkeys(node.output, layer.name))
            warning = QUANTIZED_WARNING if node.op_type in QUANTIZED_OPS else ""
            accounts.append(NodeAccount(label, node.op_type, "layer", (layer.name,), reason, warning))
        elif node.op_type == "BatchNormalization" and node.input and node.input[0] in made_by:
            into = made_by[node.input[0]]
            accounts.append(NodeAccount(label, node.op_type, "fused", (into,),
                                        f"folded into {into}'s weights and bias at inference: "
                                        "no systolic work of its own"))
        elif node.op_type in NO_WORK and node.domain in ("", "ai.onnx"):
            accounts.append(NodeAccount(label, node.op_type, "no systolic work",
                                        reason=no_work_reason(node.op_type)))
        else:
            accounts.append(NodeAccount(label, node.op_type, "not supported",
                                        reason=unsupported_reason(node.op_type, node.domain)))
    if not layers:
        ops = sorted({a.op for a in accounts})
        raise NetworkError(f"{source}: no node maps to an odyssey kernel (operators: "
                           f"{', '.join(ops) or 'none'}); odyssey maps Conv, Gemm, MatMul and "
                           "their quantized forms")
    inputs = ", ".join(f"{i.name} {'x'.join(str(d) for d in shapes[i.name])}"
                       for i in _data_inputs(graph))
    producer = " ".join(x for x in (proto.producer_name, proto.producer_version) if x)
    opset = max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), default=0)
    return Network(
        name=name, title=f"{graph.name or name} (ONNX), input {inputs}", layers=tuple(layers),
        source=f"ONNX model {source} ({producer or 'unknown producer'}, opset {opset}): "
               f"{len(accounts)} nodes, {len(layers)} mapped to layers",
        note="Imported by odyssey (docs/networks.md). Stride-2 layers are tuned with the "
             "stride-2 kernels (cnn_s2.c, dwconv_s2.c); other strides are modelled as stride 1 "
             "over their output size: exact operation count, underestimated input traffic and "
             "buffers.",
        unmapped=_unmapped(accounts), path=source, nodes=tuple(accounts))


@dataclass(frozen=True, slots=True)
class _Node:
    """A node in messages: ``MODEL: node NAME (OP)``."""

    source: str
    name: str
    op: str

    def error(self, what: str, fix: str) -> NetworkError:
        return NetworkError(f"{self.source}: node {self.name} ({self.op}): {what}; {fix}")


def _parse(onnx: Any, model: bytes | Any, source: str) -> Any:
    from google.protobuf.message import DecodeError

    if not isinstance(model, bytes | bytearray):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)  # the caller's model is left as it was
        return proto
    try:
        proto = onnx.load_model_from_string(bytes(model))
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise NetworkError(f"{source}: not an ONNX model ({exc}); give an .onnx file exported "
                           "by a framework, a bundled network name or an odyssey-network/1 "
                           "JSON file") from None
    if proto.ir_version == 0 or not proto.HasField("graph") or not proto.graph.node:
        raise NetworkError(f"{source}: not an ONNX model (no IR version or no graph nodes); give "
                           "an .onnx file exported by a framework, a bundled network name or an "
                           "odyssey-network/1 JSON file")
    return proto


def _check_text(proto: Any, source: str) -> None:
    """Every name and operator the import reads is text (a damaged file can hold bytes that
    are not UTF-8 where the format has strings)."""
    graph = proto.graph
    named = [*graph.input, *graph.output, *graph.value_info, *graph.initializer]
    texts = [proto.producer_name, proto.producer_version, graph.name, *(x.name for x in named),
             *(o.domain for o in proto.opset_import)]
    for node in graph.node:
        texts += [node.name, node.op_type, node.domain, *node.input, *node.output]
    bad = next((t for t in texts if not isinstance(t, str)), None)
    if bad is not None:
        raise NetworkError(f"{source}: not a valid ONNX model: the name or operator {bad!r} is "
                           "not UTF-8 text (a damaged file?); export the model again")


def _data_inputs(graph: Any) -> list[Any]:
    """The graph inputs that are not initializers (the model's data inputs)."""
    inits = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in inits]


def _dims_of(value_info: Any) -> Dims:
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return ()
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                 for d in t.shape.dim)


def _shown(dims: Dims) -> str:
    """``Nx3x224x224``: values, symbols, ``?`` for unknown dimensions."""
    return "x".join(str(d) if d else "?" for d in dims) or "unknown"


def _example(dims: Dims) -> str:
    return "x".join(str(d) if isinstance(d, int) and d > 0 else "1" for d in dims) or "1x3x224x224"


def _set_input_shapes(graph: Any, given: dict[str, tuple[int, ...]], source: str) -> None:
    """Write ``given`` into the graph's data inputs; every data input must end up concrete."""
    inputs = {i.name: i for i in _data_inputs(graph)}
    for name, shape in given.items():
        if name not in inputs:
            raise NetworkError(f"--input-shape {name}=...: the model {source} has no input "
                               f"`{name}`; its inputs: {', '.join(inputs) or 'none'}")
        have = _dims_of(inputs[name])
        if have and len(have) != len(shape):
            raise NetworkError(f"--input-shape {name}={'x'.join(map(str, shape))}: the input has "
                               f"{len(have)} dimensions ({_shown(have)}), not {len(shape)}")
        for k, (old, new) in enumerate(zip(have, shape, strict=False)):
            if isinstance(old, int) and old > 0 and old != new:
                raise NetworkError(f"--input-shape {name}={'x'.join(map(str, shape))}: dimension "
                                   f"{k} of the input is fixed at {old} in the model, not {new}")
        dims = inputs[name].type.tensor_type.shape.dim
        del dims[:]
        for v in shape:
            dims.add().dim_value = v
    for name, info in inputs.items():
        dims = _dims_of(info)
        if not info.type.tensor_type.HasField("shape") or any(
                not isinstance(d, int) or d <= 0 for d in dims):
            raise NetworkError(f"{source}: input `{name}` has shape {_shown(dims)}, with symbolic or "
                               f"unknown dimensions; give its shape, e.g. --input-shape "
                               f"{name}={_example(dims)}")


def _shapes(graph: Any) -> dict[str, Dims]:
    out: dict[str, Dims] = {}
    for vi in (*graph.input, *graph.value_info, *graph.output):
        out[vi.name] = _dims_of(vi)
    for t in graph.initializer:
        out[t.name] = tuple(int(d) for d in t.dims)
    return out


def _shape(where: _Node, node: Any, index: int, shapes: Mapping[str, Dims], role: str) -> tuple[int, ...]:
    """The concrete shape of the node's input ``index`` (``-1``: its output)."""
    names = node.output if index < 0 else node.input
    k = 0 if index < 0 else index
    tensor = names[k] if k < len(names) else ""
    dims = shapes.get(tensor, ()) if tensor else ()
    if not dims or any(not isinstance(d, int) or d <= 0 for d in dims):
        raise where.error(f"the shape of its {role} `{tensor}` is {_shown(dims)} after shape "
                          "inference",
                          "give every symbolic input dimension with --input-shape NAME=1x3x224x224, "
                          "or export the model with static shapes")
    return tuple(int(d) for d in dims)  # type: ignore[arg-type]


def _ints(node: Any, name: str, default: list[int]) -> list[int]:
    for a in node.attribute:
        if a.name == name:
            return list(a.ints) if a.ints else [int(a.i)]
    return default


def _text(node: Any, name: str, default: str) -> str:
    for a in node.attribute:
        if a.name == name:
            return a.s.decode() if isinstance(a.s, bytes) else str(a.s)
    return default


def _conv(where: _Node, node: Any, shapes: Mapping[str, Dims]) -> tuple[Layer, str]:
    x_in, w_in = CONV_OPS[node.op_type]
    x = _shape(where, node, x_in, shapes, "input")
    w = _shape(where, node, w_in, shapes, "weights")
    y = _shape(where, node, -1, shapes, "output")
    if len(x) == 3:  # a 1-D convolution: a 2-D one of one row
        x, w, y = (x[0], x[1], 1, x[2]), (w[0], w[1], 1, w[2]), (y[0], y[1], 1, y[2])
    elif len(x) != 4 or len(w) != 4 or len(y) != 4:
        raise where.error(f"a {len(x) - 2}-D convolution (input {_example(x)})",
                          "odyssey maps 1-D and 2-D convolutions only; remove the layer from the "
                          "model or write the network's table by hand (docs/networks.md)")
    n, c, h_in, w_in_ = x
    m, c_g, kh, kw = w
    _, _, oh, ow = y
    group = _ints(node, "group", [1])[0]
    strides = _ints(node, "strides", [1, 1])
    dilations = _ints(node, "dilations", [1, 1])
    if len(strides) == 1:  # 1-D: the added axis of one row strides alike
        strides = strides * 2
    if len(dilations) == 1:
        dilations = dilations * 2
    if strides[0] != strides[1]:
        raise where.error(f"strides {strides} differ between the two axes",
                          "odyssey records one stride per layer; export the layer with equal "
                          "strides or write the network's table by hand (docs/networks.md)")
    if dilations[0] != dilations[1]:
        raise where.error(f"dilations {dilations} differ between the two axes",
                          "odyssey records one dilation per layer; export the layer with equal "
                          "dilations or write the network's table by hand (docs/networks.md)")
    if group < 1 or c % group or m % group or c // group != c_g:
        raise where.error(f"group {group} does not divide its {c} input and {m} output channels "
                          f"into the weights' {c_g} input channels",
                          "check the model with onnx.checker.check_model")
    pads = _pads(node, (h_in, w_in_), (oh, ow), (kh, kw), strides, dilations)
    kind: LayerKind = "pointwise" if kh == kw == 1 else "conv"
    sizes: tuple[tuple[str, int], ...]
    if group == 1:
        sizes, batch, how = (("O", m), ("I", c), ("H", oh), ("W", ow), ("P", kh), ("Q", kw)), n, \
            "ordinary convolution"
    elif group == c == m:
        kind = "depthwise"
        sizes, batch = (("C", c), ("H", oh), ("W", ow), ("P", kh), ("Q", kw)), n
        how = f"depthwise convolution (group {group} = channels)"
    else:
        sizes = (("O", m // group), ("I", c // group), ("H", oh), ("W", ow), ("P", kh), ("Q", kw))
        batch = n * group
        how = f"grouped convolution: {group} groups as {group} ordinary convolutions"
    layer = Layer(name=where.name, kind=kind, sizes=sizes, stride=strides[0],
                  dilation=dilations[0], pads=pads, batch=batch)
    return layer, f"{how} -> {layer.kind} {layer.describe()}"


def _pads(node: Any, size_in: tuple[int, int], size_out: tuple[int, int],
          kernel: tuple[int, int], strides: list[int], dilations: list[int]
          ) -> tuple[int, int, int, int]:
    """``(top, left, bottom, right)``: the ``pads`` attribute (ONNX order ``x1_begin,
    x2_begin, x1_end, x2_end``), or ``auto_pad``'s: a total of
    ``max((out-1)*s + (k-1)*d + 1 - in, 0)`` per axis, the odd one at the end (``SAME_UPPER``)
    or the beginning (``SAME_LOWER``)."""
    auto = _text(node, "auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        p = _ints(node, "pads", [0, 0, 0, 0])
        if len(p) == 2:  # 1-D: (begin, end) of the one axis
            return (0, p[0], 0, p[1])
        return (p[0], p[1], p[2], p[3])
    if auto == "VALID":
        return (0, 0, 0, 0)
    begin, end = [], []
    for n_in, n_out, k, s, d in zip(size_in, size_out, kernel, strides, dilations, strict=True):
        total = max((n_out - 1) * s + (k - 1) * d + 1 - n_in, 0)
        low = total // 2 if auto == "SAME_UPPER" else total - total // 2
        begin.append(low)
        end.append(total - low)
    return (begin[0], begin[1], end[0], end[1])


def _matmul(where: _Node, node: Any, shapes: Mapping[str, Dims]) -> tuple[Layer, str]:
    a_in, b_in = MATMUL_OPS[node.op_type]
    a = list(_shape(where, node, a_in, shapes, "input A"))
    b = list(_shape(where, node, b_in, shapes, "input B"))
    if node.op_type == "Gemm":
        if len(a) != 2 or len(b) != 2:
            raise where.error(f"Gemm inputs of shapes {_example(tuple(a))} and "
                              f"{_example(tuple(b))} are not 2-D", "check the model with "
                              "onnx.checker.check_model")
        if _ints(node, "transA", [0])[0]:
            a = a[::-1]
        if _ints(node, "transB", [0])[0]:
            b = b[::-1]
    if len(a) == 1:
        a = [1, a[0]]
    if len(b) == 1:
        b = [b[0], 1]
    if a[-1] != b[-2]:
        raise where.error(f"inner dimensions differ: A is {_example(tuple(a))}, B is "
                          f"{_example(tuple(b))}", "check the model with onnx.checker.check_model")
    if len(b) == 2:  # weights shared over A's leading dimensions: one taller multiply
        rows, batch, how = math.prod(a[:-1]), 1, "matrix multiply"
        if len(a) > 2:
            how = f"matrix multiply, A's leading {_example(tuple(a[:-2]))} folded into its rows"
    else:
        lead_a, lead_b = a[:-2], b[:-2]
        width = max(len(lead_a), len(lead_b))
        lead_a = [1] * (width - len(lead_a)) + lead_a
        lead_b = [1] * (width - len(lead_b)) + lead_b
        if any(x != y and 1 not in (x, y) for x, y in zip(lead_a, lead_b, strict=True)):
            raise where.error(f"batch dimensions of A {_example(tuple(a))} and B "
                              f"{_example(tuple(b))} do not broadcast",
                              "check the model with onnx.checker.check_model")
        rows = a[-2]
        batch = math.prod(max(x, y) for x, y in zip(lead_a, lead_b, strict=True))
        how = f"batched matrix multiply ({batch} independent multiplies)"
    layer = Layer(name=where.name, kind="matmul", sizes=(("I", rows), ("J", b[-1]), ("K", a[-1])),
                  batch=batch)
    return layer, f"{how} -> matmul {layer.describe()}"


def _unique(label: str, used: set[str]) -> str:
    out, k = label, 1
    while out in used:
        k += 1
        out = f"{label}#{k}"
    used.add(out)
    return out


def _unmapped(accounts: list[NodeAccount]) -> tuple[Unmapped, ...]:
    """The nodes that are not layers, one entry per (outcome, operator), in graph order."""
    groups: dict[tuple[str, str], list[NodeAccount]] = {}
    for a in accounts:
        if a.outcome != "layer":
            groups.setdefault((a.outcome, a.op), []).append(a)
    out = []
    for (outcome, op), nodes in groups.items():
        names = ", ".join(n.name for n in nodes[:3]) + (", ..." if len(nodes) > 3 else "")
        reason = nodes[0].reason
        if outcome == "not supported":
            reason += " (multiply-accumulates not counted)"
        out.append(Unmapped(names, op, len(nodes), 0, reason))
    return tuple(out)
