"""The engine (odyssey.tune.engine) on a real 2-worker Dask LocalCluster: the same results as
in this process, a worker that dies has its task run again and the run says so, a task that
raises is retried once then reported; and the commands that use it (`odyssey tune --design
all`, `odyssey network`, `odyssey optimum --design all`, `odyssey pareto --method exact`, the
studies' optima and the tuner benchmark) give the serial run's results with `--workers 2`, and
`odyssey tune` exits 130 with what finished on Ctrl-C (SIGINT to its process group)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import cloudpickle
import pytest

from odyssey.cli import main
from odyssey.runtime import GC_THRESHOLDS
from odyssey.tune.engine import Engine, EngineError, Session, Task, run_tasks

ROOT = Path(__file__).resolve().parents[2]
MM = str(ROOT / "kernels" / "mm.c")
CNN = str(ROOT / "kernels" / "cnn.c")
CONV = {"O": 4, "I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}
TINY = {  # as tests/studies/test_network_cli.py: two conv layers of one shape, a depthwise one
    "format": "odyssey-network/1", "name": "tiny", "title": "Tiny test network", "source": "test",
    "layers": [
        {"name": "c1", "kind": "conv", "sizes": CONV},
        {"name": "dw1", "kind": "depthwise", "sizes": {"C": 4, "H": 4, "W": 4, "P": 3, "Q": 3},
         "stride": 2},
        {"name": "c2", "kind": "conv", "sizes": CONV},
    ],
}

# this module's task functions travel by value: the workers need not import the tests
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _square(x: int) -> tuple[int, int]:
    return x, x * x


def _die_once(marker: str) -> str:
    """Kill the worker process the first time (after the scheduler has seen it start)."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died once")
        time.sleep(0.5)
        os._exit(1)
    return "ran again"


def _raise_always(x: int) -> int:
    raise ValueError(f"bad input {x}")


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_engine_here_and_on_two_workers(tmp_path: Path) -> None:
    tasks = [Task(f"t{i}", _square, (i,)) for i in range(6)]
    here = run_tasks(tasks, Engine())
    assert here.results == {f"t{i}": (i, i * i) for i in range(6)} and not here.interrupted
    seen: list[tuple[str, int, int]] = []
    notices: list[str] = []
    marker = tmp_path / "marker"
    tasks += [Task("dies", _die_once, (str(marker),)), Task("raises", _raise_always, (7,))]
    run = run_tasks(tasks, Engine(workers=2), on_done=lambda k, v, d, t: seen.append((k, d, t)),
                    on_notice=notices.append)
    assert {k: run.results[k] for k in here.results} == here.results
    assert run.results["dies"] == "ran again" and marker.exists()
    # the worker held the task it ran (and at times the next one)
    assert any(n.startswith("worker tcp://") and " died with " in n and "dies" in n.split(
        " assigned")[0] and "runs them again" in n for n in notices), notices
    assert set(run.failed) == {"raises"} and "ValueError: bad input 7" in run.failed["raises"]
    assert sorted(k for k, _, _ in seen) == sorted(run.results)  # every finished task reported
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen) and seen[-1][2] == 8
    assert not run.interrupted and notices == list(run.notices)


def test_engine_on_a_cluster_of_its_own() -> None:
    import distributed

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                                  processes=True) as cluster:
        engine = Engine(scheduler=cluster.scheduler_address)
        run = run_tasks([Task(f"t{i}", _square, (i,)) for i in range(3)], engine)
        assert run.results == {f"t{i}": (i, i * i) for i in range(3)}
        assert run.where == f"on the Dask cluster at {cluster.scheduler_address}"


def _imported(module: str) -> bool:
    return module in sys.modules


def test_a_session_starts_while_the_caller_prepares_and_runs_twice() -> None:
    """The local cluster starts on a thread of its own (the caller goes on at once), its
    workers import ``preload`` before any task, and one session runs several batches."""
    assert "wave" not in sys.modules  # a module nothing here or in Dask imports
    with Session(Engine(workers=2), preload=("wave",)) as session:
        assert threading.active_count() > 1 and "wave" not in sys.modules
        first = session.run([Task(f"w{i}", _imported, ("wave",)) for i in range(4)])
        second = session.run([Task("t", _imported, ("tabnanny",))])
    assert first.results == {f"w{i}": True for i in range(4)} and not first.failed
    assert second.results == {"t": False}
    with pytest.raises(EngineError, match="closed"):
        session.run([Task("late", _imported, ("wave",))])
    with Session(Engine()) as here:  # in this process: nothing starts, nothing preloads
        assert here.run([Task("w", _imported, ("wave",))]).results == {"w": False}


