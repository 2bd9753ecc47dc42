"""odyssey.model: latency, resource and traffic models derived from generated designs."""

from __future__ import annotations

from odyssey.model.build import VARIANTS, model_expressions, model_from_descriptor
from odyssey.model.design_model import DesignModel, Evaluation, ParamSpec
from odyssey.model.from_design import build_model, representative_tiling

__all__ = [
    "VARIANTS", "DesignModel", "Evaluation", "ParamSpec", "build_model", "model_expressions",
    "model_from_descriptor", "representative_tiling",
]
