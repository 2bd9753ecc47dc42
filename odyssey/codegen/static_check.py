"""Static checks of a generated design, read from its printed C++ (``odyssey check DIR``).

Nothing here reads the generator's own data (the descriptor): every fact comes from
``kernel.cpp`` and ``hls.tcl`` as a Vitis user would hand them to the tool, so a generator bug
cannot hide behind the number it would be checked against. The parser knows the shape of
printed odyssey designs (functions at column 0, one statement per line), not all of C++.

Rules, with their source in the Vitis HLS user guide (UG1399):

* **Dataflow channels** ("Dataflow", "Canonical Forms"; "Specifying Arrays as Stream-of-Blocks"):
  every stream and stream of blocks declared in a dataflow region has exactly one producer and
  one consumer process, which are different processes; **the producer is called before the
  consumer** (C simulation runs the processes in call order, so a consumer called first reads
  nothing); the channels form no cycle.
* **Pragma targets** ("pragma HLS stream", "pragma HLS array_partition", "pragma HLS
  dependence", "pragma HLS interface"): ``STREAM`` names a declared ``hls::stream``;
  ``ARRAY_PARTITION`` names a declared array in its function, not a stream of blocks (the
  pragma partitions arrays); ``DEPENDENCE variable=`` names a declared array or scalar, not a
  lock object; every pointer argument of the top function has an ``m_axi`` INTERFACE with a
  ``depth`` (co-simulation sizes its memory model by it).
* **Start propagation** ("Specifying Compiler-Created FIFO Depth", "pragma HLS dataflow"): every
  ``DATAFLOW`` pragma says ``disable_start_propagation``: the processes are driven by their
  channels alone, and the start FIFOs Vitis would add otherwise are in no resource model.
* **Clock**: ``create_clock -period`` of ``hls.tcl`` equals the platform's kernel clock.
* **Memory banks** (UG1393 "Kernel Interfaces": one AXI port per m_axi bundle; "Mapping Kernel
  Ports to Memory": ``sp=<cu>.<argument>:<memory>``): every m_axi INTERFACE names a
  ``bundle``; when the design has a ``connectivity.cfg``, it binds every pointer argument of
  ``kernel0`` exactly once, and the arguments of one bundle to one memory (an AXI port reaches
  one bank).

* **Initiation intervals** (:mod:`odyssey.codegen.ii_check`): the smallest II each pipelined
  loop's memory ports and recurrences allow is computed from the code; a bound above the
  declared ``PIPELINE II`` is an error (Vitis will not reach it, the model would be optimistic),
  and so is a bound below it on a loop whose II comes from its recurrence (the generator and the
  code disagree on the distance). A feeder declaring its PE's II without a recurrence of its own
  runs at that pace on purpose.

``ARRAY_PARTITION`` on a stream of blocks is reported as a *warning*: UG1399 documents the
pragma on arrays and does not say whether it applies to the blocks of an
``hls::stream_of_blocks`` (public HLS code applies ``ARRAY_RESHAPE`` to one); we cannot settle
it without Vitis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from odyssey.codegen.ii_check import LoopII, Memory, c_eval, loop_ii, parse_body, pipelined_loops
from odyssey.errors import OdysseyError

_FUNC = re.compile(r'^(?:extern "C" )?void (\w+)\((.*)\) \{$')
_STREAM_DECL = re.compile(r"^\s*hls::stream<(.+)> (\w+)\(")
_BLOCKS_DECL = re.compile(r"^\s*hls::stream_of_blocks<(.+)> (\w+);")
_ARRAY_DECL = re.compile(r"^\s*(?:static )?[A-Za-z_][\w:<>]*(?: [\w:<>]+)*? (\w+)((?:\[[^\]]+\])+)(?: = .*)?;$")
_SCALAR_DECL = re.compile(r"^\s*(?:static )?[\w:<>]+ (\w+)(?: = .*)?;$")
_CALL = re.compile(r"^\s*(?:ODYSSEY_TASK\()?(\w+)(?:<([^>]*)>)?\((.*?)\)\)?;$")
_PRAGMA = re.compile(r"^\s*#pragma HLS (\w+)(.*)$", re.I)
_CLOCK = re.compile(r"create_clock\s+-period\s+([0-9.]+)")


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: what is wrong, where (function or file), and why it matters (the rule)."""

    what: str
    where: str
    why: str

    def as_json(self) -> dict[str, str]:
        return {"what": self.what, "where": self.where, "why": self.why}


