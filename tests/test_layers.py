"""Imports flow one way through the pipeline's packages (docs/architecture.md):
cli -> studies | report -> network -> tune -> model -> codegen -> mapping | frontend -> polyhedral,
with errors, expr, platforms and plots as leaves every layer may use."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "odyssey"
RANK = {"errors": 0, "expr": 1, "platforms": 1, "plots": 1, "polyhedral": 2, "frontend": 3,
        "mapping": 3, "codegen": 4, "model": 5, "tune": 6, "network": 7, "studies": 8, "report": 8,
        "cli": 9}


def _package(path: Path) -> str:
    rel = path.relative_to(ROOT).parts
    return rel[0][:-3] if len(rel) == 1 else rel[0]


def test_imports_flow_one_way() -> None:
    wrong = []
    for path in ROOT.rglob("*.py"):
        pkg = _package(path)
        if pkg not in RANK:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] != "odyssey" or len(parts) < 2 or parts[1] not in RANK:
                    continue
                if parts[1] != pkg and RANK[parts[1]] >= RANK[pkg]:
                    wrong.append(f"{path.relative_to(ROOT.parent)}: {pkg} imports {name}")
    assert wrong == []
