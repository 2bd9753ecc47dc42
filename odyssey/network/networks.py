"""Network workloads: the layers of a network as problem sizes of the project's kernels.

A network file (JSON, ``format: odyssey-network/1``, ``docs/networks.md``; the bundled ones
live in ``odyssey/network/tables/``) lists each layer with its ``kind`` and ``sizes``:

* ``conv`` (a standard convolution, ``P x Q > 1``) and ``pointwise`` (``P = Q = 1``) layers
  are problem sizes of ``kernels/cnn.c``: ``O`` output channels, ``I`` input channels,
  ``H x W`` output rows x columns, ``P x Q`` kernel; ``2 * O*I*H*W*P*Q`` operations;
* ``depthwise`` layers are problem sizes of ``kernels/dwconv.c``: ``C`` channels, ``H``,
  ``W``, ``P``, ``Q``; ``2 * C*H*W*P*Q`` operations;
* ``matmul`` layers (fully connected layers, projections, attention) are problem sizes of
  ``kernels/mm.c``: ``C[I][J] = A[I][K] * B[K][J]``; ``2 * I*J*K`` operations.

A layer's ``batch`` (default 1) counts independent problems of its sizes run one after
another on the array (the heads of an attention, the groups of a grouped convolution, a
batch dimension): its operations and latency are ``batch`` times one problem's; it is
tuned once per shape.

Strides: a stride-``S`` conv, pointwise or depthwise layer is tuned with the kernel
``<stem>_sS.c`` next to its stride-1 kernel when there is one (bundled: ``cnn_s2.c`` and
``dwconv_s2.c``, reading the input at ``2*h + p``), so its input traffic, buffers and
generated design are those of the strided loop nest (:func:`kernel_for`). Without such a
kernel (``S`` other than 2, or your own ``--kernel`` without an ``_s2`` sibling) the layer
is modelled as stride 1 over its output size, as the original Odyssey release does: exact
operation count, underestimated input traffic and buffers, with a note.

Layers of the published network that are not mapped (pooling, normalization, element-wise
operations) are listed in :attr:`Network.unmapped` with the reason (and, for a network
imported from ONNX, every node of the graph in :attr:`Network.nodes`), and
entries of the original release's table that the published network does not have are
kept in :attr:`Network.removed`; nothing is dropped silently. Files are validated before
any object is built; errors name the file, the key and the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast, get_args

from odyssey.errors import NetworkError

LayerKind = Literal["conv", "depthwise", "pointwise", "matmul"]
KernelName = Literal["cnn", "dwconv", "mm"]
Outcome = Literal["layer", "fused", "no systolic work", "not supported"]
#: what identical layer shapes share: ``(kind, sizes, stride)``
ShapeKey = tuple[str, tuple[tuple[str, int], ...], int]
Origin = Literal["original", "corrected", "added"]

LAYER_KINDS: tuple[str, ...] = get_args(LayerKind)
ORIGINS: tuple[str, ...] = get_args(Origin)
FORMAT = "odyssey-network/1"

#: size parameters of each kernel, in the order of its ``#define``s
KERNEL_SIZES: dict[KernelName, tuple[str, ...]] = {
    "cnn": ("O", "I", "H", "W", "P", "Q"),
    "dwconv": ("C", "H", "W", "P", "Q"),
    "mm": ("I", "J", "K"),
}
#: the file each kind's kernel defaults to, next to the conv kernel (``--kernel``)
DEFAULT_KERNEL_FILES: dict[KernelName, str] = {"cnn": "cnn.c", "dwconv": "dwconv.c", "mm": "mm.c"}
OUTCOMES: tuple[str, ...] = get_args(Outcome)
#: the table columns of the original Odyssey release (``original`` entries)
ORIGINAL_PARAMS = ("i", "o", "r", "c", "p", "q")

_BUNDLED = "tables"


def _kernel_of(kind: LayerKind) -> KernelName:
    return "dwconv" if kind == "depthwise" else "mm" if kind == "matmul" else "cnn"


def kernel_for(kind: str, kernel: str | Path, *, dw_kernel: str | Path | None = None,
               mm_kernel: str | Path | None = None, stride: int = 1) -> Path:
    """The kernel file of a layer ``kind``: ``kernel`` for conv and pointwise layers,
    ``dw_kernel`` for depthwise and ``mm_kernel`` for matmul layers, each defaulting to the
    bundled file name (``dwconv.c``, ``mm.c``) next to ``kernel``; for a ``stride`` S > 1,
    ``<stem>_sS.c`` next to that file if it exists (``cnn_s2.c``), else the file itself
    (see :func:`models_stride`)."""
    if kind == "depthwise":
        path = Path(dw_kernel) if dw_kernel is not None else Path(kernel).with_name("dwconv.c")
    elif kind == "matmul":
        return Path(mm_kernel) if mm_kernel is not None else Path(kernel).with_name("mm.c")
    else:
        path = Path(kernel)
    strided = path.with_name(f"{path.stem}_s{stride}{path.suffix}")
    return strided if stride > 1 and strided.is_file() else path


def models_stride(path: str | Path, stride: int) -> bool:
    """Whether the kernel ``path`` that :func:`kernel_for` chose models ``stride`` (stride 1,
    or a ``_sS`` kernel); if not, the layer is tuned as stride 1 over its output size."""
    return stride == 1 or Path(path).stem.endswith(f"_s{stride}")


def stride_note(path: str | Path, stride: int) -> str:
    """The note of a strided layer tuned with a stride-1 kernel (empty when ``path`` models
    its stride)."""
    if models_stride(path, stride):
        return ""
    p = Path(path)
    return (f"stride {stride} modelled as stride 1 over the output size (exact operations, "
            f"underestimated input traffic and buffers): no {p.stem}_s{stride}{p.suffix} next "
            f"to {p}")


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer as the problem sizes of its kernel.

    ``sizes`` holds ``(name, value)`` pairs in the kernel's ``#define`` order:
    ``O, I, H, W, P, Q`` for ``conv``/``pointwise`` (``kernels/cnn.c``), ``C, H, W, P, Q``
    for ``depthwise`` (``kernels/dwconv.c``), ``I, J, K`` for ``matmul`` (``kernels/mm.c``);
    ``H x W`` is the output size. ``batch`` independent problems of these sizes run one
    after another. ``stride``, ``dilation`` and ``pads`` (``top, left, bottom, right``, None
    when not recorded) are the network's; a stride is modelled when its layer's kernel has a
    strided version (:func:`kernel_for`: ``cnn_s2.c``, ``dwconv_s2.c``), else the layer is
    tuned as stride 1 over its output size.
    ``origin`` says whether the shape is the original release's (``original``), fixed
    against the published network (``corrected``, the release's values in ``original``) or
    missing there (``added``).
    """

    name: str
    kind: LayerKind
    sizes: tuple[tuple[str, int], ...]
    stride: int = 1
    tags: tuple[str, ...] = ()
    origin: Origin = "original"
    original: tuple[tuple[str, int], ...] | None = None
    batch: int = 1
    dilation: int = 1
    pads: tuple[int, int, int, int] | None = None

    def __post_init__(self) -> None:
        want = KERNEL_SIZES[self.kernel]
        if tuple(n for n, _ in self.sizes) != want:
            raise NetworkError(f"layer {self.name}: sizes must be {', '.join(want)} in this order "
                               f"for a {self.kind} layer, got {', '.join(n for n, _ in self.sizes)}")
        if any(v < 1 for _, v in self.sizes) or min(self.stride, self.batch, self.dilation) < 1:
            raise NetworkError(f"layer {self.name}: sizes, stride, batch and dilation must be "
                               f">= 1, got {self.dims} stride {self.stride} batch {self.batch} "
                               f"dilation {self.dilation}")
        if self.pads is not None and (len(self.pads) != 4 or min(self.pads) < 0):
            raise NetworkError(f"layer {self.name}: pads must be 4 integers >= 0 (top, left, "
                               f"bottom, right), got {list(self.pads)}")
        if self.kind == "matmul" and (self.stride, self.dilation, self.pads) != (1, 1, None):
            raise NetworkError(f"layer {self.name}: a matmul layer has no stride, dilation or pads")
        pointwise = self.kernel == "cnn" and self.size("P") == 1 and self.size("Q") == 1
        if self.kernel == "cnn" and pointwise != (self.kind == "pointwise"):
            raise NetworkError(
                f"layer {self.name}: kind `{self.kind}` does not match its {self.size('P')}x"
                f"{self.size('Q')} kernel (`pointwise` is exactly 1x1, `conv` anything larger)")

    @property
    def kernel(self) -> KernelName:
        """``cnn`` (``kernels/cnn.c``), ``dwconv`` (``kernels/dwconv.c``) or ``mm``
        (``kernels/mm.c``)."""
        return _kernel_of(self.kind)

    @property
    def dims(self) -> dict[str, int]:
        return dict(self.sizes)

    def size(self, name: str) -> int:
        for n, v in self.sizes:
            if n == name:
                return v
        raise KeyError(name)

    def defines(self) -> dict[str, str]:
        """The ``-D NAME=VALUE`` overrides of the layer's kernel, e.g. ``{"O": "64", ...}``."""
        return {n: str(v) for n, v in self.sizes}

    @property
    def unit_macs(self) -> int:
        """Multiply-accumulates of one problem: the product of the sizes (``O*I*H*W*P*Q``,
        ``C*H*W*P*Q`` or ``I*J*K``)."""
        out = 1
        for _, v in self.sizes:
            out *= v
        return out

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the layer, ``batch * unit_macs``."""
        return self.batch * self.unit_macs

    @property
    def unit_ops(self) -> int:
        """Arithmetic operations of one problem, ``2 * unit_macs``."""
        return 2 * self.unit_macs

    @property
    def ops(self) -> int:
        """Arithmetic operations, ``2 * macs`` (one multiply and one add per MAC)."""
        return 2 * self.macs

    @property
    def shape_key(self) -> ShapeKey:
        """What identical shapes share: ``(kind, sizes, stride)`` (not the batch, dilation or
        pads)."""
        return (self.kind, self.sizes, self.stride)

    def describe(self) -> str:
        """``I3 O64 224x224 k3x3`` (``cnn``), ``C96 56x56 k3x3`` (``dwconv``) or
        ``128x768 * 768x2304`` (``mm``: ``IxK * KxJ``), plus ``/2`` for stride 2 and ``x12``
        for a batch of 12."""
        d = self.dims
        batch = f" x{self.batch}" if self.batch != 1 else ""
        if self.kernel == "mm":
            return f"{d['I']}x{d['K']} * {d['K']}x{d['J']}{batch}"
        chans = f"C{d['C']}" if self.kernel == "dwconv" else f"I{d['I']} O{d['O']}"
        stride = f" /{self.stride}" if self.stride != 1 else ""
        dil = f" d{self.dilation}" if self.dilation != 1 else ""
        return f"{chans} {d['H']}x{d['W']} k{d['P']}x{d['Q']}{stride}{dil}{batch}"


@dataclass(frozen=True, slots=True)
class Unmapped:
    """Layers of the published network that are not tuned (``count`` of them), and why."""

    name: str
    op: str
    count: int
    macs: int  # multiply-accumulates of all ``count`` layers (0 for pooling, additions, ...)
    reason: str


@dataclass(frozen=True, slots=True)
class NodeAccount:
    """What one node of an imported graph became: ``layer`` (the names of its ``layers``),
    ``fused`` into the layer in ``layers`` (a batch normalization folded into the
    convolution before it), ``no systolic work`` (elementwise, pooling, normalization,
    softmax, data movement) or
    ``not supported`` (compute odyssey has no kernel for), with the ``reason``; ``warning``
    when the mapping is approximate (a quantized node tuned in fp32)."""

    name: str
    op: str
    outcome: Outcome
    layers: tuple[str, ...] = ()
    reason: str = ""
    warning: str = ""


@dataclass(frozen=True, slots=True)
class Removed:
    """An entry of the original release's table that the published network does not have."""

    name: str
    original: tuple[tuple[str, int], ...]
    reason: str