@dataclass(frozen=True, slots=True)
class CFunction:
    name: str
    params: tuple[tuple[str, str], ...]  # (type text, name)
    body: tuple[str, ...]  # lines between the braces


@dataclass
class CheckReport:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    processes: list[str] = field(default_factory=list)
    channels: int = 0
    loops: list[LoopII] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def modules(self) -> list[str]:
        """The distinct functions the processes call: the modules HLS synthesizes (one per
        function, instantiated per call)."""
        return sorted({p.split("<")[0] for p in self.processes})

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "processes": len(self.processes), "modules": len(self.modules),
                "channels": self.channels,
                "loops": [lp.as_json() for lp in self.loops],
                "problems": [p.as_json() for p in self.problems],
                "warnings": [p.as_json() for p in self.warnings]}


def position_params(f: CFunction) -> list[str]:
    """The leading ``int p_*`` parameters of a process: its position in the array."""
    out = []
    for ctype, name in f.params:
        if ctype != "int" or not name.startswith("p_"):
            break
        out.append(name)
    return out


def call_label(func: str, args: list[str], callee: CFunction) -> str:
    """A process call's name with its position, ``PE<0, 1>`` (as the timed simulation names it)."""
    k = len(position_params(callee))
    return f"{func}<{', '.join(args[:k])}>" if k else func


def parse_functions(text: str) -> dict[str, CFunction]:
    """Function definitions of printed C++ (one definition for all positions of a process)."""
    lines = text.splitlines()
    out: dict[str, CFunction] = {}
    k = 0
    while k < len(lines):
        m = _FUNC.match(lines[k])
        if m is None:
            k += 1
            continue
        end = k + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        out[m.group(1)] = CFunction(m.group(1), tuple(_split_params(m.group(2))), tuple(lines[k + 1:end]))
        k = end + 1
    return out


def _split_params(text: str) -> list[tuple[str, str]]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    out = []
    for p in parts:
        p = p.strip()
        m = re.match(r"^(.*?)[\s&*]*(\w+)$", p)
        if m is not None:
            out.append((p[: len(p) - len(m.group(2))].strip(), m.group(2)))
    return out


def channel_use(f: CFunction, param: str) -> set[str]:
    """How ``f`` uses its stream (of blocks) parameter: ``{"in"}``, ``{"out"}``, both or none."""
    use: set[str] = set()
    name = re.escape(param)
    for line in f.body:
        if re.search(rf"\b{name}\.read(_nb)?\(", line) or re.search(rf"read_lock<[^>]*> \w+\({name}\)", line):
            use.add("in")
        if re.search(rf"\b{name}\.write(_nb)?\(", line) or re.search(rf"write_lock<[^>]*> \w+\({name}\)", line):
            use.add("out")
    return use