def _then(key: str, value: Any) -> list[Task]:
    """A second phase: every square above 4 is squared again, once."""
    if key.startswith("t") and value is not None and value[1] > 4:
        return [Task(f"again {key}", _square, (value[1],))]
    return []


def test_follow_up_tasks_join_the_run_here_and_on_two_workers() -> None:
    tasks = [Task(f"t{i}", _square, (i,)) for i in range(5)]
    order: list[str] = []
    here = run_tasks(tasks, Engine(), follow=_then, on_done=lambda k, v, d, t: order.append(k))
    assert here.results == {**{f"t{i}": (i, i * i) for i in range(5)},
                            "again t3": (9, 81), "again t4": (16, 256)}
    # in this process a follow-up task runs next, before the tasks not started
    assert order == ["t0", "t1", "t2", "t3", "again t3", "t4", "again t4"]
    seen: list[tuple[str, int, int]] = []
    two = run_tasks(tasks, Engine(workers=2), follow=_then,
                    on_done=lambda k, v, d, t: seen.append((k, d, t)))
    assert two.results == here.results and not two.failed
    assert seen[-1][1:] == (7, 7)
    with pytest.raises(EngineError, match="follow-up task reuses"):
        run_tasks(tasks, Engine(), follow=lambda k, v: [Task("t0", _square, (1,))])


def _where(x: int) -> tuple[int, str, bool, bool, tuple[int, ...], tuple[float, ...], str]:
    """The input, the address of the worker running the task, whether that worker runs
    Dask's statistical profiler, whether it ends without the interpreter's teardown, its
    garbage collector's thresholds, and the periods (ms) of its event-loop tick and memory
    monitor, and its ``MALLOC_TRIM_THRESHOLD_``."""
    import gc

    from distributed import get_worker

    time.sleep(0.2)  # long enough that both workers take tasks
    w = get_worker()
    return (x, w.address, "profile" in w.periodic_callbacks,
            signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            and "odyssey.tune._dask_worker" in sys.modules,
            gc.get_threshold(), tuple(w.periodic_callbacks[k].callback_time
                                      for k in ("tick", "memory_monitor")),
            os.environ.get("MALLOC_TRIM_THRESHOLD_", ""))


def _again_near(key: str, value: Any) -> list[Task]:
    """A follow-up of every first task, to run on the worker that ran it."""
    return [Task(f"near {key}", _where, (-1,), near=key)] if not key.startswith("near") else []


def test_follow_up_runs_near_its_task_and_workers_do_not_profile() -> None:
    tasks = [Task(f"t{i}", _where, (i,)) for i in range(6)]
    run = run_tasks(tasks, Engine(workers=2), follow=_again_near)
    assert len(run.results) == 12 and not run.failed
    first = {run.results[f"t{i}"][1] for i in range(6)}
    assert len(first) == 2, "both workers took tasks"
    for i in range(6):  # each follow-up ran where its task did
        assert run.results[f"near t{i}"][1] == run.results[f"t{i}"][1]
    # the local cluster's workers run without the profiler (engine.LOCAL_WORKER_CONFIG) and
    # ignore Ctrl-C and skip the interpreter's teardown (_dask_worker.dask_setup)
    assert not any(v[2] for v in run.results.values())
    assert all(v[3] for v in run.results.values())
    # ... and set the garbage collector as the `odyssey` command does (odyssey.runtime)
    assert all(v[4] == GC_THRESHOLDS for v in run.results.values())
    # ... and wake their event loops less often (engine.LOCAL_WORKER_CONFIG)
    assert all(v[5] == (1000, 1000) for v in run.results.values())
    # ... and keep glibc's own heap trimming (not Dask's MALLOC_TRIM_THRESHOLD_=65536)
    assert all(v[6] == os.environ.get("MALLOC_TRIM_THRESHOLD_", "") for v in run.results.values())
    here = run_tasks([Task("a", _square, (3,))], Engine(),
                     follow=lambda k, v: [Task("b", _square, (4,), near="a")] if k == "a" else [])
    assert here.results == {"a": (3, 9), "b": (4, 16)}  # in this process ``near`` changes nothing