@dataclass(frozen=True, slots=True)
class Network:
    """A network's mapped layers (in network order), its provenance and what is left out;
    ``nodes``: every node of the graph it was imported from and what it became (empty for
    a hand-written table)."""

    name: str
    title: str
    layers: tuple[Layer, ...]
    source: str
    note: str = ""
    unmapped: tuple[Unmapped, ...] = ()
    removed: tuple[Removed, ...] = ()
    path: str = ""
    nodes: tuple[NodeAccount, ...] = ()

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)

    def count(self, kind: LayerKind) -> int:
        return sum(1 for layer in self.layers if layer.kind == kind)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the mapped layers."""
        return sum(layer.macs for layer in self.layers)

    def kinds(self) -> dict[str, int]:
        """Layers per kind, in order of first appearance: ``{"conv": 13, "matmul": 3}``."""
        out: dict[str, int] = {}
        for layer in self.layers:
            out[layer.kind] = out.get(layer.kind, 0) + 1
        return out


@dataclass(frozen=True, slots=True)
class ShapeGroup:
    """Layers of identical ``(kind, sizes, stride)``: tuned once, the result shared."""

    kind: LayerKind
    sizes: tuple[tuple[str, int], ...]
    layers: tuple[Layer, ...]
    stride: int = 1

    @property
    def first(self) -> Layer:
        return self.layers[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(layer.name for layer in self.layers)


def unique_shapes(network: Network) -> tuple[ShapeGroup, ...]:
    """Group the layers by ``(kind, sizes, stride)``, groups in order of first appearance."""
    groups: dict[ShapeKey, list[Layer]] = {}
    for layer in network.layers:
        groups.setdefault(layer.shape_key, []).append(layer)
    return tuple(ShapeGroup(ls[0].kind, ls[0].sizes, tuple(ls), ls[0].stride)
                 for ls in groups.values())


def list_networks() -> tuple[str, ...]:
    """Names of the bundled networks (``vgg16``, ``resnet50``, ``mobilenetv2``, ...)."""
    folder = resources.files("odyssey.network").joinpath(_BUNDLED)
    return tuple(sorted(p.name[: -len(".json")] for p in folder.iterdir()
                        if p.name.endswith(".json")))


def load_network(name_or_path: str | Path) -> Network:
    """A bundled network by name (see :func:`list_networks`) or a network JSON file.

    Raises NetworkError for an unknown name, an unreadable file, invalid JSON, or a file
    that does not match the format (naming the file, the key and the value).
    """
    text_name = str(name_or_path)
    if isinstance(name_or_path, str) and text_name in list_networks():
        res = resources.files("odyssey.network").joinpath(_BUNDLED, f"{text_name}.json")
        return parse_network(res.read_text(), source=f"odyssey/network/{_BUNDLED}/{text_name}.json")
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        raise NetworkError(f"unknown network `{text_name}`; bundled networks: "
                           f"{', '.join(list_networks())} (or give the path of a network JSON file)")
    try:
        text = path.read_text()
    except OSError as exc:
        raise NetworkError(f"{path}: cannot read the network file: {exc.strerror}; bundled "
                           f"networks: {', '.join(list_networks())} (give the name alone)") from None
    return parse_network(text, source=str(path))


def parse_network(text: str, *, source: str) -> Network:
    """Validate and build a network from JSON ``text``; ``source`` names it in errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NetworkError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None
    c = _Checker(source)
    c.keys(data, "", required=("format", "name", "title", "source", "layers"),
           optional=("note", "unmapped", "removed", "nodes"))
    if data["format"] != FORMAT:
        raise NetworkError(f"{source}: format must be {FORMAT!r}, got {data['format']!r}")
    layers = tuple(_layer(c, item, f"layers[{k}]")
                   for k, item in enumerate(c.items(data["layers"], "layers", min_len=1)))
    seen: set[str] = set()
    for k, layer in enumerate(layers):
        if layer.name in seen:
            raise NetworkError(f"{source}: layers[{k}].name {layer.name!r} repeats an earlier "
                               "layer's name; layer names must be unique")
        seen.add(layer.name)
    unmapped = tuple(_unmapped(c, item, f"unmapped[{k}]")
                     for k, item in enumerate(c.items(data.get("unmapped", []), "unmapped")))
    removed = tuple(_removed(c, item, f"removed[{k}]")
                    for k, item in enumerate(c.items(data.get("removed", []), "removed")))
    nodes = tuple(_node(c, item, f"nodes[{k}]")
                  for k, item in enumerate(c.items(data.get("nodes", []), "nodes")))
    return Network(
        name=c.text(data["name"], "name"), title=c.text(data["title"], "title"), layers=layers,
        source=c.text(data["source"], "source"), note=c.text(data.get("note", ""), "note", empty=True),
        unmapped=unmapped, removed=removed, path=source, nodes=nodes,
    )