def check_design(design_dir: Path, *, clock_mhz: float | None = None) -> CheckReport:
    """Run every rule of the module docstring on the design in ``design_dir``."""
    d = Path(design_dir)
    src = d / "kernel.cpp"
    if not src.is_file():
        raise OdysseyError(f"{d}: no kernel.cpp; give a design directory written by `odyssey generate`")
    funcs = parse_functions(src.read_text())
    report = CheckReport()
    regions = [f for f in funcs.values() if any(_is_pragma(ln, "DATAFLOW") for ln in f.body)]
    if not regions:
        report.problems.append(Problem("no function has `#pragma HLS DATAFLOW`", str(src),
                                       "the array's processes must form a dataflow region"))
    for region in regions:
        _check_region(region, funcs, report)
        pragma = next(ln for ln in region.body if _is_pragma(ln, "DATAFLOW"))
        if "disable_start_propagation" not in pragma.lower():
            report.problems.append(Problem(
                "`#pragma HLS DATAFLOW` without `disable_start_propagation`", region.name,
                "Vitis then adds a start FIFO per process, which no resource model counts; every process "
                "here is driven by its channels (UG1399, Specifying Compiler-Created FIFO Depth)"))
    for f in funcs.values():
        _check_pragma_targets(f, report)
    _check_top(funcs, report)
    defines = _defines((d / "kernel.h").read_text() if (d / "kernel.h").is_file() else "")
    for region in regions:
        _check_iis(region, funcs, defines, report)
    if clock_mhz is not None:
        _check_clock(d / "hls.tcl", clock_mhz, report)
    if "kernel0" in funcs:
        _check_banks(funcs["kernel0"], d / "connectivity.cfg", report)
    return report


_SP = re.compile(r"^\s*sp\s*=\s*kernel0_\d+\.(\w+)\s*:\s*(\S+)\s*$", re.M)


def _check_banks(top: CFunction, cfg: Path, report: CheckReport) -> None:
    """The memory-bank rule of the module docstring."""
    bundles: dict[str, str] = {}
    for line in top.body:
        m = _PRAGMA.match(line)
        if m is None or m.group(1).upper() != "INTERFACE" or "m_axi" not in m.group(2):
            continue
        port = re.search(r"port=(\w+)", m.group(2))
        bundle = re.search(r"\bbundle=(\w+)", m.group(2))
        if port is None:
            continue
        if bundle is None:
            report.problems.append(Problem(f"m_axi port `{port.group(1)}` names no bundle", "kernel0",
                                           "ports without a bundle share the default one (UG1399, M_AXI "
                                           "bundles), whatever their DRAM channel"))
            continue
        bundles[port.group(1)] = bundle.group(1)
    if not cfg.is_file():
        return
    memory: dict[str, list[str]] = {}
    for m in _SP.finditer(cfg.read_text()):
        memory.setdefault(m.group(1), []).append(m.group(2))
    pointers = [name for ctype, name in top.params if "*" in ctype]
    for name in pointers:
        if len(memory.get(name, [])) != 1:
            report.problems.append(Problem(f"`{name}` is bound {len(memory.get(name, []))} times in {cfg.name}",
                                           str(cfg), "v++ --connectivity.sp binds each kernel argument to "
                                           "one memory (UG1393, Mapping Kernel Ports to Memory)"))
    on: dict[str, set[str]] = {}
    for name in pointers:
        if name in bundles and len(memory.get(name, [])) == 1:
            on.setdefault(bundles[name], set()).add(memory[name][0])
    for name, mems in sorted(on.items()):
        if len(mems) > 1:
            report.problems.append(Problem(f"bundle `{name}` is bound to {', '.join(sorted(mems))}", str(cfg),
                                           "the arguments of one bundle share one AXI port (UG1393, Kernel "
                                           "Interfaces), which reaches one memory"))


_DEFINE = re.compile(r"^#define (\w+) (-?\d+)$", re.M)
_TYPEDEF_ARRAY = re.compile(r"^typedef ([\w: <>]+?) (\w+)((?:\[\d+\])+);$", re.M)


def _defines(header: str) -> dict[str, object]:
    """Integer ``#define``s and array typedefs (``name -> (elem, dims)``) of ``kernel.h``."""
    out: dict[str, object] = {m.group(1): int(m.group(2)) for m in _DEFINE.finditer(header)}
    for m in _TYPEDEF_ARRAY.finditer(header):
        out["typedef:" + m.group(2)] = (m.group(1), tuple(int(x) for x in re.findall(r"\[(\d+)\]", m.group(3))))
    return out


