"""What a worker of `odyssey network` keeps between tasks (odyssey.network.worker.ModelShelf):
the contract (a screening's model stays while it ranks among the KEEP best the worker
screened, a search's model goes), the property the search phase relies on (whatever the
split of a shape's designs among workers, every design the run keeps is on the shelf of
the worker that screened it), and a chunked task against the serial phases."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odyssey.network import schedule, worker
from odyssey.network.schedule import DesignOutcome, PhaseRun, kept, run_phase
from odyssey.network.worker import Job, ModelShelf, designs_task
from odyssey.platforms import load_platform
from odyssey.tune.tasks import KernelSource, design_model, kernel_space
from tests.network.test_schedule import CNN, A

PLATFORM = load_platform("u250")


def _src(sizes: dict[str, int] = A) -> KernelSource:
    return KernelSource.read(CNN, {k: str(v) for k, v in sizes.items()}, max_dim=2)


def _run(design_id: str, gops: float | None) -> PhaseRun:
    return PhaseRun(DesignOutcome(design_id, "df", "ord", gops, None, 1, 0.0, "samples"))


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Model builds replaced by a record of the design ids built."""
    log: list[str] = []

    def fake(src: KernelSource, design_id: str, platform: Any, **kw: Any) -> Any:
        log.append(design_id)
        return f"model of {design_id}"

    monkeypatch.setattr(worker, "design_model", fake)
    return log


def test_the_shelf_keeps_the_best_screened_and_drops_the_rest(built: list[str]) -> None:
    shelf, src = ModelShelf(keep=2), _src()
    for pos, (d, gops) in enumerate([("a", 5.0), ("b", 9.0), ("c", None), ("d", 7.0),
                                     ("e", 9.0)]):
        assert shelf.model(src, d, PLATFORM) == f"model of {d}"
        shelf.settle(src, PLATFORM, Job(d, pos, "screen", None, 10, 0), _run(d, gops))
    # b and e tie at 9.0: both ahead of d; the order breaks ties (b before e)
    assert set(shelf.held(src, PLATFORM)) == {"b", "e"}
    shelf.model(src, "b", PLATFORM)  # its search: no new build
    assert built == ["a", "b", "c", "d", "e"]
    shelf.settle(src, PLATFORM, Job("b", 1, "search", None, 10, 0), _run("b", 9.5))
    assert shelf.held(src, PLATFORM) == ("e",)
    shelf.model(src, "a", PLATFORM)  # dropped: built again
    assert built[-1] == "a"
    shelf.settle(src, PLATFORM, Job("a", 0, "full", None, 10, 0), _run("a", 6.0))
    assert shelf.held(src, PLATFORM) == ("e",)


def test_the_shelf_forgets_the_oldest_shape(built: list[str]) -> None:
    shelf = ModelShelf(keep=1, shapes=2)
    srcs = [_src({**A, "O": o}) for o in (4, 8, 12)]
    for src in srcs:
        shelf.model(src, "a", PLATFORM)
        shelf.settle(src, PLATFORM, Job("a", 0, "screen", None, 10, 0), _run("a", 1.0))
    assert [shelf.held(s, PLATFORM) for s in srcs] == [(), ("a",), ("a",)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 6).map(float)),
                          st.integers(0, 2)), min_size=1, max_size=14),
       st.integers(1, 4))
def test_every_kept_design_is_on_the_shelf_of_its_worker(
        designs: list[tuple[float | None, int]], keep: int) -> None:
    """Designs spread over 3 workers in any way (ties in GOP/s included): after every
    screening, each design `kept` picks is still on its worker's shelf."""
    src = _src()
    shelves = [ModelShelf(keep=keep) for _ in range(3)]
    runs = [_run(f"d{i}", gops) for i, (gops, _) in enumerate(designs)]
    for i, (_, w) in enumerate(designs):
        shelves[w]._shape(src, PLATFORM).models[f"d{i}"] = None  # type: ignore[assignment]
        shelves[w].settle(src, PLATFORM, Job(f"d{i}", i, "screen", None, 10, 0), runs[i])
    ranked = sorted((i for i, r in enumerate(runs) if r.outcome.throughput_gops is not None),
                    key=lambda i: (-(runs[i].outcome.throughput_gops or 0.0), i))
    for i in sorted(ranked[:keep]):
        assert f"d{i}" in shelves[designs[i][1]].held(src, PLATFORM)
    assert kept(runs) == sorted(ranked[:schedule.KEEP])


def test_a_chunked_task_runs_each_phase_as_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three screenings in one task give what three serial phases give (seeds their own)."""
    monkeypatch.setattr(worker, "SHELF", ModelShelf())
    src = _src()
    ids = [d.id for d in kernel_space(src).designs[:3]]
    jobs = tuple(Job(d, i, "screen", None, 200, 40 + i) for i, d in enumerate(ids))
    got = designs_task(src, PLATFORM, "odyssey", {}, jobs)
    for job, run in zip(jobs, got, strict=True):
        design = kernel_space(src).design(job.design_id)
        want = run_phase(lambda d=job.design_id: design_model(src, d, PLATFORM), design,
                         phase="screen", method="odyssey", options={}, time_s=None,
                         samples=200, seed=job.seed)
        assert run.trial is not None and want.trial is not None and run.elite == want.elite
        assert (run.trial.index, dict(run.trial.tiling), run.trial.latency_cycles) == \
            (want.trial.index, dict(want.trial.tiling), want.trial.latency_cycles)
        assert run.outcome.samples == want.outcome.samples
