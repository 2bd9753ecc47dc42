"""Random bad input for the command line: command lines, mutated kernels and malformed
descriptor, platform and network JSON files (used by ``test_fuzz.py``).

Everything is drawn from a seeded :class:`random.Random`, so a failing case is reproduced by
its seed and index. Budgets are always small (``--samples``, ``--time``), so a command line
that happens to be valid finishes in about a second.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from odyssey.cli import main
from odyssey.frontend.bundled import KERNELS_DIR

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "odyssey" / "platforms" / "u250.json"

#: a valid small network: one conv layer of cnn.c
TINY_NET = {"format": "odyssey-network/1", "name": "tiny", "title": "tiny", "source": "fuzz",
            "layers": [{"name": "c1", "kind": "conv",
                        "sizes": {"O": 8, "I": 4, "H": 4, "W": 4, "P": 3, "Q": 3}},
                       {"name": "dw1", "kind": "depthwise",
                        "sizes": {"C": 4, "H": 4, "W": 4, "P": 3, "Q": 3}, "stride": 2}]}

#: the kernels the mutations start from
SEED_KERNELS = ("mm", "cnn", "mv", "fir", "syrk", "mttkrp", "ttmc", "dwconv")


@dataclass(frozen=True)
class Outcome:
    argv: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        """Exit 0 or 2, no traceback, no internal error (an unexpected exception)."""
        return (self.code in (0, 2) and "Traceback" not in self.err + self.out
                and "internal error" not in self.err)

    def describe(self) -> str:
        return f"odyssey {' '.join(self.argv)} -> exit {self.code}\n{self.err[-1500:]}"


def run(argv: Sequence[str]) -> Outcome:
    """``odyssey ARGV`` in this process, its exit status and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return Outcome(tuple(argv), code, out.getvalue(), err.getvalue())


# ------------------------------------------------------------------ malformed files


def _mutate_json(rng: random.Random, doc: object) -> str:
    """``doc`` as JSON, broken in one of several ways (syntax, types, missing keys, values)."""
    text = json.dumps(doc, indent=1)
    how = rng.choice((0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6))
    if how == 0:  # truncated
        return text[: rng.randrange(len(text))]
    if how == 1:  # not an object
        return rng.choice(["[]", "null", "3", '"x"', "{}", ""])
    if how == 2:  # a random character replaced
        i = rng.randrange(len(text))
        return text[:i] + rng.choice('{}[]",:0-xe ') + text[i + 1:]
    data = json.loads(text)

    def walk(node: object, depth: int = 0) -> object:
        if isinstance(node, dict) and node:
            key = rng.choice(sorted(node))
            if how == 3 and (depth > 0 or rng.random() < 0.5):
                node = {k: v for k, v in node.items() if k != key}  # a key dropped
            else:
                node = {**node, key: walk(node[key], depth + 1)}
            return node
        if isinstance(node, list) and node:
            i = rng.randrange(len(node))
            return [*node[:i], walk(node[i], depth + 1), *node[i + 1:]]
        return rng.choice([None, -1, 0, 1e308, "x", [], {}, True, -7.5, "", 10**12])

    return json.dumps(walk(data))


def malformed_platform(rng: random.Random, folder: Path, n: int) -> Path:
    path = folder / f"platform{n}.json"
    path.write_text(_mutate_json(rng, json.loads(PLATFORM.read_text())))
    return path


def malformed_network(rng: random.Random, folder: Path, n: int) -> Path:
    path = folder / f"net{n}.json"
    path.write_text(_mutate_json(rng, TINY_NET))
    return path


def malformed_design(rng: random.Random, folder: Path, n: int, descriptor: str) -> Path:
    """A copy of a generated design folder's ``descriptor.json``, broken."""
    path = folder / f"design{n}"
    path.mkdir()
    (path / "descriptor.json").write_text(_mutate_json(rng, json.loads(descriptor)))
    return path


# ------------------------------------------------------------------ mutated kernels

_TOKENS = ("while (1)", "*p", "goto x;", "A[i][j]", "i++", "+=", "-=", "*=", "/", "%", "(",
           ")", "{", "}", ";", "[", "]", "0", "-1", "1000000000000", "int", "float", "#pragma scop",
           "#pragma endscop", "#define Z 0", "#define I -3", "#include <stdio.h>", "f(i)",
           "if (i == 0)", "for (int t = 0; t < 4; t++)", "return;", "x", "\\", "/*", "\"")