def _partitions_of(lines: tuple[str, ...], name: str) -> tuple[tuple[int, int], ...]:
    out = []
    for line in lines:
        m = _PRAGMA.match(line)
        if m is None or m.group(1).upper() not in ("ARRAY_PARTITION", "ARRAY_RESHAPE"):
            continue
        if re.search(rf"variable={name}\b", m.group(2)) is None:
            continue
        dim = re.search(r"dim=(\d+)", m.group(2))
        factor = re.search(r"factor=(\d+)", m.group(2))
        if dim is not None and factor is not None:
            out.append((int(dim.group(1)), int(factor.group(1))))
    return tuple(out)


def _check_iis(region: CFunction, funcs: dict[str, CFunction], defines: dict[str, object],
               report: CheckReport) -> None:
    """The II of every pipelined loop of every process called in ``region``."""
    from odyssey.platforms import op_cost

    ints = {k: v for k, v in defines.items() if isinstance(v, int)}
    first_call: dict[str, list[str]] = {}
    for line in region.body:
        m = _CALL.match(line)
        if m is not None and m.group(1) in funcs and m.group(1) not in first_call:
            first_call[m.group(1)] = [a.strip() for a in m.group(3).split(",")]
    latency: dict[str, int] = {}
    for t in ("float", "double", "int", "short", "char", "long"):
        try:
            latency[t] = op_cost(t, "add")[1]
        except OdysseyError:
            continue
    for fname, args in first_call.items():
        f = funcs[fname]
        tree = parse_body(f.body)
        env: dict[str, int] = dict(ints)
        for line in f.body:  # every loop variable, position and scalar at 0
            for v in re.findall(r"for \(int (\w+) =", line):
                env[v] = 0
        for ctype, pname in f.params:
            if ctype == "int":
                env[pname] = 0
        for v in re.findall(r"\bp_\w+\b", "\n".join(f.body)):
            env.setdefault(v, 0)
        memories = _memories(f, args, region, defines, env)
        deps: dict[str, int] = {}
        for line in f.body:
            m = _PRAGMA.match(line)
            if m is not None and m.group(1).upper() == "DEPENDENCE":
                var = re.search(r"variable=(\w+)", m.group(2))
                dist = re.search(r"distance=(\d+)", m.group(2))
                if var is not None and "dependent=false" in m.group(2).replace(" ", ""):
                    deps[var.group(1)] = 10**9
                elif var is not None and dist is not None:
                    deps[var.group(1)] = int(dist.group(1))
        for outer, loop in pipelined_loops(tree):
            lii = loop_ii(fname, outer, loop, env, memories, deps, latency)
            report.loops.append(lii)
            if lii.bound_ii > lii.declared_ii:
                report.problems.append(Problem(
                    f"loop `{lii.loop}` declares II={lii.declared_ii}, the code reaches II={lii.bound_ii}"
                    + (f" ({lii.reason})" if lii.reason else ""), fname,
                    "the declared II is what the model uses; Vitis schedules what ports and "
                    "recurrences allow (UG1399, pragma HLS pipeline)"))
            elif lii.has_recurrence and lii.declared_ii > lii.bound_ii:
                report.problems.append(Problem(
                    f"loop `{lii.loop}` declares II={lii.declared_ii} for its recurrence, which allows "
                    f"II={lii.bound_ii}", fname,
                    "the generator and the code disagree on the recurrence's distance: the model "
                    "is pessimistic"))
            if lii.dependence_error:
                report.problems.append(Problem(lii.dependence_error, fname,
                                               "Vitis trusts the pragma's distance (UG1399, pragma HLS dependence)"))


