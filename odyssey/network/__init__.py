"""odyssey.network: tuning whole networks, layer by layer.

* :mod:`.networks`: network workloads (VGG16, ResNet-50, MobileNetV2, BERT-base, ViT-B/16
  bundled as JSON in ``tables/``) as problem sizes of ``kernels/cnn.c``,
  ``kernels/dwconv.c`` and ``kernels/mm.c``: :func:`load_network`, :func:`unique_shapes`,
  :func:`network_document` (the ``odyssey-network/1`` document of a network);
* :mod:`.onnx_import`: an ONNX model as a network (:func:`~.onnx_import.import_onnx`; the
  ``onnx`` package is imported only there), :mod:`.onnx_ops` what each operator becomes;
* :mod:`.network_tuning`: tune every layer of a network (identical shapes once):
  :func:`tune_network` returns a :class:`NetworkResult`; :func:`network_record` its JSON;
* :mod:`.shared_array`: one fixed array for every layer of a network;
* :mod:`.transfer`, :mod:`.transfer_race`, :mod:`.transfer_history`, :mod:`.transfer_report`:
  start each layer's search from similar layers, race the designs, keep a history across runs.
"""

from __future__ import annotations

from odyssey.network.network_tuning import (
    DesignOutcome,
    LayerResult,
    NetworkProgress,
    NetworkResult,
    ShapeResult,
    dsp_efficiency,
    mac_lanes,
    network_record,
    tune_network,
)
from odyssey.network.networks import (
    KERNEL_SIZES,
    LAYER_KINDS,
    Layer,
    LayerKind,
    Network,
    NodeAccount,
    Removed,
    ShapeGroup,
    Unmapped,
    kernel_for,
    list_networks,
    load_network,
    network_document,
    parse_network,
    unique_shapes,
)

__all__ = [
    "KERNEL_SIZES", "LAYER_KINDS", "DesignOutcome", "Layer", "LayerKind", "LayerResult",
    "Network", "NetworkProgress", "NetworkResult", "NodeAccount", "Removed", "ShapeGroup",
    "ShapeResult", "Unmapped", "dsp_efficiency", "kernel_for", "list_networks", "load_network",
    "mac_lanes", "network_document", "network_record", "parse_network", "tune_network",
    "unique_shapes",
]
