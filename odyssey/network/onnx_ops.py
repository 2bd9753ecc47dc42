"""What each ONNX operator becomes in an odyssey network (data only; no ``onnx`` import).

Compute operators map to kernels (:data:`CONV_OPS` to ``kernels/cnn.c`` or
``kernels/dwconv.c``, :data:`MATMUL_OPS` to ``kernels/mm.c``); the quantized ones among them
(:data:`QUANTIZED_OPS`) are tuned as fp32 with a warning, until integer kernels exist.
Operators without multiply-accumulate loop nests (:data:`NO_WORK`) do no systolic work and
are listed with their category; every other operator is *not supported*, with the reason
from :data:`UNSUPPORTED` when odyssey knows why.
"""

from __future__ import annotations

#: operator -> (index of the data input, index of the weight input)
CONV_OPS: dict[str, tuple[int, int]] = {"Conv": (0, 1), "ConvInteger": (0, 1), "QLinearConv": (0, 3)}
#: operator -> (index of A, index of B) in ``Y = A * B``
MATMUL_OPS: dict[str, tuple[int, int]] = {
    "MatMul": (0, 1), "Gemm": (0, 1), "MatMulInteger": (0, 1), "QLinearMatMul": (0, 3)}
QUANTIZED_OPS = frozenset({"ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul"})

QUANTIZED_WARNING = ("quantized node tuned as fp32: odyssey's kernels are fp32 until integer "
                     "datapaths exist, so its resources and throughput are those of fp32")

_CATEGORIES: dict[str, str] = {
    "elementwise": (
        "Abs Acos Acosh Add And Asin Asinh Atan Atanh BitShift BitwiseAnd BitwiseNot BitwiseOr "
        "BitwiseXor Cast CastLike Ceil Celu Clip Cos Cosh Div Elu Equal Erf Exp Floor Gelu "
        "Greater GreaterOrEqual HardSigmoid HardSwish Hardmax IsInf IsNaN LeakyRelu Less "
        "LessOrEqual Log Max Mean Min Mish Mod Mul Neg Not Or PRelu Pow Reciprocal Relu Round "
        "Selu Shrink Sigmoid Sign Sin Sinh Softplus Softsign Sqrt Sub Sum Tan Tanh "
        "ThresholdedRelu Where Xor"),
    "pooling": "AveragePool GlobalAveragePool GlobalLpPool GlobalMaxPool LpPool MaxPool "
               "MaxRoiPool MaxUnpool RoiAlign",
    "normalization": "BatchNormalization GroupNormalization InstanceNormalization LRN "
                     "LayerNormalization LpNormalization MeanVarianceNormalization "
                     "RMSNormalization SimplifiedLayerNormalization SkipLayerNormalization",
    "softmax": "LogSoftmax Softmax",
    "reduction": "ArgMax ArgMin ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax "
                 "ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare",
    "data movement": (
        "Compress Concat Constant ConstantOfShape DepthToSpace Dropout Expand EyeLike Flatten "
        "Gather GatherElements GatherND Identity NonZero OneHot Pad Range Reshape Resize "
        "ReverseSequence ScatterElements ScatterND Shape Size Slice SpaceToDepth Split Squeeze "
        "Tile TopK Transpose Trilu Unique Unsqueeze Upsample"),
    "quantization": "DequantizeLinear DynamicQuantizeLinear QuantizeLinear",
}
#: operator -> its category, for the operators that do no systolic work
NO_WORK: dict[str, str] = {op: cat for cat, ops in _CATEGORIES.items() for op in ops.split()}

#: why a known compute operator is not mapped, and what to do
UNSUPPORTED: dict[str, str] = {
    "ConvTranspose": "transposed convolution: no odyssey kernel models its scattered output "
                     "(tune the equivalent convolution with a hand-written table)",
    "LSTM": "recurrent layer: its matrix multiplies run inside the operator, step by step; no "
            "odyssey kernel for it",
    "GRU": "recurrent layer: no odyssey kernel for it",
    "RNN": "recurrent layer: no odyssey kernel for it",
    "Einsum": "einsum: not mapped (export the model with MatMul instead)",
    "Attention": "fused attention (a contrib operator): export the model without fusing it, so "
                 "its MatMuls are mapped",
    "MultiHeadAttention": "fused attention (a contrib operator): export the model without "
                          "fusing it, so its MatMuls are mapped",
    "DeformConv": "deformable convolution: no odyssey kernel for it",
    "If": "control flow: the subgraphs are not mapped",
    "Loop": "control flow: the subgraphs are not mapped",
    "Scan": "control flow: the subgraphs are not mapped",
}


def no_work_reason(op: str) -> str:
    """``pooling: no multiply-accumulate loop nest, no systolic work`` for an op of
    :data:`NO_WORK`."""
    cat = NO_WORK[op]
    if op == "BatchNormalization":
        return f"{cat}: folds into the preceding convolution at inference; no systolic work"
    return f"{cat}: no multiply-accumulate loop nest, no systolic work"


def unsupported_reason(op: str, domain: str) -> str:
    """Why ``op`` (of ``domain``, empty for the default one) is not mapped."""
    if op in UNSUPPORTED:
        return UNSUPPORTED[op]
    where = f" of domain {domain}" if domain and domain != "ai.onnx" else ""
    return f"operator {op}{where} is not supported: odyssey has no kernel for it"