def _memories(f: CFunction, args: list[str], region: CFunction, defines: dict[str, object],
              env: dict[str, int]) -> dict[str, Memory]:
    """What each array name of ``f`` is: a DRAM port, a block held by a lock (its partitions
    are those of the stream of blocks the region passes), or a local array."""
    out: dict[str, Memory] = {}
    arg_of = {p[1]: a for p, a in zip(f.params, args, strict=False)}
    for ctype, pname in f.params:
        if "*" in ctype:
            out[pname] = Memory((), (), "axi")
    for line in f.body:
        m = re.match(r"^\s*hls::(?:read|write)_lock<(\w+)> (\w+)\((\w+)\);", line)
        if m is not None:
            info = defines.get("typedef:" + m.group(1))
            if isinstance(info, tuple):
                elem, dims = info
                out[m.group(2)] = Memory(tuple(dims), _partitions_of(region.body, arg_of.get(m.group(3), "")),
                                         "bram", str(elem).strip())
            continue
        m2 = _ARRAY_DECL.match(line)
        if m2 is not None and "=" not in line.split("[", 1)[0]:
            dims = tuple(c_eval(x, env) for x in re.findall(r"\[([^\[\]]*)\]", m2.group(2)))
            elem = line.strip().split(" ")[0]
            out[m2.group(1)] = Memory(dims, _partitions_of(f.body, m2.group(1)), "bram", elem)
    return out


def _is_pragma(line: str, name: str) -> bool:
    m = _PRAGMA.match(line)
    return m is not None and m.group(1).upper() == name


def _check_region(region: CFunction, funcs: dict[str, CFunction], report: CheckReport) -> None:
    declared: dict[str, str] = {}
    for line in region.body:
        if (m := _STREAM_DECL.match(line)) is not None:
            declared[m.group(2)] = "stream"
        elif (m := _BLOCKS_DECL.match(line)) is not None:
            declared[m.group(2)] = "stream_of_blocks"
    report.channels += len(declared)
    producers: dict[str, list[int]] = {c: [] for c in declared}
    consumers: dict[str, list[int]] = {c: [] for c in declared}
    calls: list[str] = []
    for line in region.body:
        m = _CALL.match(line)
        if m is None or m.group(1) not in funcs:
            continue
        callee = funcs[m.group(1)]
        args = [a.strip() for a in m.group(3).split(",")] if m.group(3).strip() else []
        label = call_label(m.group(1), args, callee)
        k = len(calls)
        calls.append(label)
        if len(args) != len(callee.params):
            report.problems.append(Problem(f"call of `{label}` passes {len(args)} arguments for "
                                           f"{len(callee.params)} parameters", region.name, "C++"))
            continue
        for (_, pname), arg in zip(callee.params, args, strict=True):
            if arg not in declared:
                continue
            use = channel_use(callee, pname)
            if use == {"in", "out"}:
                report.problems.append(Problem(f"process `{label}` both reads and writes `{arg}`",
                                               region.name, "a channel links two different processes (UG1399, Dataflow)"))
            if "out" in use:
                producers[arg].append(k)
            if "in" in use:
                consumers[arg].append(k)
    report.processes.extend(calls)
    for ch, kind in declared.items():
        p, c = producers[ch], consumers[ch]
        if len(p) != 1 or len(c) != 1:
            report.problems.append(Problem(
                f"{kind} `{ch}` has {len(p)} producer(s) and {len(c)} consumer(s)", region.name,
                "every channel of a dataflow region has exactly one producer and one consumer (UG1399, Dataflow)"))
            continue
        if p[0] > c[0]:
            report.problems.append(Problem(
                f"{kind} `{ch}` is read by `{calls[c[0]]}` (call {c[0] + 1}) before its producer "
                f"`{calls[p[0]]}` (call {p[0] + 1}) is called", region.name,
                "C simulation runs the processes in call order: the consumer would read an empty "
                "channel; call producers first (UG1399, Dataflow)"))