def network_document(network: Network) -> dict[str, Any]:
    """``network`` as an ``odyssey-network/1`` document (:func:`parse_network` reads it
    back to an equal network, ``path`` aside); optional keys only where they differ from
    their defaults."""
    def layer(x: Layer) -> dict[str, Any]:
        out: dict[str, Any] = {"name": x.name, "kind": x.kind, "sizes": x.dims}
        if x.kind != "matmul":
            out["stride"] = x.stride
        for key, value, default in (("batch", x.batch, 1), ("dilation", x.dilation, 1),
                                    ("pads", list(x.pads) if x.pads else None, None),
                                    ("tags", list(x.tags), []), ("origin", x.origin, "original"),
                                    ("original", dict(x.original) if x.original else None, None)):
            if value != default:
                out[key] = value
        return out

    doc: dict[str, Any] = {"format": FORMAT, "name": network.name, "title": network.title,
                           "source": network.source}
    if network.note:
        doc["note"] = network.note
    doc["layers"] = [layer(x) for x in network.layers]
    doc["unmapped"] = [{"name": u.name, "op": u.op, "count": u.count, "macs": u.macs,
                        "reason": u.reason} for u in network.unmapped]
    doc["removed"] = [{"name": r.name, "original": dict(r.original), "reason": r.reason}
                      for r in network.removed]
    if network.nodes:
        doc["nodes"] = [{"name": n.name, "op": n.op, "outcome": n.outcome, "layers": list(n.layers),
                         "reason": n.reason, "warning": n.warning} for n in network.nodes]
    return doc