def mutate_kernel(rng: random.Random, source: str) -> str:
    """``source`` with one to three random edits of lines, numbers, operators or tokens."""
    lines = source.splitlines()
    for _ in range(rng.randint(1, 3)):
        how = rng.randrange(8)
        i = rng.randrange(len(lines)) if lines else 0
        if how == 0 and lines:
            del lines[i]
        elif how == 1 and lines:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif how == 2 and lines:
            words = lines[i].split(" ")
            j = rng.randrange(len(words))
            words[j] = rng.choice(_TOKENS)
            lines[i] = " ".join(words)
        elif how == 3 and lines:
            line = lines[i]
            digits = [k for k, c in enumerate(line) if c.isdigit()]
            if digits:
                k = rng.choice(digits)
                lines[i] = line[:k] + rng.choice(["0", "-1", "99999", "2", ""]) + line[k + 1:]
        elif how == 4 and lines:
            line = lines[i]
            if line:
                k = rng.randrange(len(line))
                lines[i] = line[:k] + line[k + 1:]
        elif how == 5:
            lines.insert(i, rng.choice(_TOKENS))
        elif how == 6:
            lines = lines[: rng.randrange(len(lines) + 1)]
        else:
            text = "\n".join(lines)
            for a, b in (("+=", rng.choice(["-=", "*=", "=", "/=", "+= 1 +"])),
                         ("<", rng.choice(["<=", ">", "!=", "<<"])),
                         ("[i]", rng.choice(["[i+1]", "[i*i]", "[2*i]", "[j]", "[0]"]))):
                if a in text and rng.random() < 0.5:
                    text = text.replace(a, b, 1)
            lines = text.splitlines()
    return "\n".join(lines) + "\n"


def mutated_kernels(rng: random.Random, folder: Path, count: int) -> list[Path]:
    sources = {k: (KERNELS_DIR / f"{k}.c").read_text() for k in SEED_KERNELS}
    paths = []
    for n in range(count):
        path = folder / f"k{n}.c"
        path.write_text(mutate_kernel(rng, sources[rng.choice(SEED_KERNELS)]))
        paths.append(path)
    return paths


def kernel_command(rng: random.Random, path: Path) -> list[str]:
    """`designs` on a mutated kernel (sometimes `model` of its first design, which then
    mostly fails on the tiling)."""
    if rng.random() < 0.8:
        return ["designs", str(path), "--max-dim", rng.choice(["1", "2", "3"])]
    return ["model", str(path), "--design", "0", "--tiling", "T_i1=2"]


# ------------------------------------------------------------------ command lines

#: bad (and a few good) values of each option, by option
_BAD: dict[str, tuple[str, ...]] = {
    "-D": ("I=0", "I=-5", "Z=5", "i=1024", "I=abc", "I=", "I=1e3", "I=2.5", "I", "=4", "I=3",
           "J=7", "K=1", "I=99999999999", "O=4", "I= 8", "I=0x10", "I=1", "K=37"),
    "--design": ("i-ij.k", "1", "0", "17", "99999", "", "zz", "-1", "all", "k-ij.k"),
    "--tiling": ("T_i1=16,T_j1=16,T_k1=16,T_i2=4,T_j2=4", "T_i1=0,T_j1=1,T_k1=1,T_i2=1,T_j2=1,T_k2=1",
                 "T_i1=-4", "T_i1=x", "T_i1", "=,=,", "T_i1=4,T_i1=8,T_j1=4,T_k1=4,T_i2=2,T_j2=2,T_k2=1",
                 "T_q1=3", "T_i1=100000,T_j1=1,T_k1=1,T_i2=1,T_j2=1,T_k2=1",
                 "T_i1=3,T_j1=3,T_k1=3,T_i2=2,T_j2=1,T_k2=1", "", ",,,",
                 "T_i1=5,T_j1=3,T_k1=7,T_i2=5,T_j2=3,T_k2=7", "T_i1=16,T_j1=16,T_k1=16,T_i2=16,T_j2=16,T_k2=16"),
    "--time": ("0", "-1", "nan", "inf", "abc", "0.3", "1e-9", "", "1e-300"),
    "--samples": ("0", "-3", "x", "1", "1.5", "3"),
    "--seed": ("-1", "x", "3", "1e3", "99999999999999999999999"),
    "--method": ("zz", "random", "evolutionary", "mfbo", "exhaustive", "", "exact", "auto"),
    "--timeout": ("0", "-1", "nan", "abc", "0.3"),
    "--objectives": ("latency,dsp", "latency,power", "", "latency", "dsp,dsp", "offchip,uram"),
    "--reference": ("dsp=-1", "latency=2e6", "x", "dsp=nan", "latency=inf", "bram18k=4"),
    "--layout": ("A=row_major", "A=zz", "Z=row_major", "A", "C=serialized,B=row_major"),
    "--max-dim": ("0", "4", "x", "1", "3"),
    "--variant": ("max", "zz"),
    "--mp-solver": ("none", "zz", "scip"),
    "--fidelity": ("sim", "hls", "zz"),
    "--budget": ("0", "2", "x"),
}

