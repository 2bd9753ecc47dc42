"""The DSP cut (:func:`odyssey.model.fabric.dsp_cut`): a lower bound of the DSP total at every
legal tiling, which the exact optimum's budget cuts boxes with, so a cut above the DSP would
drop feasible tilings from the proof."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from odyssey.expr import compile_vectorized
from odyssey.frontend import load_scop
from odyssey.mapping.space import KernelSpace, analyse
from odyssey.model import DesignModel, build_model
from odyssey.platforms import load_platform
from odyssey.tune.exact.optimum_boxes import _Space
from odyssey.tune.exact.optimum_budget import model_budgets
from tests.tune.test_optimum import _legal_tilings  # every legal tiling, one helper for both

ROOT = Path(__file__).resolve().parents[2]
MM = (("I", 10), ("J", 9), ("K", 6))
CNN = (("O", 4), ("I", 6), ("H", 4), ("W", 3), ("P", 3), ("Q", 3))
#: other kernels, at sizes small enough to enumerate: two multiplies per lane (MTTKRP), a
#: reduction along a chain of PEs with no accumulation in time (MV ``j-i.j``), depthwise
OTHERS = (("mv.c", (("N", 12), ("M", 10))), ("syrk.c", (("N", 8), ("K", 6))),
          ("mttkrp.c", (("I", 4), ("J", 6), ("K", 3), ("L", 5))), ("dwconv.c", (("C", 6), ("H", 5), ("W", 4), ("P", 3), ("Q", 3))))


@functools.cache
def _space(kernel: str, sizes: tuple[tuple[str, int], ...]) -> KernelSpace:
    return analyse(load_scop(str(ROOT / "kernels" / kernel), {k: str(v) for k, v in sizes}))


def _model(kernel: str, sizes: tuple[tuple[str, int], ...], design: str) -> DesignModel:
    ks = _space(kernel, sizes)
    return build_model(ks, ks.design(design), platform=load_platform("u250"))


def _values(model: DesignModel, tilings: dict[str, np.ndarray], *names: str) -> list[np.ndarray]:
    out = compile_vectorized({n: model.exprs[n] for n in names}, model.param_names)(tilings)
    n = len(next(iter(tilings.values())))
    return [np.broadcast_to(np.asarray(out[k], dtype=np.float64), (n,)) for k in names]


def _designs(kernel: str, sizes: tuple[tuple[str, int], ...]) -> list[str]:
    return [d.id for d in _space(kernel, sizes).designs]


@pytest.mark.parametrize(("kernel", "sizes", "design"),
                         [pytest.param(k, s, d, id=f"{k}-{d}") for k, s in (("mm.c", MM), ("cnn.c", CNN), *OTHERS)
                          for d in _designs(k, s) if not d.startswith("kl-")])
def test_the_cut_is_below_the_dsp_at_every_legal_tiling(kernel: str, sizes: tuple[tuple[str, int], ...],
                                                        design: str) -> None:
    """Property, on every legal tiling of MM 10x9x6, of a 4x6x4x3 CNN layer with a 3x3 kernel
    and of the other kernels above (sizes at which reduction tiles cover their loop, where a
    PE drops its accumulation): ``dsp_cut <= dsp``. (MTTKRP's ``kl-*`` designs reduce along
    both array dimensions, which the generator refuses.)"""
    model = _model(kernel, sizes, design)
    if "dsp_cut" not in model.exprs:
        pytest.skip("the DSP itself is the monomial")
    tilings = _legal_tilings(model)
    cut, dsp = _values(model, tilings, "dsp_cut", "dsp")
    assert (cut <= dsp).all()


@pytest.mark.parametrize(("design", "chain"), [("ik-ij.k", "T_i1/T_i2"), ("jk-ij.k", "T_j1/T_j2")])
def test_a_chain_whose_head_adds_nothing_closed_form(design: str, chain: str) -> None:
    """Closed form on MM 10x9x6: the partial sums flow along ``k``, and a chain's head drain
    adds nothing. Where one reduction tile covers ``K`` (``T_k1 = 6``) the PE has no
    accumulation, and where the drain words hold one element (``T_i2*T_j1`` odd) each drain
    adds one lane: the DSP is ``5*#PE*T_k2 - 2*q`` (``q`` the chains), below ``5*#PE*T_k2``.
    The cut is ``(5 - 2/K) * q * T_k1`` in the optimum's coordinates, a monomial it cuts with."""
    model = _model("mm.c", MM, design)
    space = _Space.of(model)
    exprs, _ = space.coords.rewrite({"dsp": model.exprs["dsp"]})
    (budget,) = model_budgets(model, space.coords, exprs)
    dims = space.coords.dims
    assert budget.resource == "dsp" and budget.coef == pytest.approx(5 - 2 / 6, rel=1e-12)
    assert budget.coef <= 5 - 2 / 6  # the subtrahend is rounded up
    assert sorted(dims[d] for d, _ in budget.powers) == sorted([chain, "T_k1"])
    assert all(k == 1 for _, k in budget.powers)
    t = _legal_tilings(model)
    cut, dsp, pe = _values(model, t, "dsp_cut", "dsp", "dsp_pe")
    pes = pe / 5  # #PE * SIMD
    q = t["T_i1"] // t["T_i2"] if design == "ik-ij.k" else t["T_j1"] // t["T_j2"]
    bare = (t["T_k1"] == 6) & ((t["T_i2"] * t["T_j1"]) % 2 == 1 if design == "ik-ij.k"
                               else (t["T_i1"] * t["T_j2"]) % 2 == 1)
    assert bare.any() and (dsp[bare] == 5 * pes[bare] - 2 * q[bare]).all()
    assert np.allclose(cut, (5 - 2 / 6) * q * t["T_k1"])
    assert (cut <= dsp).all() and (pe[bare] > dsp[bare]).all()