def _layer(c: _Checker, item: Any, path: str) -> Layer:
    c.keys(item, path, required=("name", "kind", "sizes"),
           optional=("stride", "tags", "origin", "original", "batch", "dilation", "pads"))
    kind = cast(LayerKind, c.choice(item["kind"], f"{path}.kind", LAYER_KINDS))
    sizes = c.ints(item["sizes"], f"{path}.sizes", KERNEL_SIZES[_kernel_of(kind)])
    origin = cast(Origin, c.choice(item.get("origin", "original"), f"{path}.origin", ORIGINS))
    original = None
    if "original" in item:
        original = c.ints(item["original"], f"{path}.original", ORIGINAL_PARAMS)
    if (origin == "corrected") != (original is not None):
        raise NetworkError(f"{c.source}: {path}: a `corrected` layer records the original table's "
                           "values in `original`, and only a corrected layer does")
    tags = tuple(c.text(t, f"{path}.tags[{k}]")
                 for k, t in enumerate(c.items(item.get("tags", []), f"{path}.tags")))
    name = c.text(item["name"], f"{path}.name")
    stride = c.integer(item.get("stride", 1), f"{path}.stride")
    batch = c.integer(item.get("batch", 1), f"{path}.batch")
    dilation = c.integer(item.get("dilation", 1), f"{path}.dilation")
    pads = None
    if "pads" in item:
        got = c.items(item["pads"], f"{path}.pads", min_len=4)
        if len(got) != 4:
            raise c.fail(f"{path}.pads", "a list of 4 integers >= 0 (top, left, bottom, right)", got)
        t, l_, b, r = (c.integer(v, f"{path}.pads[{k}]", minimum=0) for k, v in enumerate(got))
        pads = (t, l_, b, r)
    try:
        return Layer(name=name, kind=kind, sizes=sizes, stride=stride, tags=tags, origin=origin,
                     original=original, batch=batch, dilation=dilation, pads=pads)
    except NetworkError as exc:
        raise NetworkError(f"{c.source}: {path}: {exc}") from None