#: the options of ``_BAD`` each command takes
_TAKES: dict[str, tuple[str, ...]] = {
    "designs": ("-D", "--max-dim"),
    "model": ("-D", "--design", "--tiling", "--layout", "--variant"),
    "generate": ("-D", "--design", "--tiling", "--layout", "--seed"),
    "tune": ("-D", "--design", "--time", "--samples", "--seed", "--method", "--mp-solver",
             "--fidelity", "--budget"),
    "optimum": ("-D", "--design", "--time", "--seed"),
    "pareto": ("-D", "--design", "--time", "--samples", "--seed", "--method", "--objectives",
               "--reference"),
    "network": ("--design", "--time", "--samples", "--seed", "--method"),
    "csim": ("--timeout",), "sim": ("--timeout",), "check": (), "study": ("--seed", "--time"),
}

_SMALL = ["-D", "I=16", "-D", "J=16", "-D", "K=16"]
_TILING = "T_i1=4,T_j1=4,T_k1=4,T_i2=2,T_j2=2,T_k2=1"


def _template(cmd: str, files: FuzzFiles, n: int) -> list[str]:
    """A valid command line of ``cmd`` with a small budget (csim, sim, check: on a design
    folder whose descriptor is broken)."""
    if cmd == "designs":
        return ["designs", "mm", *_SMALL]
    if cmd == "model":
        return ["model", "mm", *_SMALL, "--design", "ij-ij.k", "--tiling", _TILING]
    if cmd == "generate":
        return ["generate", "mm", *_SMALL, "--design", "ij-ij.k", "--tiling", _TILING,
                "--out", str(files.folder / f"out{n}")]
    if cmd == "tune":
        return ["tune", "mm", *_SMALL, "--design", "ij-ij.k", "--samples", "5", "--time", "0.5",
                "--method", "random"]
    if cmd == "optimum":
        return ["optimum", "mm", *_SMALL, "--design", "ij-ij.k", "--time", "0.5"]
    if cmd == "pareto":
        return ["pareto", "mm", *_SMALL, "--design", "ij-ij.k", "--samples", "40", "--time", "0.5",
                "--method", "nsga2", "--out", str(files.folder / f"out{n}")]
    if cmd == "network":
        return ["network", str(files.folder / "tiny_net.json"), "--design", "o-ohw.ipq",
                "--samples", "2", "--method", "random"]
    if cmd == "study":
        return ["study", "--list"]
    return [cmd, files.design_dir(n)]


def _set(argv: list[str], option: str, value: str) -> list[str]:
    if option in argv and option != "-D":
        i = argv.index(option)
        return [*argv[: i + 1], value, *argv[i + 2:]]
    return [*argv, option, value]


