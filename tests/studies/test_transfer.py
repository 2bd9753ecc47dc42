"""Transfer across layers: rescaled tilings are legal, similar shapes follow each other,
seeds from a similar layer reach the target sooner, the time-to-quality arithmetic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from odyssey.cli import main
from odyssey.errors import NetworkError
from odyssey.frontend import load_scop
from odyssey.mapping.space import analyse
from odyssey.model import build_model
from odyssey.network.networks import Network, ShapeGroup, load_network, parse_network
from odyssey.network.transfer import (
    RESCALINGS,
    DesignRun,
    ShapeRun,
    Slice,
    TransferProgress,
    TransferRun,
    design_order,
    field_size,
    rescale_tiling,
    shape_distance,
    tune_layers,
    tuning_order,
)
from odyssey.network.transfer_history import history_record, history_sources, merge_history
from odyssey.network.transfer_race import completion, race, start_search
from odyssey.network.transfer_report import compare, transfer_plot
from odyssey.platforms import load_platform
from odyssey.plots import Bars, Lines
from odyssey.tune import SearchSpace, TracePoint

ROOT = Path(__file__).resolve().parents[2]
CNN = ROOT / "kernels" / "cnn.c"
U250 = load_platform("u250")


def _sizes(o: int, i: int, h: int, w: int, p: int = 3, q: int = 3) -> dict[str, str]:
    return {"O": str(o), "I": str(i), "H": str(h), "W": str(w), "P": str(p), "Q": str(q)}


def _network(*layers: tuple[str, dict[str, int]]) -> Network:
    doc = {"format": "odyssey-network/1", "name": "pair", "title": "two layers", "source": "test",
           "layers": [{"name": n, "kind": "conv" if s["P"] > 1 else "pointwise", "sizes": s}
                      for n, s in layers]}
    return parse_network(json.dumps(doc), source="test")


@pytest.mark.parametrize("design_id", ["o-oipq.hw", "oh-ohw.ipq", "hi-hwipq.o", "wi-oipq.hw"])
def test_rescaled_tilings_are_legal_and_keep_simd_and_pe_grid(design_id: str) -> None:
    src_ks = analyse(load_scop(CNN, _sizes(64, 64, 56, 56)))
    dst_ks = analyse(load_scop(CNN, _sizes(128, 128, 28, 28)))
    src = SearchSpace(build_model(src_ks, src_ks.design(design_id), platform=U250).params)
    dst_design = dst_ks.design(design_id)
    dst = SearchSpace(build_model(dst_ks, dst_design, platform=U250).params)
    extents = {ch.loop: ch.extent for ch in src.chains}
    rng = np.random.default_rng(0)
    kept = 0
    for genome in src.sample(rng, 200).tolist():
        tiling = src.to_point(genome)
        for how in RESCALINGS:
            got = rescale_tiling(tiling, source_extents=extents, space=dst,
                                 space_loops=dst_design.space_loops, how=how)
            assert dst.is_legal(dst.genome(got)), (tiling, got)
        got = rescale_tiling(tiling, source_extents=extents, space=dst,
                             space_loops=dst_design.space_loops)
        for ch in dst.chains:
            if len(ch.columns) != 2:
                continue
            a, b = (dst.names[c] for c in ch.columns)
            if ch.loop in dst_design.space_loops:
                same = tiling[a] // tiling[b] == got[a] // got[b]  # the PE count
            else:
                same = tiling[b] == got[b]  # SIMD lanes / latency hiding
            kept += same
    assert kept > 0.8 * 200 * sum(len(ch.columns) == 2 for ch in dst.chains)


def test_rescaling_follows_the_size_ratio() -> None:
    ks = analyse(load_scop(CNN, _sizes(128, 128, 28, 28)))
    design = ks.design("o-oipq.hw")
    space = SearchSpace(build_model(ks, design, platform=U250).params)
    src = {"o": 64, "i": 64, "h": 56, "w": 56, "p": 3, "q": 3}
    tiling = {n: 1 for n in space.names} | {"T_o1": 32, "T_o2": 4, "T_i1": 16, "T_h1": 56,
                                             "T_w1": 8, "T_p1": 3, "T_q1": 3}
    got = rescale_tiling(tiling, source_extents=src, space=space, space_loops=design.space_loops)
    assert got["T_o1"] // got["T_o2"] == 8 and got["T_o2"] == 8  # 8 PEs kept, per-PE x2
    assert got["T_i1"] == 32 and got["T_h1"] == 28 and got["T_w1"] == 4
    assert got["T_p1"] == 3 and got["T_q1"] == 3


def test_same_tiles_stay_within_the_bram_where_scaled_ones_outgrow_it() -> None:
    """VGG16 conv2-1 -> conv1-2 (H, W double), design oi-hwipq.o: the best tiling of a
    from-scratch run on conv2-1 (`odyssey tune cnn -D O=128 -D I=64 -D H=112 -D W=112 -D P=3
    -D Q=3 --design oi-hwipq.o --samples 1500 --seed 0`, 840.3 GOP/s there, re-derived on
    2026-11-25 on the packed data paths, where the earlier tiling's same tiles no longer fit),
    scaled with the sizes, outgrows the 3,763 usable BRAM18K (9,516 and 6,422 by the model on
    2026-11-25); the same tiles fit (2,872 BRAM18K, 639.1 GOP/s)."""
    ks = analyse(load_scop(CNN, _sizes(64, 64, 224, 224)), max_dim=2)
    design = ks.design("oi-hwipq.o")
    model = build_model(ks, design, platform=U250)
    space = SearchSpace(model.params)
    tiling = {"T_o1": 26, "T_h1": 56, "T_w1": 56, "T_i1": 64, "T_p1": 3, "T_q1": 3, "T_o2": 1,
              "T_h2": 28, "T_w2": 28, "T_i2": 32}
    src = {"o": 128, "i": 64, "h": 112, "w": 112, "p": 3, "q": 3}
    got = {how: rescale_tiling(tiling, source_extents=src, space=space,
                               space_loops=design.space_loops, how=how) for how in RESCALINGS}
    assert got["same"] == tiling
    ev = model.evaluate({n: np.array([got[h][n] for h in RESCALINGS]) for n in model.param_names})
    # the scaled tiles outgrow the BRAM, the same tiles do not; under the complete resource
    # model (2026-11-27) the same tiles need 9,984 DSPs (the drains add the partial sums read
    # back: this ordering's reduction tiles are outside its output's), over the 8,591 usable
    assert not ev.feasible.any()
    assert ev.bram18k[0] > ev.bram18k[1] > model.budget["bram18k"] >= ev.bram18k[2]
    assert ev.dsp[2] > model.budget["dsp"]
    assert ev.throughput_gops[2] > 600


def test_tuning_order_chains_similar_shapes_within_kinds() -> None:
    net = load_network("resnet50")
    from odyssey.network.networks import unique_shapes

    groups = unique_shapes(net)
    order = tuning_order(groups)
    assert sorted(order) == list(range(len(groups)))
    kinds = [groups[k].kind for k in order]
    assert kinds == sorted(kinds, key=lambda k: kinds.index(k))  # each kind contiguous
    for kind in set(kinds):
        same = [k for k in order if groups[k].kind == kind]
        total = [sum(shape_distance(groups[a], groups[b]) for b in same) for a in same]
        assert total[0] == min(total)  # the medoid first
        for k in range(1, len(same)):  # then always the nearest of the shapes left
            prev, rest = same[k - 1], same[k:]
            assert shape_distance(groups[prev], groups[same[k]]) == min(
                shape_distance(groups[prev], groups[j]) for j in rest)


def _run(shape_designs: list[tuple[str, float, list[tuple[int, float]], int]], index: int = 0
         ) -> ShapeRun:
    group = ShapeGroup("conv", (("O", 8),), (load_network("vgg16").layers[0],))
    runs = tuple(DesignRun(d, g, (), (), (), tuple(TracePoint(s, s / 100, v) for s, v in tr),
                           n, n / 100, 0) for d, g, tr, n in shape_designs)
    return ShapeRun(index, group, runs, ())


def test_time_to_quality_counts_earlier_designs_whole() -> None:
    scratch = _run([("a", 50.0, [(10, 40.0), (90, 50.0)], 100),
                    ("b", 100.0, [(5, 60.0), (70, 99.5), (80, 100.0)], 100)])
    assert scratch.time_to(99.0) == (170, pytest.approx(1.7))
    transfer = _run([("b", 100.0, [(3, 99.2)], 100), ("a", 50.0, [(10, 50.0)], 100)])
    assert transfer.time_to(99.0) == (3, pytest.approx(0.03))
    run = TransferRun(load_network("vgg16"), False, False, False, "evolutionary", 0, 100, None,
                      (scratch,), False, 1.0)
    got = compare(run, TransferRun(run.network, True, True, False, "evolutionary", 0, 100, None,
                                   (transfer,), False, 1.0))
    (s,) = got.shapes
    assert (s.scratch_samples, s.transfer_samples, s.reached) == (170, 3, True)
    assert got.speedup_samples == pytest.approx(170 / 3)
    assert design_order([], [scratch]) == []


@pytest.mark.xfail(strict=False, reason="open (re-checked 2026-11-25 on main 915b6c6): this test's seeds 0-2 "
                   "pass (so it xpasses), but over seeds 0-9 transfer beats scratch on the large shape "
                   "on 6 only (0-3, 7, 8); on 5 and 9 it needs more samples, on 4 and 6 it never "
                   "reaches 99% of scratch in 1500 (on 80c4778: 5 of 10): the race needs re-tuning to "
                   "the packed data paths")
def test_seeds_from_a_similar_layer_reach_the_target_sooner() -> None:
    """A pair of similar layers, one design: tuned after the first, the second reaches 99%
    of its from-scratch result in fewer samples than from scratch (for each of 3 seeds)."""
    net = _network(("small", {"O": 64, "I": 64, "H": 28, "W": 28, "P": 3, "Q": 3}),
                   ("large", {"O": 128, "I": 128, "H": 28, "W": 28, "P": 3, "Q": 3}))
    for seed in range(3):
        kw: dict[str, Any] = {"kernel": CNN, "platform": U250, "design": "o-oipq.hw",
                              "samples": 1500, "seed": seed, "method": "evolutionary"}
        scratch = tune_layers(net, transfer=False, **kw)
        transfer = tune_layers(net, transfer=True, **kw)
        assert [s.group.names for s in scratch.shapes] == [("small",), ("large",)]
        (first, second) = compare(scratch, transfer).shapes
        assert first.scratch_samples == first.transfer_samples  # nothing to transfer from
        assert second.sources == ("small",) and second.seeded_designs == 1
        assert second.reached and second.transfer_samples < second.scratch_samples, (seed, second)


def test_progress_reports_each_stretch_with_the_best_so_far() -> None:
    """One design on two shapes: before each stretch, the shape and design and the shape's
    best so far (0 before its first stretch; never falling within a shape). The first shape
    is searched in one stretch, the second (with a source) raced: probe, two rungs, the
    rest."""
    net = _network(("small", {"O": 32, "I": 32, "H": 14, "W": 14, "P": 3, "Q": 3}),
                   ("large", {"O": 64, "I": 32, "H": 14, "W": 14, "P": 3, "Q": 3}))
    seen: list[TransferProgress] = []
    run = tune_layers(net, kernel=CNN, platform=U250, samples=200, method="evolutionary",
                      design="o-oipq.hw", progress=seen.append)
    assert [(p.shape, p.shapes, p.design_id) for p in seen] == [(1, 2, "o-oipq.hw")] + [
        (2, 2, "o-oipq.hw")] * 4
    best = [p.best_gops for p in seen[1:]]
    assert seen[0].best_gops == 0.0 == best[0] and 0 < best[1] <= best[2] <= best[3]
    assert 0 < seen[0].seconds <= seen[1].seconds <= seen[-1].seconds <= run.seconds


def test_cli_network_transfer_reports_the_time_to_quality(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pair.json"
    doc = {"format": "odyssey-network/1", "name": "pair", "title": "pair", "source": "test",
           "layers": [{"name": "a", "kind": "conv", "sizes": {"O": 32, "I": 32, "H": 14, "W": 14,
                                                             "P": 3, "Q": 3}},
                      {"name": "b", "kind": "conv", "sizes": {"O": 64, "I": 32, "H": 14, "W": 14,
                                                             "P": 3, "Q": 3}}]}
    path.write_text(json.dumps(doc))
    out = tmp_path / "t.json"
    code = main(["network", str(path), "--kernel", str(CNN), "--transfer", "--samples", "300",
                 "--design", "o-oipq.hw", "--method", "evolutionary", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "time to reach 99% of the from-scratch result" in text
    assert "total to 99%" in text
    rec = json.loads(out.read_text())
    assert rec["quality"] == 0.99 and len(rec["shapes"]) == 2
    assert rec["shapes"][1]["sources"] == ["a"]


def test_cli_network_transfer_without_comparison_prints_the_tuned_layers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--no-compare``: one run (with transfer), printed and written as ``odyssey network``
    prints a network; the best tiling's numbers are its model's."""
    path = tmp_path / "pair.json"
    doc = {"format": "odyssey-network/1", "name": "pair", "title": "pair", "source": "test",
           "layers": [{"name": n, "kind": "conv", "sizes": {"O": o, "I": 32, "H": 14, "W": 14,
                                                            "P": 3, "Q": 3}}
                      for n, o in (("a", 32), ("b", 64), ("c", 32))]}
    path.write_text(json.dumps(doc))
    out = tmp_path / "n.json"
    code = main(["network", str(path), "--kernel", str(CNN), "--transfer", "--no-compare",
                 "--samples", "300", "--method", "evolutionary", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "tuned with transfer" in text and "total:" in text
    assert "time to reach" not in text  # no from-scratch run, no comparison
    rec = json.loads(out.read_text())
    assert rec["method"] == "evolutionary with transfer" and rec["totals"]["complete"]
    a, b, c = rec["layers"]
    assert c["duplicate_of"] == "a" and c["design"] == a["design"]
    ks = analyse(load_scop(CNN, _sizes(64, 32, 14, 14)), max_dim=2)
    point = build_model(ks, ks.design(b["design"]), platform=U250).evaluate_one(b["tiling"])
    assert b["latency_cycles"] == point["latency_cycles"] and b["dsp"] == point["dsp"]
    assert main(["network", str(path), "--no-compare"]) != 0
    assert "apply to --transfer only" in capsys.readouterr().err


def test_time_to_quality_counts_every_stretch_in_the_order_it_ran() -> None:
    """Raced: a probes 10 samples, b probes 10, b goes on to 60 and hits at its 50th sample:
    10 + 10 + (50 - 10) samples; the hit design is b, whatever the designs' order."""
    shape = _run([("a", 50.0, [(5, 50.0)], 100), ("b", 100.0, [(8, 60.0), (50, 99.5)], 100)])
    raced = ShapeRun(0, shape.group, shape.designs, (),
                     (Slice(0, 10, 0.1), Slice(1, 10, 0.1), Slice(1, 60, 0.6), Slice(0, 100, 1.0),
                      Slice(1, 100, 1.0)))
    assert raced.time_to(99.0) == (60, pytest.approx(0.6))
    assert raced.first_to(99.0) is shape.designs[1]
    assert raced.time_to(101.0) is None and raced.first_to(101.0) is None
    assert shape.time_to(99.0) == (150, pytest.approx(1.5))  # one after another


class _Scripted:
    """A stand-in for DesignSearch: best throughput ``gops(samples)``, one sample a ms."""

    def __init__(self, name: str, gops: Any) -> None:
        self.design = type("D", (), {"id": name})()
        self.gops, self.samples, self.seconds, self.finished = gops, 0, 0.0, False

    @property
    def best_gops(self) -> float | None:
        return self.gops(self.samples) if self.samples else None

    def run(self, *, samples: int | None, time_s: float | None) -> bool:
        assert samples is not None and time_s is None
        if samples <= self.samples:
            return False
        self.seconds += (samples - self.samples) / 1000
        self.samples = samples
        return True


def test_race_probes_all_halves_the_field_then_completes_every_budget() -> None:
    """Eight designs predicted worst-first: the probe (1/40 of 4000 = 100 samples) ranks them,
    the best two go on to 400 and the best of those to 1600, then all complete to 4000 in
    the order of the better of their two ranks (race and prediction interleave: the best,
    then the predicted first, ...), or best first without a prediction; the best design,
    predicted last, is searched on right after the probes."""
    quality = [1, 2, 3, 4, 5, 6, 7, 8]  # design k plateaus at quality[k] (by 100 samples)
    designs = [_Scripted(f"d{k}", lambda n, q=q: q * min(n, 100) / 100)
               for k, q in enumerate(quality)]
    searches, slices = race(designs, lambda d: d, samples=4000, time_s=None,  # type: ignore
                            rungs=(1 / 40, 1 / 10, 2 / 5), keep=1 / 4)
    assert searches == designs
    got = [(designs[s.design].design.id, s.samples) for s in slices]
    assert got[:8] == [(f"d{k}", 100) for k in range(8)]
    assert got[8:10] == [("d7", 400), ("d6", 400)]
    assert got[10:11] == [("d7", 1600)]
    assert got[11:] == [(f"d{k}", 4000) for k in (7, 0, 6, 1, 5, 2, 4, 3)]
    assert all(d.samples == 4000 for d in designs)
    unordered = [_Scripted(f"d{k}", lambda n, q=q: q * min(n, 100) / 100)
                 for k, q in enumerate(quality)]
    _, slices = race(unordered, lambda d: d, samples=4000, time_s=None,  # type: ignore
                     rungs=(1 / 40, 1 / 10, 2 / 5), keep=1 / 4, predicted=False)
    assert [unordered[s.design].design.id for s in slices[11:]] == [f"d{k}" for k in
                                                                   range(7, -1, -1)]
    fresh = [_Scripted(f"d{k}", lambda n: 1.0) for k in range(2)]
    _, seq = race(fresh, lambda d: d, samples=4000, time_s=None, rungs=())  # type: ignore
    assert [(s.design, s.samples) for s in seq] == [(0, 4000), (1, 4000)]  # one after another


def test_designs_outside_the_field_wait_until_the_race_is_over() -> None:
    """A field of 4 of 6 designs: only those are probed and halved (the rungs as large as
    for all six); the other two start after
    every racing design has its whole budget, one after another in the given order, and are
    not even started (built) before."""
    quality = [4, 3, 2, 1, 9, 8]  # the best two are predicted last, outside the field
    designs = [_Scripted(f"d{k}", lambda n, q=q: q * min(n, 100) / 100)
               for k, q in enumerate(quality)]
    started: list[str] = []

    def start(d: _Scripted) -> _Scripted:
        started.append(d.design.id)
        return d

    searches, slices = race(designs, start, samples=4000, time_s=None,  # type: ignore
                            rungs=(1 / 40, 1 / 10, 2 / 5), keep=1 / 4, field=4)
    got = [(searches[s.design].design.id, s.samples) for s in slices]
    assert got[:4] == [(f"d{k}", 100) for k in range(4)]
    # the rungs keep the sizes of six designs: ceil(6/4) = 2, then ceil(6/16) = 1
    assert got[4:7] == [("d0", 400), ("d1", 400), ("d0", 1600)]
    assert {d for d, _ in got[7:11]} == {"d0", "d1", "d2", "d3"}
    assert got[11:] == [("d4", 4000), ("d5", 4000)]
    assert started == [f"d{k}" for k in range(6)] and all(d.samples == 4000 for d in designs)


def test_the_field_is_the_designs_predicted_near_the_best() -> None:
    """Scores relative to the best of 1.0, 0.9, 0.8 and 0.5: a floor of 0.8 keeps three."""
    src = _run([("a", 100.0, [(1, 100.0)], 10), ("b", 90.0, [(1, 90.0)], 10),
                ("c", 80.0, [(1, 80.0)], 10), ("d", 50.0, [(1, 50.0)], 10)])
    designs = [type("D", (), {"id": k})() for k in "dcba"]
    ordered = design_order(designs, [src])  # type: ignore[arg-type]
    assert [d.id for d in ordered] == ["a", "b", "c", "d"]
    assert field_size(ordered, [src], floor=0.8) == 3
    assert field_size(ordered, [src], floor=0.95) == 1


def test_completion_finishes_a_slow_starter_the_sources_ranked_high_early() -> None:
    """A design predicted second that ranks second to last in the race (it starts slowly) is
    completed fourth, not ninth: after the race's best, the predicted first and the race's
    second."""
    ranking = [3, 5, 0, 7, 8, 4, 6, 2, 1, 9]  # by best throughput after the race
    assert completion(ranking) == [3, 0, 5, 1, 2, 7, 8, 4, 6, 9]
    assert sorted(completion(ranking)) == list(range(10))
    assert completion(ranking, predicted=False) == ranking


def test_race_resumes_real_searches_to_their_whole_budget() -> None:
    """Real models: every design of a small shape ends with the whole budget (or converged),
    the stretches add up to it, and the race's best is the sequential search's."""
    ks = analyse(load_scop(CNN, _sizes(32, 32, 14, 14)), max_dim=2)
    designs = [d for d in ks.designs if len(d.space_loops) == 1][:6]
    start = start_search(ks, U250, method="evolutionary", seed=0, seeds=None, samples=800,
                         time_s=None)
    raced, slices = race(designs, start, samples=800, time_s=None)
    seq, _ = race(designs, start, samples=800, time_s=None, rungs=())
    for r in raced:
        assert r.samples == 800 or r.finished
    for k, r in enumerate(raced):
        mine = [s for s in slices if s.design == k]
        assert mine[-1].samples == r.samples and mine[-1].seconds == pytest.approx(r.seconds)
        assert [s.samples for s in mine] == sorted(s.samples for s in mine)
    assert max(r.best_gops or 0 for r in raced) >= 0.99 * max(s.best_gops or 0 for s in seq)
    rec = raced[0].record()
    assert rec.samples == raced[0].samples and rec.trace[-1].throughput_gops == rec.best_gops
    assert list(rec.top_gops) == sorted(rec.top_gops, reverse=True) and len(rec.top_tilings) <= 3


def test_the_benchmark_figure_shows_each_shape_and_the_running_total() -> None:
    """From the committed benchmark records: per network a bar panel over its unique shapes
    and a running total whose band spans the seeds' totals, per arm."""
    records = [json.loads(p.read_text())
               for p in sorted((ROOT / "docs" / "results" / "transfer").glob("*.json"))]
    plot = transfer_plot(records)
    nets = {r["network"] for r in records}
    assert len(plot.panels) == 2 * len(nets)
    for net in nets:
        mine = [r for r in records if r["network"] == net]
        bars, total = (p for p in plot.panels if p.title.startswith(mine[0]["title"]))
        assert isinstance(bars, Bars) and isinstance(total, Lines)
        assert len(bars.categories) == len(mine[0]["modes"]["transfer"]["shapes"])
        for arm, curve in zip(("scratch", "transfer"), total.curves, strict=True):
            ends = [r["modes"]["transfer"]["totals"][f"{arm}_seconds"] for r in mine]
            assert curve.lo is not None and curve.hi is not None
            assert curve.lo[-1] == pytest.approx(min(ends), abs=0.01)
            assert curve.hi[-1] == pytest.approx(max(ends), abs=0.01)
            assert min(ends) - 0.01 <= curve.y[-1] <= max(ends) + 0.01


def test_a_history_gives_the_first_shape_of_a_network_sources() -> None:
    """Shapes tuned in one network, kept as a history record (JSON round trip), are sources
    for another network's shapes: its first shape is seeded from the nearest of them and
    the report names them ``network:layer``."""
    first = _network(("a", {"O": 64, "I": 64, "H": 28, "W": 28, "P": 3, "Q": 3}))
    kw: dict[str, Any] = {"kernel": CNN, "platform": U250, "design": "o-oipq.hw",
                          "samples": 300, "method": "evolutionary"}
    done = tune_layers(first, **kw)
    doc = json.loads(json.dumps(history_record(done)))
    (src,) = history_sources(doc, origin="h.json")
    (mine,) = done.shapes
    assert src.index == -1 and src.group.names == ("pair:a",)
    assert (src.group.stride, doc["shapes"][0]["stride"]) == (1, 1)
    legacy = {**doc, "shapes": [{k: v for k, v in doc["shapes"][0].items() if k != "stride"}]}
    assert history_sources(legacy, origin="old.json")[0].group.stride == 1  # before strides
    assert [(d.design, d.top_tilings, d.extents) for d in src.designs] == [
        (d.design, d.top_tilings, d.extents) for d in mine.designs]
    second = _network(("b", {"O": 128, "I": 64, "H": 28, "W": 28, "P": 3, "Q": 3}))
    run = tune_layers(second, history=(src,), **kw)
    (shape,) = run.shapes
    assert shape.sources == (-1,) and shape.designs[0].seeds > 0
    scratch = tune_layers(second, transfer=False, **kw)
    (row,) = compare(scratch, run).shapes
    assert row.sources == ("pair:a",)
    merged = merge_history(doc, run)
    assert [e["layers"] for e in merged["shapes"]] == [["a"], ["b"]]
    assert len(merge_history(merged, run)["shapes"]) == 2  # the same shape replaces its entry
    with pytest.raises(NetworkError, match="h.json: not a transfer history"):
        history_sources({"format": "odyssey-network/1"}, origin="h.json")
    with pytest.raises(NetworkError, match="h.json: shape 1 of the history is malformed"):
        history_sources({"format": doc["format"], "shapes": [{"kind": "conv"}]}, origin="h.json")


def test_cli_history_is_written_then_used(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    hist = tmp_path / "history.json"
    for name, o in (("one", 32), ("two", 64)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({
            "format": "odyssey-network/1", "name": name, "title": name, "source": "test",
            "layers": [{"name": "c", "kind": "conv",
                        "sizes": {"O": o, "I": 32, "H": 14, "W": 14, "P": 3, "Q": 3}}]}))
        code = main(["network", str(path), "--kernel", str(CNN), "--transfer", "--samples",
                     "200", "--design", "o-oipq.hw", "--history", str(hist)])
        text = capsys.readouterr().out
        assert code == 0 and f"history: 1 shapes added to {hist}" in text
    assert "one:c" in text  # the second network's shape took the first's as its source
    assert len(json.loads(hist.read_text())["shapes"]) == 2
    hist.write_text("{")
    assert main(["network", str(path), "--transfer", "--history", str(hist)]) != 0
    assert "cannot read the transfer history" in capsys.readouterr().err