def _unmapped(c: _Checker, item: Any, path: str) -> Unmapped:
    c.keys(item, path, required=("name", "op", "count", "macs", "reason"))
    return Unmapped(c.text(item["name"], f"{path}.name"), c.text(item["op"], f"{path}.op"),
                    c.integer(item["count"], f"{path}.count"),
                    c.integer(item["macs"], f"{path}.macs", minimum=0),
                    c.text(item["reason"], f"{path}.reason"))


def _node(c: _Checker, item: Any, path: str) -> NodeAccount:
    c.keys(item, path, required=("name", "op", "outcome"),
           optional=("layers", "reason", "warning"))
    outcome = cast(Outcome, c.choice(item["outcome"], f"{path}.outcome", OUTCOMES))
    layers = tuple(c.text(x, f"{path}.layers[{k}]")
                   for k, x in enumerate(c.items(item.get("layers", []), f"{path}.layers")))
    return NodeAccount(c.text(item["name"], f"{path}.name", empty=True),
                       c.text(item["op"], f"{path}.op"), outcome, layers,
                       c.text(item.get("reason", ""), f"{path}.reason", empty=True),
                       c.text(item.get("warning", ""), f"{path}.warning", empty=True))


def _removed(c: _Checker, item: Any, path: str) -> Removed:
    c.keys(item, path, required=("name", "original", "reason"))
    return Removed(c.text(item["name"], f"{path}.name"),
                   c.ints(item["original"], f"{path}.original", ORIGINAL_PARAMS),
                   c.text(item["reason"], f"{path}.reason"))


