"""Random problem sizes, from one-trip loops to beyond 2**62, through every command that
takes sizes: no internal error, no search past its budget, no number that wrapped around.

Two fuzzers. The MM one (``_case``) draws I, J, K and runs ``designs``, ``model`` (the all-ones
tiling, legal at every size), ``optimum --time`` and ``tune --time``; a search must stop
within its budget +10% +1 s (its own seconds, from its JSON record). The kernels one
(``size_fuzz.py``) draws a bundled kernel (all 38, the 8 odyssey cannot map included), sizes
for its parameters, one of its designs at those sizes and a tiling, then runs ``designs`` and
one of ``model``, ``generate`` (+ ``check``, + ``csim``/``sim`` on small sizes), ``tune``,
``optimum``, ``pareto`` or ``network``: each must exit 0 or 2 with a message, never an
internal error, within its budget (``size_fuzz.budget_s``: 30 s, and a search's 0.3 s on top;
csim/sim 180 s). A size above 2**62 must be exit 2 naming the limit.
Memory: this process's peak resident size may grow by at most 1 GB over the cases, and no
child (the compiler, a simulation) may peak above 2 GB.
"""

from __future__ import annotations

import json
import random
import re
import resource
import sys
import time
from pathlib import Path

import pytest

from tests.cli.fuzz import Outcome, run
from tests.cli.size_fuzz import play, problems

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


def _sweep(seeds: range, folder: Path, *, say: bool = False) -> tuple[list[str], dict[str, int]]:
    """Play the kernel cases of ``seeds``; every problem found and the exit codes by command."""
    found: list[str] = []
    codes: dict[str, int] = {}
    for seed in seeds:
        case = play(seed, folder)
        found += problems(case)
        for o, _, _ in case.outcomes:
            key = f"{o.argv[0]} {o.code}"
            codes[key] = codes.get(key, 0) + 1
        if say and seed % 100 == 99:
            print(f"size fuzz: {seed + 1 - seeds.start} cases, {len(found)} problems",
                  file=sys.stderr)
    return found, codes


def _child_peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def _children_within(before: int, bound_kb: int) -> bool:
    """Whether the largest child of a sweep stayed under ``bound_kb``. The kernel keeps one
    maximum over every child this process ever waited for (other tests' compilers and
    simulations among them), and a child's own maximum starts at this process's size when it
    was started (Linux keeps the larger of the images before and after ``exec``: pytest's
    3.2 GB in a random-order run): when it rose during the sweep, the new maximum is a child of
    the sweep (or this process grown); when it did not, none of the sweep's children passed
    ``before``, whatever that was."""
    after = _child_peak_kb()
    return after < bound_kb or after == before


def test_sizes_of_every_kernel_fast(tmp_path: Path) -> None:
    """40 cases over the bundled kernels (about 15 s)."""
    before, children = _peak_kb(), _child_peak_kb()
    found, codes = _sweep(range(40), tmp_path)
    assert found == [], "\n\n".join(found[:5])
    assert sum(codes.values()) >= 80 and codes.get("designs 0", 0) >= 40  # the cases ran
    assert _peak_kb() - before < 1_000_000 and _children_within(children, 2_000_000)


@pytest.mark.slow
def test_sizes_of_every_kernel_1000_cases(tmp_path: Path) -> None:
    """1,000 cases (some 7 minutes here): 0 internal errors, every command within budget."""
    before, children, start = _peak_kb(), _child_peak_kb(), time.perf_counter()
    found, codes = _sweep(range(1000, 2000), tmp_path, say=True)
    print(f"size fuzz: 1000 cases, {sum(codes.values())} commands in "
          f"{time.perf_counter() - start:.0f} s, {len(found)} problems, peak memory "
          f"+{(_peak_kb() - before) / 1024:.0f} MB (children {_child_peak_kb() / 1024:.0f} MB); "
          f"{dict(sorted(codes.items()))}", file=sys.stderr)
    assert found == [], "\n\n".join(found[:20])
    assert _peak_kb() - before < 1_000_000 and _children_within(children, 2_000_000)
