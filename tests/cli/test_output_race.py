"""Two runs writing one --json: the later write says it replaced the other run's result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odyssey.cli import main


def test_json_written_meanwhile_by_another_run_is_noted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from odyssey.cli import _output

    out = tmp_path / "designs.json"
    out.write_text("[]\n")
    real = _output.emit_text

    def other_run_first(target: Any, text: str, option: str) -> None:
        Path(target).write_text('["the other run"]\n')  # as a second run would, meanwhile
        real(target, text, option)

    monkeypatch.setattr(_output, "emit_text", other_run_first)
    assert main(["designs", "mm", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"--json {out} was written by another run while this one ran" in err
    assert isinstance(json.loads(out.read_text()), list) and "other run" not in out.read_text()
    # a file that only existed before is replaced without a word
    monkeypatch.setattr(_output, "emit_text", real)
    assert main(["designs", "mm", "--json", str(out)]) == 0
    assert "another run" not in capsys.readouterr().err


def test_progress_line_in_a_log_shows_the_first_line_at_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    from odyssey.cli._common import ProgressLine

    line = ProgressLine(every=60.0, live=False)
    line("first")
    line("second")  # within the minute: not printed
    line("third", force=True)
    assert capsys.readouterr().err.splitlines() == ["first", "third"]