def test_a_pe_that_always_accumulates_needs_no_drain() -> None:
    """``oi-ohw.ipq``'s PEs accumulate at every tiling (the 3x3 kernel's loops run in time),
    so ``5 * #PE * SIMD`` bounds the DSP although the chains' head drains add nothing."""
    model = _model("cnn.c", CNN, "oi-ohw.ipq")
    assert model.exprs["dsp_cut"] == model.exprs["dsp_pe"]


@pytest.mark.parametrize("design", ["ij-ij.kl", "ik-ikl.j"])
def test_two_multiplies_per_lane_keep_the_monomial(design: str) -> None:
    """MTTKRP's PE has two multiplies per lane (one operator entry of ``2*SIMD`` copies) and
    always accumulates: the cut is ``8 * #PE * SIMD``, the DSP of its PEs."""
    model = _model("mttkrp.c", OTHERS[2][1], design)
    assert model.exprs["dsp_cut"] == model.exprs["dsp_pe"]


@pytest.mark.parametrize(("kernel", "sizes", "design"),
                         [pytest.param(k, s, d, id=f"{k}-{d}") for k, s in (("mm.c", MM), ("cnn.c", CNN), *OTHERS)
                          for d in _designs(k, s) if not d.startswith("kl-")])
def test_the_dsp_per_unit_of_its_cap_times_the_cap_is_the_dsp(kernel: str, sizes: tuple[tuple[str, int], ...],
                                                               design: str) -> None:
    """Identity, at every legal tiling: the branch and bound caps a box's ``#PE * SIMD`` at
    ``budget / min(DSP / (#PE * SIMD))`` (:func:`~odyssey.tune.exact.optimum_budget.per_unit`),
    sound only if that ratio times the monomial is the DSP model itself."""
    from odyssey.tune.exact.optimum_budget import per_unit

    model = _model(kernel, sizes, design)
    space = _Space.of(model)
    coords = space.coords
    exprs, _ = coords.rewrite({"dsp": model.exprs["dsp"]})
    budgets = [b for b in model_budgets(model, coords, exprs) if b.resource == "dsp"]
    if not budgets:
        pytest.skip("no DSP cap")
    (cap,) = budgets
    ratio = per_unit(exprs["dsp"], cap, coords.dims)
    assert ratio is not None
    t = _legal_tilings(model)
    rows = np.stack([t[n] for n in coords.params], axis=1)
    c = coords.to_coords(rows)
    at = {n: c[:, i] for i, n in enumerate(coords.dims)}
    got = compile_vectorized({"r": ratio}, list(coords.dims))(at)["r"]
    mono = np.prod([c[:, d].astype(np.float64) ** k for d, k in cap.powers], axis=0)
    (dsp,) = _values(model, t, "dsp")
    assert np.allclose(np.asarray(got, dtype=np.float64) * mono, dsp, rtol=1e-12, atol=1e-9)
