"""Random bad input never ends in a traceback or an internal error: every command line
exits 0 or 2 (``fuzz.py`` draws them). The default run tries a few dozen; the ``slow``
variant 1,000 command lines and 1,000 mutated kernels (about 2 minutes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli.fuzz import Outcome, fuzz, run


@pytest.fixture(scope="module")
def descriptor(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real descriptor.json, the start of the malformed ones."""
    out = tmp_path_factory.mktemp("design") / "mm"
    o = run(["generate", "mm", "-D", "I=8", "-D", "J=8", "-D", "K=8", "--design", "ij-ij.k",
             "--tiling", "T_i1=4,T_j1=4,T_k1=4,T_i2=2,T_j2=2,T_k2=1", "--out", str(out)])
    assert o.code == 0, o.describe()
    return (out / "descriptor.json").read_text()


def _report(bad: list[Outcome]) -> str:
    return "\n\n".join(o.describe() for o in bad[:10])


def test_random_bad_input_fast(tmp_path: Path, descriptor: str) -> None:
    bad, runs = fuzz(11, tmp_path, lines=40, kernels=30, descriptor=descriptor)
    assert runs == 70
    assert bad == [], _report(bad)


@pytest.mark.slow
def test_random_bad_input_1000(tmp_path: Path, descriptor: str) -> None:
    bad, runs = fuzz(20, tmp_path, lines=1000, kernels=1000, descriptor=descriptor,
                     say=lambda msg: print(msg, file=sys.stderr))
    print(f"fuzz: {runs} runs (1,000 command lines, 1,000 mutated kernels), {len(bad)} bad",
          file=sys.stderr)
    assert runs == 2000
    assert bad == [], _report(bad)


def test_the_fuzzer_sees_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not vacuous: an unexpected exception counts as bad."""
    import odyssey.cli.design_cmds as design_cmds

    def boom(args: object) -> int:
        raise ValueError("boom")

    monkeypatch.setattr(design_cmds, "_cmd_designs", boom)
    o = run(["designs", "mm"])
    assert o.code == 2 and "internal error: ValueError: boom" in o.err
    assert "Traceback" not in o.err and not o.ok