def test_engine_checks() -> None:
    with pytest.raises(EngineError, match="at least 1"):
        Engine(workers=0)
    with pytest.raises(EngineError, match="unique"):
        run_tasks([Task("a", _square, (1,)), Task("a", _square, (2,))], Engine())
    assert not Engine().distributed and Engine(scheduler="tcp://127.0.0.1:1").distributed
    with pytest.raises(EngineError, match="cannot run on the Dask cluster at"):
        run_tasks([Task("a", _square, (1,))],
                  Engine(scheduler="tcp://127.0.0.1:9", connect_timeout_s=1))


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two `odyssey tune` records agree on everything but the time they took."""
    def strip(r: dict[str, Any]) -> dict[str, Any]:
        r = {k: v for k, v in r.items() if k not in ("seconds", "trace")}
        if r.get("mp_seed"):
            r["mp_seed"] = {k: v for k, v in r["mp_seed"].items() if k != "seconds"}
        return r
    assert strip(a) == strip(b)
    assert [t["samples"] for t in a.get("trace", [])] == [t["samples"] for t in b.get("trace", [])]


def test_tune_all_designs_on_two_workers_as_here(tmp_path: Path) -> None:
    argv = ["tune", MM, "-D", "I=16", "-D", "J=16", "-D", "K=16", "--samples", "24", "--seed", "3"]
    rc1, out1, err1 = _run([*argv, "--json", str(tmp_path / "1.json")])
    rc2, out2, err2 = _run([*argv, "--workers", "2", "--json", str(tmp_path / "2.json")])
    assert rc1 == rc2 == 0 and "Traceback" not in err1 + err2
    one, two = (json.loads((tmp_path / f"{n}.json").read_text()) for n in (1, 2))
    assert one["best"] == two["best"] and len(one["designs"]) == len(two["designs"]) == 18
    for a, b in zip(one["designs"], two["designs"], strict=True):
        _same(a, b)
    assert out1.splitlines()[-1] == out2.splitlines()[-1]  # the `best:` line
    lines = err2.splitlines()
    assert lines[0] == "odyssey: 18 designs on a local Dask cluster of 2 worker processes"
    assert lines[-1].startswith("[18/18] ") and f"best {two['designs'][0]['throughput_gops']:.1f}" \
        not in lines[0]
    best = max(d["throughput_gops"] for d in two["designs"])
    assert f"best {best:.1f} GOP/s" in lines[-1]


def test_network_on_two_workers_as_here(tmp_path: Path) -> None:
    net = tmp_path / "tiny.json"
    net.write_text(json.dumps(TINY))
    # a cnn.c design on the conv shape; dwconv.c has no such design: the best of its 12
    argv = ["network", str(net), "--kernel", CNN, "--design", "o-ohw.ipq", "--samples", "10",
            "--seed", "1"]
    rc1, out1, _ = _run([*argv, "--json", str(tmp_path / "1.json")])
    rc2, out2, err2 = _run([*argv, "--workers", "2", "--json", str(tmp_path / "2.json")])
    assert rc1 == rc2 == 0
    one, two = (json.loads((tmp_path / f"{n}.json").read_text()) for n in (1, 2))
    assert one["layers"] == two["layers"] and one["totals"] == two["totals"]
    for a, b in zip(one["shapes"], two["shapes"], strict=True):
        assert {k: v for k, v in a.items() if k not in ("seconds", "designs")} == \
            {k: v for k, v in b.items() if k not in ("seconds", "designs")}
        assert [{k: v for k, v in d.items() if k != "seconds"} for d in a["designs"]] == \
            [{k: v for k, v in d.items() if k != "seconds"} for d in b["designs"]]
    assert out1.splitlines()[:-3] == out2.splitlines()[:-3]  # the table
    # 1 design, then the last shape's 12 one per task (the workers end together)
    assert "[13/13] shape " in err2 and "best of shape 2 " in err2
    assert _run([*argv, "--shared-array", "--workers", "2"])[0] == 2


def test_ctrl_c_cancels_the_rest_and_writes_what_finished(tmp_path: Path) -> None:
    out = tmp_path / "partial.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "odyssey.cli", "tune", MM, "-D", "I=64", "-D", "J=64", "-D", "K=64",
         "--time", "3", "--method", "random", "--workers", "2", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
        start_new_session=True, preexec_fn=_default_sigint)
    assert proc.stderr is not None
    err = []
    for line in proc.stderr:  # wait for the first finished design
        err.append(line)
        if line.startswith("[1/18]"):
            break
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C: to the command and its worker processes
    stdout, rest = proc.communicate(timeout=120)
    err.append(rest)
    assert proc.returncode == 130, "".join(err)
    text = "".join(err)
    rec = json.loads(out.read_text())
    assert rec["interrupted"] and 1 <= len(rec["designs"]) < 18, text
    assert f"interrupted; results of {len(rec['designs'])} of 18 designs" in text, text
    assert "best: design" in stdout, text
    assert "Traceback" not in text, text  # the workers ignore the signal, the command exits


def _nap(x: int) -> int:
    time.sleep(0.3)
    return x


class _CtrlCOnDel:
    """Sends this process SIGINT from its finalizer: the signal's handler runs there, where a
    KeyboardInterrupt would be printed as "Exception ignored" and lost (as it was from a
    Dask ``Future.__del__``)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_inside_a_finalizer_still_interrupts_the_run() -> None:
    def on_done(key: str, value: Any, done: int, total: int) -> None:
        if done == 1:
            _CtrlCOnDel()  # dropped at once

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run = run_tasks([Task(f"t{i}", _nap, (i,)) for i in range(10)], Engine(workers=2),
                        on_done=on_done)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    finally:
        signal.signal(signal.SIGINT, previous)
    assert run.interrupted and 1 <= len(run.results) < 10 and not run.failed


