"""The screen-then-search schedule of `odyssey network` (odyssey.network.schedule) and the
per-task seeds (odyssey.tune.tasks.task_seed): contracts on a small conv layer of cnn.c
(fast model builds), the serial run against a 2-worker Dask run, and seeds that do not
depend on the process or on the network's other layers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey.network import schedule
from odyssey.network.network_tuning import NetworkResult, tune_network
from odyssey.network.networks import Network, parse_network
from odyssey.platforms import load_platform
from odyssey.tune.engine import Engine
from odyssey.tune.tasks import task_seed

ROOT = Path(__file__).resolve().parents[2]
CNN = str(ROOT / "kernels" / "cnn.c")
A = {"O": 8, "I": 8, "H": 8, "W": 8, "P": 3, "Q": 3}
B = {"O": 4, "I": 8, "H": 6, "W": 6, "P": 3, "Q": 3}
SAMPLES = 400  # a screening of 200 samples, then 200 more for the kept designs


def _net(*sizes: dict[str, int]) -> Network:
    return parse_network(json.dumps({
        "format": "odyssey-network/1", "name": "t", "title": "test", "source": "test",
        "layers": [{"name": f"c{n}", "kind": "conv", "sizes": s} for n, s in enumerate(sizes)]}),
        source="test")


def _tune(net: Network, *, schedule: str = "screen", engine: Engine | None = None
          ) -> NetworkResult:
    return tune_network(net, kernel=CNN, platform=load_platform("u250"), design="all",
                        samples=SAMPLES, seed=5, schedule=schedule, engine=engine)


def _outcomes(result: NetworkResult) -> list[object]:
    return [[(d.design, d.throughput_gops, d.latency_cycles, d.samples, d.stop_reason, d.phase,
              d.screen_gops) for d in s.designs] + [s.design, s.tiling] for s in result.shapes]


@pytest.fixture(scope="module")
def serial() -> NetworkResult:
    return _tune(_net(A))


def test_task_seed_is_stable_across_processes() -> None:
    key = (3, "conv", (("O", 8), ("I", 8)), "o-ohw.ipq", "screen")
    code = ("from odyssey.tune.tasks import task_seed; "
            "print(task_seed(3, 'conv', (('O', 8), ('I', 8)), 'o-ohw.ipq', 'screen'))")
    out = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": str(h)}).stdout
           for h in (1, 2)]
    assert out[0] == out[1] == f"{task_seed(*key)}\n"
    assert 0 <= task_seed(*key) < 2 ** 63
    seeds = {task_seed(s, "conv", (("O", 8),), d, p) for s in (0, 1) for d in ("a", "b")
             for p in ("screen", "search")}
    assert len(seeds) == 8  # every part of the key matters


def test_screen_keeps_the_best_screened_designs(serial: NetworkResult) -> None:
    (shape,) = serial.shapes
    designs = shape.designs
    assert len(designs) == 30 and shape.complete and serial.schedule == "screen"
    screen = schedule.screen_samples("screen", SAMPLES, 30)
    assert screen == 200
    kept = [d for d in designs if d.phase == "screen+search"]
    out = [d for d in designs if d.phase == "screened out"]
    assert len(kept) == schedule.KEEP and len(kept) + len(out) == 30
    # every screened-out design screened no better than any kept design
    worst_kept = min(d.screen_gops or 0.0 for d in kept)
    assert all((d.screen_gops or 0.0) <= worst_kept for d in out)
    for d in out:
        assert d.stop_reason == "screened out" and d.samples <= screen
        assert d.throughput_gops == d.screen_gops
    for d in kept:  # both phases within the per-(shape, design) cap; never worse than screened
        assert screen < d.samples <= SAMPLES
        assert d.throughput_gops is not None and d.throughput_gops >= (d.screen_gops or 0.0)
    assert shape.throughput_gops == max(d.throughput_gops or 0.0 for d in designs)


def test_full_schedule_gives_every_design_the_whole_budget() -> None:
    result = _tune(_net(B), schedule="full")
    assert {d.phase for d in result.shapes[0].designs} == {"full"}
    # the whole budget: the samples counted plus the MP seed's screening (at most a quarter)
    assert all(SAMPLES * 3 // 4 <= d.samples <= SAMPLES or d.stop_reason != "samples"
               for d in result.shapes[0].designs)
    assert any(d.stop_reason == "samples" for d in result.shapes[0].designs)


def test_two_workers_give_the_serial_results(serial: NetworkResult) -> None:
    two = _tune(_net(A), engine=Engine(workers=2))
    assert _outcomes(two) == _outcomes(serial)


def test_a_layers_results_do_not_depend_on_the_other_layers(serial: NetworkResult) -> None:
    both = _tune(_net(B, A))
    assert _outcomes(both)[1] == _outcomes(serial)[0]
