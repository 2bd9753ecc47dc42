"""The one module that writes generated designs to disk, atomically.

Files go to a temporary sibling directory that is renamed into place once every file is
written, so a failure leaves nothing half-written. An existing directory is replaced
only when it holds an earlier odyssey design (it has a ``descriptor.json``).
"""

from __future__ import annotations

from pathlib import Path

from odyssey.codegen.generate import GeneratedDesign
from odyssey.errors import CodegenError
from odyssey.fsutil import write_dir_atomically


def write_design(design: GeneratedDesign, out: Path) -> Path:
    out = Path(out)
    if out.exists() and not (out / "descriptor.json").is_file():
        raise CodegenError(
            f"{out}: exists and is not an odyssey design directory; choose another --out or "
            "remove it"
        )

    def fill(tmp: Path) -> None:
        for rel, text in design.files:
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    return write_dir_atomically(out, fill)
