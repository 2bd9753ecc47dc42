"""Transfer across networks: the shapes a transfer run tuned, kept as data for later runs.

A network's first shape of each kind has no tuned neighbour of its own; with a history (the
shapes earlier runs tuned, of any network), it takes its seeds and predicted design order from
the nearest of those as well (:func:`~odyssey.network.transfer.tune_layers`' ``history``).

:func:`history_record` turns a run into a JSON-ready record (format
``odyssey-transfer-history/1``: per shape its kind, sizes, layer names and every design's best
throughput, best tilings and loop extents), :func:`merge_history` adds a run to a record (a
shape tuned again replaces its older entry), and :func:`history_sources` reads a record back as
source shapes. Reading and writing the file is the caller's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odyssey.errors import NetworkError
from odyssey.network.networks import Layer, ShapeGroup
from odyssey.network.transfer import DesignRun, ShapeRun, TransferRun

FORMAT = "odyssey-transfer-history/1"


def history_record(run: TransferRun) -> dict[str, Any]:
    """The shapes of ``run`` as a history record."""
    return merge_history(None, run)


def merge_history(old: Mapping[str, Any] | None, run: TransferRun) -> dict[str, Any]:
    """``old`` (a history record, or None) with the shapes of ``run`` added; a shape of the
    same kind, sizes and stride as an older entry replaces it (an entry without a stride,
    written before strides were modelled, has stride 1)."""
    shapes: dict[tuple[str, tuple[tuple[str, int], ...], int], dict[str, Any]] = {}
    for entry in (old or {}).get("shapes", []):
        shapes[(entry["kind"], tuple((k, int(v)) for k, v in entry["sizes"].items()),
                int(entry.get("stride", 1)))] = entry
    for s in run.shapes:
        shapes[(s.group.kind, s.group.sizes, s.group.stride)] = {
            "network": run.network.name, "layers": list(s.group.names), "kind": s.group.kind,
            "sizes": dict(s.group.sizes), "stride": s.group.stride, "method": run.method,
            "samples": run.samples,
            "designs": [{"design": d.design, "best_gops": d.best_gops,
                         "top_tilings": [dict(t) for t in d.top_tilings],
                         "top_gops": list(d.top_gops), "extents": dict(d.extents)}
                        for d in s.designs]}
    return {"format": FORMAT, "shapes": list(shapes.values())}


def history_sources(doc: Any, *, origin: str) -> tuple[ShapeRun, ...]:
    """The shapes of a history record as source shapes (indices -1, -2, ...: they are not
    shapes of the network being tuned; their layers are named ``network:layer``). Raises
    :class:`NetworkError` naming ``origin`` if ``doc`` is not such a record."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise NetworkError(f"{origin}: not a transfer history (expected \"format\": "
                           f"\"{FORMAT}\"); write one with `odyssey network NET --transfer "
                           "--history FILE`")
    out: list[ShapeRun] = []
    for k, entry in enumerate(doc.get("shapes", [])):
        try:
            sizes = tuple((str(n), int(v)) for n, v in entry["sizes"].items())
            stride = int(entry.get("stride", 1))
            layers = tuple(Layer(f"{entry['network']}:{name}", entry["kind"], sizes,
                                 stride=stride) for name in entry["layers"])
            designs = tuple(_design(d) for d in entry["designs"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise NetworkError(f"{origin}: shape {k + 1} of the history is malformed "
                               f"({exc!r}); write the file again with --history") from exc
        out.append(ShapeRun(-1 - k, ShapeGroup(entry["kind"], sizes, layers, stride), designs,
                            ()))
    return tuple(out)


def _design(d: Mapping[str, Any]) -> DesignRun:
    tilings = tuple(tuple((str(n), int(v)) for n, v in t.items()) for t in d["top_tilings"])
    return DesignRun(str(d["design"]), None if d["best_gops"] is None else float(d["best_gops"]),
                     tilings, tuple(float(g) for g in d["top_gops"]),
                     tuple((str(n), int(v)) for n, v in d["extents"].items()), (), 0, 0.0, 0)