@dataclass(frozen=True, slots=True)
class _Checker:
    """Checks of JSON values whose errors name the file, the key path and the value."""

    source: str

    def fail(self, path: str, want: str, value: Any) -> NetworkError:
        shown = type(value).__name__ if isinstance(value, dict | list) else json.dumps(value)
        return NetworkError(f"{self.source}: {path or 'the top level'} must be {want}, got {shown}")

    def keys(self, value: Any, path: str, *, required: tuple[str, ...],
             optional: tuple[str, ...] = ()) -> None:
        if not isinstance(value, Mapping):
            raise self.fail(path, "an object", value)
        where = f"{path}." if path else ""
        for key in value:
            if key not in required and key not in optional:
                raise NetworkError(
                    f"{self.source}: unknown key '{where}{key}'; the keys allowed here are "
                    f"{', '.join(sorted(required + optional))} (remove it or fix its spelling)")
        for key in required:
            if key not in value:
                raise NetworkError(f"{self.source}: missing required key '{where}{key}'")

    def items(self, value: Any, path: str, *, min_len: int = 0) -> list[Any]:
        if not isinstance(value, list) or len(value) < min_len:
            raise self.fail(path, f"a list of at least {min_len} item(s)", value)
        return value

    def text(self, value: Any, path: str, *, empty: bool = False) -> str:
        if not isinstance(value, str) or (not value and not empty):
            raise self.fail(path, "a non-empty string", value)
        return value

    def integer(self, value: Any, path: str, *, minimum: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(path, "a positive integer" if minimum == 1 else
                            f"an integer >= {minimum}", value)
        return value

    def choice(self, value: Any, path: str, options: tuple[str, ...]) -> str:
        if value not in options:
            raise self.fail(path, f"one of {', '.join(options)}", value)
        return str(value)

    def ints(self, value: Any, path: str, names: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
        """An object with exactly the keys ``names``, each a positive integer, in that order."""
        self.keys(value, path, required=names)
        return tuple((n, self.integer(value[n], f"{path}.{n}")) for n in names)