def _mutate(rng: random.Random, files: FuzzFiles, argv: list[str], n: int) -> list[str]:
    cmd = argv[0]
    how = rng.randrange(10)
    if how == 0 and cmd not in ("csim", "sim", "check", "study", "network"):
        return [cmd, files.kernel(rng), *argv[2:]]
    if how == 1:
        return _set(argv, "--json", rng.choice(("-", str(files.folder), "/proc/x/out.json",
                                                str(files.folder / "missing" / "out.json"), ".",
                                                str(files.folder / "o.json"), "")))
    if how == 2 and cmd in ("model", "tune", "optimum", "pareto", "network", "check", "sim"):
        return _set(argv, "--platform", files.platform(n))
    if how == 3 and cmd in ("generate", "pareto", "study", "tune"):
        option = "--emit" if cmd == "tune" else "--out"
        return _set(argv, option, files.bad_folder(rng))
    if how == 4 and cmd == "network":
        return [cmd, files.network(n), *argv[2:]]
    if how == 5 and len(argv) > 2:  # an option or argument dropped
        i = rng.randrange(1, len(argv))
        return argv[:i] + argv[i + 1:]
    if how == 6:
        return [*argv, rng.choice(("--bogus", "extra", "-D", "--json", "--design", "--time"))]
    if how == 7 and cmd == "study":
        bad = rng.choice(("/proc/x", str(files.folder / "notes.txt"), ".", "", str(files.folder)))
        return rng.choice((["study"], ["study", "nosuch"], ["study", "--list", "--seed", "-1"],
                           ["study", "mm-dataflows", "--quick", "--out", bad],
                           ["study", "mm-dataflows", "--time", "-1"]))
    if how == 8 and cmd == "network":
        return _set(argv, "--kernel", rng.choice(("mm", "nosuch", str(files.folder), "dwconv")))
    if not _TAKES[cmd] or rng.random() < 0.05:
        return [*argv, rng.choice(("--bogus", "extra", "--json", "-D"))]
    option = rng.choice(_TAKES[cmd])
    return _set(argv, option, rng.choice(_BAD[option]))


def command_line(rng: random.Random, files: FuzzFiles, n: int) -> list[str]:
    """A valid command line with one to three random mistakes (sometimes none)."""
    cmd = rng.choice(("designs", "model", "model", "tune", "tune", "optimum", "generate",
                      "generate", "csim", "sim", "check", "pareto", "network", "network", "study"))
    argv = _template(cmd, files, n)
    for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
        argv = _mutate(rng, files, argv, n)
    return argv


class FuzzFiles:
    """The files the command lines point at, made on demand in ``folder``."""

    def __init__(self, rng: random.Random, folder: Path, descriptor: str) -> None:
        self.rng, self.folder, self.descriptor = rng, folder, descriptor
        (folder / "empty").mkdir()
        (folder / "notes.txt").write_text("not a kernel\n")
        (folder / "tiny_net.json").write_text(json.dumps(TINY_NET))

    def kernel(self, rng: random.Random) -> str:
        return rng.choice(("mm", "mm", "mm", str(KERNELS_DIR / "mm.c"), "cnn", "nosuch",
                           str(self.folder), str(self.folder / "notes.txt"), "mv"))

    def platform(self, n: int) -> str:
        if self.rng.random() < 0.3:
            return self.rng.choice(("u250", "nosuch", str(self.folder), "u280"))
        return str(malformed_platform(self.rng, self.folder, n))

    def network(self, n: int) -> str:
        if self.rng.random() < 0.3:
            return self.rng.choice(("nosuch", str(self.folder / "tiny_net.json"),
                                    str(self.folder / "notes.txt")))
        return str(malformed_network(self.rng, self.folder, n))

    def design_dir(self, n: int) -> str:
        if self.rng.random() < 0.25:
            return self.rng.choice((str(self.folder / "empty"), str(self.folder / "nope"),
                                    str(self.folder / "notes.txt")))
        return str(malformed_design(self.rng, self.folder, n, self.descriptor))

    def out_folder(self, rng: random.Random, n: int) -> str:
        return rng.choice((str(self.folder / f"out{n}"), self.bad_folder(rng)))

    def bad_folder(self, rng: random.Random) -> str:
        return rng.choice(("/proc/x", str(self.folder / "notes.txt"), str(self.folder / "empty"),
                           ".", "", str(self.folder)))


def fuzz(seed: int, folder: Path, *, lines: int, kernels: int, descriptor: str,
         say: Callable[[str], None] | None = None) -> tuple[list[Outcome], int]:
    """Run ``lines`` random command lines and ``kernels`` mutated kernels; the bad outcomes
    and the number of runs."""
    rng = random.Random(seed)
    files = FuzzFiles(rng, folder, descriptor)
    bad: list[Outcome] = []
    runs = 0
    for n in range(lines):
        o = run(command_line(rng, files, n))
        runs += 1
        if not o.ok:
            bad.append(o)
        if say and n % 50 == 49:
            say(f"{n + 1} command lines, {len(bad)} bad")
    for n, path in enumerate(mutated_kernels(rng, folder, kernels)):
        o = run(kernel_command(rng, path))
        runs += 1
        if not o.ok:
            bad.append(o)
        if say and n % 50 == 49:
            say(f"{n + 1} kernels, {len(bad)} bad")
    return bad, runs