def _check_pragma_targets(f: CFunction, report: CheckReport) -> None:
    streams, blocks, arrays, scalars, locks = set(), set(), set(), set(), set()
    for line in f.body:
        if (m := _STREAM_DECL.match(line)) is not None:
            streams.add(m.group(2))
        elif (m := _BLOCKS_DECL.match(line)) is not None:
            blocks.add(m.group(2))
        elif (m := re.match(r"^\s*hls::(?:read|write)_lock<[^>]*> (\w+)\(", line)) is not None:
            locks.add(m.group(1))
        elif (m := _ARRAY_DECL.match(line)) is not None:
            arrays.add(m.group(1))
        elif (m := _SCALAR_DECL.match(line)) is not None:
            scalars.add(m.group(1))
    params = {n for _, n in f.params}
    for line in f.body:
        m = _PRAGMA.match(line)
        if m is None:
            continue
        kind, rest = m.group(1).upper(), m.group(2)
        var = re.search(r"variable=(\w+)", rest)
        if var is None:
            continue
        name = var.group(1)
        if kind == "STREAM" and name not in streams and name not in params:
            report.problems.append(Problem(f"STREAM pragma on `{name}`, which is not a declared hls::stream",
                                           f.name, "pragma HLS stream applies to streams (UG1399)"))
        if kind == "BIND_STORAGE" and "type=fifo" in rest.lower() and name not in streams:
            report.problems.append(Problem(f"BIND_STORAGE type=fifo on `{name}`, which is not a declared "
                                           "hls::stream", f.name,
                                           "type=fifo binds a stream's storage (UG1399, pragma HLS bind_storage)"))
        if kind == "ARRAY_PARTITION" and name in blocks:
            report.warnings.append(Problem(f"ARRAY_PARTITION on `{name}`, a stream of blocks", f.name,
                                           "UG1399 documents the pragma on arrays; whether Vitis applies it "
                                           "to the blocks of a stream of blocks is not verified here"))
        elif kind == "ARRAY_PARTITION" and name not in arrays:
            what = "a lock" if name in locks else "not a declared array"
            report.problems.append(Problem(f"ARRAY_PARTITION on `{name}`, {what}", f.name,
                                           "pragma HLS array_partition partitions an array declared in the "
                                           "function (UG1399)"))
        if kind == "DEPENDENCE" and name not in arrays and name not in scalars:
            what = "an hls lock object" if name in locks else "not a declared array or scalar"
            report.problems.append(Problem(f"DEPENDENCE on `{name}`, {what}", f.name,
                                           "pragma HLS dependence names an array or scalar variable (UG1399); "
                                           "on anything else the recurrence it describes stays"))


def _check_top(funcs: dict[str, CFunction], report: CheckReport) -> None:
    top = funcs.get("kernel0")
    if top is None:
        report.problems.append(Problem("no top function `kernel0`", "kernel.cpp", "the host calls kernel0"))
        return
    iface: dict[str, str] = {}
    for line in top.body:
        m = _PRAGMA.match(line)
        if m is not None and m.group(1).upper() == "INTERFACE":
            port = re.search(r"port=(\w+)", m.group(2))
            if port is not None:
                iface[port.group(1)] = m.group(2)
    for ctype, name in top.params:
        if "*" not in ctype:
            if "s_axilite" not in iface.get(name, ""):
                report.problems.append(Problem(f"scalar argument `{name}` has no s_axilite INTERFACE", "kernel0",
                                               "a kernel's scalar arguments are set by the host through AXI-lite "
                                               "registers (UG1399, pragma HLS interface)"))
            continue
        spec = iface.get(name)
        if spec is None or "m_axi" not in spec:
            report.problems.append(Problem(f"pointer argument `{name}` has no m_axi INTERFACE", "kernel0",
                                           "top-level pointers are AXI masters (UG1399, pragma HLS interface)"))
        elif not re.search(r"depth=\d+", spec):
            report.problems.append(Problem(f"m_axi port `{name}` has no depth", "kernel0",
                                           "co-simulation sizes the port's memory model by depth "
                                           "(UG1399, pragma HLS interface)"))


def _check_clock(tcl: Path, clock_mhz: float, report: CheckReport) -> None:
    if not tcl.is_file():
        report.problems.append(Problem("no hls.tcl", str(tcl), "a Vitis user runs it"))
        return
    m = _CLOCK.search(tcl.read_text())
    want = 1000.0 / clock_mhz
    if m is None or abs(float(m.group(1)) - want) > 0.01:
        got = m.group(1) if m else "none"
        report.problems.append(Problem(f"create_clock -period {got} ns, the platform's clock is "
                                       f"{clock_mhz:g} MHz ({want:.3f} ns)", str(tcl),
                                       "synthesis schedules for the clock it is given"))
