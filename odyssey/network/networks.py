"""CNN workloads: the convolution layers of a network as problem sizes of the project's kernels.

A network file (JSON, ``format: odyssey-network/1``; the bundled ones live in
``odyssey/network/networks/``) lists each layer with its ``kind`` and ``sizes``:

* ``conv`` (a standard convolution, ``P x Q > 1``) and ``pointwise`` (``P = Q = 1``) layers
  are problem sizes of ``kernels/cnn.c``: ``O`` output channels, ``I`` input channels,
  ``H x W`` output rows x columns, ``P x Q`` kernel; ``2 * O*I*H*W*P*Q`` operations;
* ``depthwise`` layers are problem sizes of ``kernels/dwconv.c``: ``C`` channels, ``H``,
  ``W``, ``P``, ``Q``; ``2 * C*H*W*P*Q`` operations.

Both kernels have stride 1 (the paper's Listing 1). A layer of stride 2 records
``stride = 2`` but is modelled as stride 1 over its *output* size, as the original
Odyssey release does: its multiply-accumulate count (so its GOP/s) is exact, while the
input tile the kernel reads, ``(H+P-1) x (W+Q-1)`` instead of ``(2H+P-2) x (2W+Q-2)``,
underestimates the input traffic and buffers of strided layers.

Layers of the published network that are not mapped (pooling, fully connected layers,
element-wise operations) are listed in :attr:`Network.unmapped` with the reason, and
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

LayerKind = Literal["conv", "depthwise", "pointwise"]
KernelName = Literal["cnn", "dwconv"]
Origin = Literal["original", "corrected", "added"]

LAYER_KINDS: tuple[str, ...] = get_args(LayerKind)
ORIGINS: tuple[str, ...] = get_args(Origin)
FORMAT = "odyssey-network/1"

#: size parameters of each kernel, in the order of its ``#define``s
KERNEL_SIZES: dict[KernelName, tuple[str, ...]] = {
    "cnn": ("O", "I", "H", "W", "P", "Q"),
    "dwconv": ("C", "H", "W", "P", "Q"),
}
#: the table columns of the original Odyssey release (``original`` entries)
ORIGINAL_PARAMS = ("i", "o", "r", "c", "p", "q")

_BUNDLED = "tables"


def _kernel_of(kind: LayerKind) -> KernelName:
    return "dwconv" if kind == "depthwise" else "cnn"


@dataclass(frozen=True, slots=True)
class Layer:
    """One convolution layer as the problem sizes of its kernel.

    ``sizes`` holds ``(name, value)`` pairs in the kernel's ``#define`` order:
    ``O, I, H, W, P, Q`` for ``conv``/``pointwise`` (``kernels/cnn.c``), ``C, H, W, P, Q``
    for ``depthwise`` (``kernels/dwconv.c``); ``H x W`` is the output size. ``stride`` is
    the published stride; the kernels model every layer as stride 1 over the output size
    (exact operation count, underestimated input traffic for stride 2). ``origin`` says
    whether the shape is the original release's (``original``), fixed against the published
    network (``corrected``, the release's values in ``original``) or missing there
    (``added``).
    """

    name: str
    kind: LayerKind
    sizes: tuple[tuple[str, int], ...]
    stride: int = 1
    tags: tuple[str, ...] = ()
    origin: Origin = "original"
    original: tuple[tuple[str, int], ...] | None = None

    def __post_init__(self) -> None:
        want = KERNEL_SIZES[self.kernel]
        if tuple(n for n, _ in self.sizes) != want:
            raise NetworkError(f"layer {self.name}: sizes must be {', '.join(want)} in this order "
                               f"for a {self.kind} layer, got {', '.join(n for n, _ in self.sizes)}")
        if any(v < 1 for _, v in self.sizes) or self.stride < 1:
            raise NetworkError(f"layer {self.name}: sizes and stride must be >= 1, got "
                               f"{self.dims} stride {self.stride}")
        pointwise = self.size("P") == 1 and self.size("Q") == 1
        if self.kind != "depthwise" and pointwise != (self.kind == "pointwise"):
            raise NetworkError(
                f"layer {self.name}: kind `{self.kind}` does not match its {self.size('P')}x"
                f"{self.size('Q')} kernel (`pointwise` is exactly 1x1, `conv` anything larger)")

    @property
    def kernel(self) -> KernelName:
        """``cnn`` (``kernels/cnn.c``) or ``dwconv`` (``kernels/dwconv.c``)."""
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
    def macs(self) -> int:
        """Multiply-accumulates: the product of the sizes (``O*I*H*W*P*Q`` or ``C*H*W*P*Q``)."""
        out = 1
        for _, v in self.sizes:
            out *= v
        return out

    @property
    def ops(self) -> int:
        """Arithmetic operations, ``2 * macs`` (one multiply and one add per MAC)."""
        return 2 * self.macs

    @property
    def shape_key(self) -> tuple[str, tuple[tuple[str, int], ...]]:
        """What identical shapes share: ``(kind, sizes)`` (the stride is not modelled)."""
        return (self.kind, self.sizes)

    def describe(self) -> str:
        """``I3 O64 224x224 k3x3`` (``cnn``) or ``C96 56x56 k3x3`` (``dwconv``), plus ``/2``
        for stride 2."""
        d = self.dims
        chans = f"C{d['C']}" if self.kernel == "dwconv" else f"I{d['I']} O{d['O']}"
        stride = f" /{self.stride}" if self.stride != 1 else ""
        return f"{chans} {d['H']}x{d['W']} k{d['P']}x{d['Q']}{stride}"


@dataclass(frozen=True, slots=True)
class Unmapped:
    """Layers of the published network that are not tuned (``count`` of them), and why."""

    name: str
    op: str
    count: int
    macs: int  # multiply-accumulates of all ``count`` layers (0 for pooling, additions, ...)
    reason: str


@dataclass(frozen=True, slots=True)
class Removed:
    """An entry of the original release's table that the published network does not have."""

    name: str
    original: tuple[tuple[str, int], ...]
    reason: str


@dataclass(frozen=True, slots=True)
class Network:
    """A network's mapped layers (in network order), its provenance and what is left out."""

    name: str
    title: str
    layers: tuple[Layer, ...]
    source: str
    note: str = ""
    unmapped: tuple[Unmapped, ...] = ()
    removed: tuple[Removed, ...] = ()
    path: str = ""

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


@dataclass(frozen=True, slots=True)
class ShapeGroup:
    """Layers of identical ``(kind, sizes)``: tuned once, the result shared."""

    kind: LayerKind
    sizes: tuple[tuple[str, int], ...]
    layers: tuple[Layer, ...]

    @property
    def first(self) -> Layer:
        return self.layers[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(layer.name for layer in self.layers)


def unique_shapes(network: Network) -> tuple[ShapeGroup, ...]:
    """Group the layers by ``(kind, sizes)``, groups in order of first appearance."""
    groups: dict[tuple[str, tuple[tuple[str, int], ...]], list[Layer]] = {}
    for layer in network.layers:
        groups.setdefault(layer.shape_key, []).append(layer)
    return tuple(ShapeGroup(ls[0].kind, ls[0].sizes, tuple(ls)) for ls in groups.values())


def list_networks() -> tuple[str, ...]:
    """Names of the bundled networks (``vgg16``, ``resnet50``, ``mobilenetv2``)."""
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
           optional=("note", "unmapped", "removed"))
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
    return Network(
        name=c.text(data["name"], "name"), title=c.text(data["title"], "title"), layers=layers,
        source=c.text(data["source"], "source"), note=c.text(data.get("note", ""), "note", empty=True),
        unmapped=unmapped, removed=removed, path=source,
    )


def _layer(c: _Checker, item: Any, path: str) -> Layer:
    c.keys(item, path, required=("name", "kind", "sizes"),
           optional=("stride", "tags", "origin", "original"))
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
    try:
        return Layer(name=name, kind=kind, sizes=sizes, stride=stride, tags=tags, origin=origin,
                     original=original)
    except NetworkError as exc:
        raise NetworkError(f"{c.source}: {path}: {exc}") from None


def _unmapped(c: _Checker, item: Any, path: str) -> Unmapped:
    c.keys(item, path, required=("name", "op", "count", "macs", "reason"))
    return Unmapped(c.text(item["name"], f"{path}.name"), c.text(item["op"], f"{path}.op"),
                    c.integer(item["count"], f"{path}.count"),
                    c.integer(item["macs"], f"{path}.macs", minimum=0),
                    c.text(item["reason"], f"{path}.reason"))


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
