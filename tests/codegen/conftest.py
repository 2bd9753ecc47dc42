from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from odyssey.codegen.csim import CsimResult, run_csim
from odyssey.codegen.generate import GeneratedDesign, generate
from odyssey.codegen.writer import write_design
from odyssey.frontend import load_scop
from odyssey.mapping.space import KernelSpace, analyse

ROOT = Path(__file__).resolve().parents[2]


def space_of(kernel: str, **defines: str) -> KernelSpace:
    return analyse(load_scop(ROOT / "kernels" / kernel, defines))


@pytest.fixture
def simulate(tmp_path: Path) -> Callable[..., tuple[GeneratedDesign, CsimResult]]:
    def run(kernel: str, design: str, tiling: dict[str, int], **defines: str) -> tuple[GeneratedDesign, CsimResult]:
        ks = space_of(kernel, **defines)
        gen = generate(ks, ks.design(design), tiling)
        out = write_design(gen, tmp_path / f"{design}")
        return gen, run_csim(out, timeout_s=120)

    return run