def _default_sigint() -> None:
    """In the child: Ctrl-C's default (a runner may start the tests with SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_optimum_all_designs_on_two_workers(tmp_path: Path) -> None:
    mm8 = [MM, "-D", "I=8", "-D", "J=8", "-D", "K=8"]
    rc, out, err = _run(["optimum", *mm8, "--design", "all", "--workers", "2",
                         "--json", str(tmp_path / "all.json")])
    assert rc == 0, err
    rec = json.loads((tmp_path / "all.json").read_text())
    assert len(rec["designs"]) == 18 and not rec["interrupted"]
    assert all(d["status"] == "optimal" for d in rec["designs"])
    assert "18 of 18 designs proven optimal" in out and "[18/18]" in err
    best = rec["best"]
    assert max(d["throughput_gops"] for d in rec["designs"]) == next(
        d["throughput_gops"] for d in rec["designs"] if d["design"] == best)
    # each design's record is what `odyssey optimum --design ID` proves in this process
    for d in rec["designs"][:: 6]:
        rc1, _, _ = _run(["optimum", *mm8, "--design", d["design"], "--json",
                          str(tmp_path / "one.json")])
        one = json.loads((tmp_path / "one.json").read_text())
        assert rc1 == 0 and one["latency_cycles"] == d["latency_cycles"]
        assert one["tiling"] == d["tiling"] and one["status"] == d["status"]
    assert _run(["optimum", *mm8, "--design", "0", "--workers", "2"])[0] == 2


def test_study_optima_on_two_workers_as_here() -> None:
    from odyssey.platforms import load_platform
    from odyssey.studies._common import iter_optima, kernel_space
    from odyssey.studies.study import Preset, StudyContext

    said: list[str] = []
    ctx = StudyContext(preset=Preset("quick"), platform=load_platform("u250"), seed=0,
                       kernels=ROOT / "kernels", say=said.append)
    ks = kernel_space(ctx, "mm.c", {"I": "8", "J": "8", "K": "8"})
    designs = [ks.design(i) for i in ("i-ij.k", "ij-ij.k", "jk-ik.j")]
    here = list(iter_optima(ctx, ks, designs, platform=ctx.platform, variant="max"))
    ctx2 = StudyContext(preset=Preset("quick"), platform=ctx.platform, seed=0,
                        kernels=ROOT / "kernels", say=said.append, engine=Engine(workers=2))
    there = list(iter_optima(ctx2, ks, designs, platform=ctx.platform, variant="max"))
    for (d1, m1, p1, o1), (d2, m2, p2, o2) in zip(here, there, strict=True):
        assert d1 == d2 and m1.variant == m2.variant == "max"
        assert _no_seconds(p1) == _no_seconds(p2) and o1.tiling == o2.tiling
        assert o1.latency_cycles == o2.latency_cycles and o1.status == o2.status
    assert sum("optimum 3/3" in s for s in said) == 1


def _no_seconds(p: Any) -> Any:
    import dataclasses

    return dataclasses.replace(p, seconds=0.0)


def test_tuner_bench_on_two_workers_as_here() -> None:
    from odyssey.studies.tuner_bench import BenchConfig, run_bench

    cfg = BenchConfig(kernel=Path(MM), sizes={"I": 16, "J": 16, "K": 16},
                      designs=("i-ij.k", "ij-ij.k"), methods=("annealing", "random"),
                      seeds=(0, 1), time_runs=False, at_samples=(60,), at_seconds=())
    optima = {"i-ij.k": 30.0, "ij-ij.k": 30.0}  # only scales the progress fractions
    here = run_bench(cfg, optima=optima)
    there = run_bench(cfg, optima=optima, engine=Engine(workers=2))

    def runs(res: Any) -> list[Any]:
        return [(r.method, r.design, r.seed, r.budget, r.samples, r.stop_reason,
                 [(t.samples, t.throughput_gops) for t in r.trace]) for r in res.runs]

    assert len(here.runs) == 4 and runs(here) == runs(there)  # annealing adapts to its budget


def test_pareto_exact_fronts_on_two_workers_as_here(tmp_path: Path) -> None:
    argv = ["pareto", MM, "-D", "I=8", "-D", "J=8", "-D", "K=8", "--method", "exact"]
    rc1, out1, _ = _run([*argv, "--out", str(tmp_path / "1")])
    rc2, out2, err2 = _run([*argv, "--workers", "2", "--out", str(tmp_path / "2")])
    assert rc1 == rc2 == 0
    assert (tmp_path / "1" / "front.csv").read_text() == (tmp_path / "2" / "front.csv").read_text()
    one, two = (json.loads((tmp_path / n / "front.json").read_text()) for n in ("1", "2"))
    assert one["designs"] == two["designs"] and one["hypervolume"] == two["hypervolume"]
    assert out1.splitlines()[1:-1] == out2.splitlines()[1:-1]  # but the seconds, the folder
    assert "[18/18] " in err2 and " points of " in err2
    assert _run([*argv[:-2], "--method", "nsga2", "--samples", "50", "--workers", "2"])[0] == 2


def test_the_sync_cancel_race_record_is_dropped_and_others_kept() -> None:
    """distributed's ``sync`` may log a NameError from its ``cancel`` callback when Ctrl-C
    comes before the call started; that one record is dropped, any other error is kept."""
    import logging

    from odyssey.tune.engine import _sync_cancel_race

    def record_of(source: str, filename: str) -> logging.LogRecord:
        scope: dict[str, object] = {}
        exec(compile(source, filename, "exec"), scope)
        try:
            scope["cancel"]()  # type: ignore[operator]
        except Exception:
            exc_info = sys.exc_info()
        return logging.LogRecord("tornado.application", logging.ERROR, filename, 1,
                                 "Exception in callback", None, exc_info)

    race = "def cancel():\n    if future is not None:\n        pass\n"
    assert not _sync_cancel_race(record_of(race, "/x/site-packages/distributed/utils.py"))
    assert _sync_cancel_race(record_of(race, "/x/odyssey/tune/engine.py"))
    assert _sync_cancel_race(record_of("def cancel():\n    raise ValueError('x')\n",
                                       "/x/site-packages/distributed/utils.py"))
    assert _sync_cancel_race(logging.LogRecord("t", logging.ERROR, "f", 1, "m", None, None))
