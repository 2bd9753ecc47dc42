"""Random problem sizes, from one-trip loops to beyond 2**62, through every command that
takes sizes: no internal error, no search past its budget, no number that wrapped around.

Each case draws I, J, K of MM (seeded: a failure is reproduced by its seed) and runs
``designs``, ``model`` (the all-ones tiling, legal at every size), ``optimum --time`` and
``tune --time`` in this process. A size above 2**62 must be exit 2 naming the limit; a search
must stop within its budget +10% +1 s (its own seconds, from its JSON record).
Memory: this process's peak resident size may grow by at most 1 GB over the cases.
"""

from __future__ import annotations

import json
import random
import re
import resource
import time

import pytest

from tests.cli.fuzz import Outcome, run

LIMIT = 2**62
ONES = "T_i1=1,T_j1=1,T_k1=1,T_i2=1,T_j2=1,T_k2=1"


def _size(rng: random.Random) -> int:
    kind = rng.randrange(6)
    if kind == 0:
        return 1  # a one-trip loop
    if kind == 1:
        return rng.randint(2, 64)
    if kind == 2:
        return 2 ** rng.randint(10, 62) + rng.randint(-3, 3)
    if kind == 3:
        return rng.randint(1, LIMIT)
    if kind == 4:
        return rng.choice([LIMIT, LIMIT - 1, LIMIT + 1, 2**63, 10**20])
    return rng.randint(2**20, 2**40)


def _check(o: Outcome, sizes: list[int], budget_s: float | None, seconds: float) -> None:
    assert o.ok, o.describe()
    if max(sizes) > LIMIT:
        assert o.code == 2 and "2**62" in o.err, o.describe()
        return
    if budget_s is not None and o.code == 0:  # `--json -`: the record on stdout
        rec = json.loads(o.out)
        search = rec["seconds"] if "designs" not in rec else rec["designs"][0]["seconds"]
        assert search <= budget_s * 1.1 + 1.0, (search, o.describe())
        assert seconds <= search + 10.0, (seconds, o.describe())  # parsing, model, load
    for n in re.findall(r"(-[\d,]{2,}) cycles", o.out + o.err):
        raise AssertionError(f"negative latency {n}: {o.describe()}")


def _case(seed: int, budget_s: float, searches: bool) -> None:
    rng = random.Random(seed)
    sizes = [_size(rng) for _ in range(3)]
    defs = [f"-D{n}={v}" for n, v in zip("IJK", sizes, strict=True)]
    commands: list[tuple[list[str], float | None]] = [
        (["designs", "mm", *defs], None),
        (["model", "mm", *defs, "--design", "ij-ij.k", "--tiling", ONES], None)]
    if searches:
        commands += [([command, "mm", *defs, "--design", "ij-ij.k", "--time", str(budget_s),
                       "--json", "-"], budget_s) for command in ("optimum", "tune")]
    for argv, budget in commands:
        start = time.perf_counter()
        o = run(argv)
        _check(o, sizes, budget, time.perf_counter() - start)


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_sizes_fast() -> None:
    before = _peak_kb()
    for seed in range(4):
        _case(seed, 1.0, searches=seed == 0)
    assert _peak_kb() - before < 1_000_000


@pytest.mark.slow
def test_sizes_100_cases() -> None:
    """About 100 cases of four commands, 2 s searches (some 10 minutes)."""
    before = _peak_kb()
    for seed in range(100, 200):
        _case(seed, 2.0, searches=True)
    assert _peak_kb() - before < 1_000_000
