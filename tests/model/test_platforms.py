"""Tests for odyssey.platforms: bundled data, validation messages and operator costs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from odyssey.errors import ModelError, PlatformError
from odyssey.platforms import (
    RESOURCES,
    available,
    list_platforms,
    load_op_costs,
    load_platform,
    mac_cost,
    op_cost,
)

# Device totals from the AMD Alveo data sheets (DS962 for U200/U250, DS963 for U280);
# the VU9P is the U200 die. (dsp, bram18k, uram, lut, ff)
DATASHEET = {
    "u250": (12288, 5376, 1280, 1728000, 3456000),
    "u280": (9024, 4032, 960, 1303680, 2607360),
    "u200": (6840, 4320, 960, 1182240, 2364480),
    "vu9p": (6840, 4320, 960, 1182240, 2364480),
}


def test_bundled_platforms_are_listed() -> None:
    assert list_platforms() == ["u200", "u250", "u280", "vu9p"]


@pytest.mark.parametrize("name", sorted(DATASHEET))
def test_bundled_platforms_have_datasheet_numbers(name: str) -> None:
    p = load_platform(name)
    r = p.resources
    assert (r.dsp, r.bram18k, r.uram, r.lut, r.ff) == DATASHEET[name]
    assert p.name == name and p.clock_mhz == 300
    assert p.source and p.origin == f"odyssey/platforms/{name}.json"
    assert p.bram18k.bits == 18 * 1024 and (36, 512) in p.bram18k.shapes
    assert (1, 16384) in p.bram18k.shapes
    assert (p.uram.width, p.uram.depth, p.uram.bits) == (72, 4096, 288 * 1024)


def test_memory_interfaces() -> None:
    u250 = load_platform("u250")
    (ddr,) = u250.memories
    assert (ddr.kind, ddr.channels, ddr.bandwidth_gbps_per_channel) == ("DDR4-2400", 4, 19.2)
    assert ddr.port_width_bits == 512 and ddr.bytes_per_beat == 64
    assert ddr.total_bandwidth_gbps == pytest.approx(76.8)
    assert "UG1120" in ddr.source and "UG1393" in ddr.source
    hbm, ddr280 = load_platform("u280").memories
    assert (hbm.kind, hbm.channels) == ("HBM2", 32)
    assert hbm.total_bandwidth_gbps == pytest.approx(460.0)
    assert (ddr280.kind, ddr280.channels) == ("DDR4-2400", 2)
    assert load_platform("u280").kernel_memory == hbm and u250.kernel_memory == ddr
    assert [load_platform(n).kernel_memory.channels for n in ("u200", "vu9p")] == [4, 4]


def test_channel_bytes_per_cycle_derived_from_bandwidth_and_clock() -> None:
    """Bytes per kernel cycle = GB/s * 1000 / MHz: DDR4-2400 (19.2 GB/s) at 300 MHz moves one
    512-bit word per cycle; an HBM2 pseudo-channel (14.375 GB/s) 47.9 bytes."""
    ddr = load_platform("u250").kernel_memory
    assert ddr.bytes_per_cycle(300) == pytest.approx(64.0)
    assert ddr.bytes_per_cycle(200) == pytest.approx(96.0)
    hbm = load_platform("u280").kernel_memory
    assert hbm.bytes_per_cycle(300) == pytest.approx(14375 / 300)
    assert (ddr.connectivity(2), hbm.connectivity(31)) == ("DDR[2]", "HBM[31]")


def test_usable_fraction_default_and_override() -> None:
    p = load_platform("u250")
    for r in RESOURCES:
        assert getattr(p.usable_fraction, r) == 0.7
    # the budget is the shell's kernel region (u250.json kernel_region), 70% of it
    assert available(p, "dsp") == pytest.approx(12273 * 0.7)
    assert available(p, "bram18k") == pytest.approx(4672 * 0.7)
    q = load_platform("U250", usable_fraction=0.85)
    assert available(q, "dsp") == pytest.approx(12273 * 0.85)
    assert available(q, "uram") == pytest.approx(1280 * 0.85)


@pytest.mark.parametrize("bad", [0, 1.5, -0.1, True, "0.7"])
def test_usable_fraction_argument_is_checked(bad: Any) -> None:
    with pytest.raises(PlatformError, match=r"usable_fraction must be a number in \(0, 1\]"):
        load_platform("u250", usable_fraction=bad)


def test_unknown_resource_and_platform() -> None:
    with pytest.raises(PlatformError, match="unknown resource 'bram'.*dsp, bram18k, uram, lut, ff"):
        available(load_platform("u250"), "bram")
    with pytest.raises(PlatformError, match="unknown platform 'u55c'.*u200, u250, u280, vu9p"):
        load_platform("u55c")


# ------------------------------------------------------------------ user files


def _u250() -> dict[str, Any]:
    bundled = Path(__file__).parents[2] / "odyssey" / "platforms" / "u250.json"
    return json.loads(bundled.read_text())


def _write(tmp_path: Path, data: Any, name: str = "my.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_user_file_loads_with_its_own_fractions(tmp_path: Path) -> None:
    data = _u250()
    data["name"] = "half_u250"
    data["resources"]["dsp"] = 6144
    del data["kernel_region"]  # no region: the budget is the device's
    data["usable_fraction"] = {"dsp": 0.9}
    p = load_platform(_write(tmp_path, data))
    assert p.name == "half_u250" and p.origin.endswith("my.json")
    assert available(p, "dsp") == pytest.approx(6144 * 0.9)
    assert p.usable_fraction.lut == 0.7  # keys left out keep the default


def _edit(path: list[Any], value: Any = None, *, delete: bool = False) -> dict[str, Any]:
    data = copy.deepcopy(_u250())
    node = data
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            _edit(["resources", "dsp"], -3),
            "my.json: resources.dsp must be a positive integer, got -3",
        ),
        (
            _edit(["resources", "dsp"], "12288"),
            'my.json: resources.dsp must be a positive integer, got "12288"',
        ),
        (
            _edit(["resources", "lut"], 1.5e6),
            "my.json: resources.lut must be a positive integer, got 1500000.0",
        ),
        (
            _edit(["clock_mhz"], 0),
            r"my.json: clock_mhz must be a number in \(0, 10000\], got 0",
        ),
        (
            _edit(["usable_fraction", "dsp"], 1.2),
            r"my.json: usable_fraction.dsp must be a number in \(0, 1\], got 1.2",
        ),
        (
            _edit(["memories", 0, "channels"], 0),
            r"my.json: memories\[0\].channels must be a positive integer, got 0",
        ),
        (
            _edit(["memories", 0, "bandwidth_gbps_per_channel"], -1),
            r"my.json: memories\[0\].bandwidth_gbps_per_channel must be a positive number, got -1",
        ),
        (
            _edit(["memories", 0, "source"], delete=True),
            r"my.json: missing required key 'memories\[0\].source' \(a non-empty string\)",
        ),
        (
            _edit(["memories"], []),
            "my.json: memories must be a list of at least 1 item",
        ),
        (
            _edit(["resources", "uram"], delete=True),
            "my.json: missing required key 'resources.uram' \\(an integer >= 0\\)",
        ),
        (
            _edit(["part"], delete=True),
            "my.json: missing required key 'part' \\(a non-empty string\\)",
        ),
        (
            _edit(["resources", "dsps"], 10),
            "my.json: unknown key 'resources.dsps'; the keys allowed here are "
            "bram18k, dsp, ff, lut, uram \\(remove it or fix its spelling\\)",
        ),
        (
            _edit(["clock"], 300),
            "my.json: unknown key 'clock'",
        ),
        (
            _edit(["memory_blocks", "bram18k", "shapes", 5, "depth"], 1024),
            r"my.json: memory_blocks.bram18k.shapes\[5\] is 36 x 1024 = 36864 bits, more than",
        ),
        ([1, 2], "my.json: the top level must be an object, got list"),
    ],
)
def test_malformed_files_name_key_and_value(tmp_path: Path, data: Any, message: str) -> None:
    with pytest.raises(PlatformError, match=message):
        load_platform(_write(tmp_path, data))


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match=r"my.json:2:\d+: invalid JSON"):
        load_platform(_write(tmp_path, '{"name": "x",\n "part": }'))


# ---------------------------------------------------------------- operator costs


def test_op_costs_table() -> None:
    assert mac_cost("fp32") == (5, 12)
    assert mac_cost("float")[0] == 5
    assert op_cost("fp32", "mul") == (3, 4)
    assert op_cost("fp32", "add") == (2, 8)
    assert op_cost("fp64", "mul") == (11, 6)
    assert op_cost("fp64", "add") == (3, 8)
    assert op_cost("int32", "mul") == (3, 3)
    assert op_cost("int32", "add")[0] == 0
    assert op_cost("int16", "mul")[0] == 1
    assert op_cost("int8", "mul")[0] == 1
    assert op_cost("short", "mul") == op_cost("int16", "mul")


def test_unknown_op_cost_lists_known_combinations() -> None:
    with pytest.raises(ModelError, match=r"no operator cost for 'mul' on dtype 'fp16'.*fp32: mul"):
        op_cost("fp16", "mul")
    with pytest.raises(ModelError, match=r"'div' on dtype 'fp32'"):
        op_cost("fp32", "div")


def test_user_op_table_is_validated(tmp_path: Path) -> None:
    table = {
        "source": "test",
        "clock_mhz": 250,
        "aliases": {"half": "fp16"},
        "ops": {"fp16": {"mul": {"dsp": 2, "latency": 5}}},
    }
    costs = load_op_costs(_write(tmp_path, table, "ops.json"))
    assert op_cost("half", "mul", costs=costs) == (2, 5)
    table["ops"] = {"fp16": {"mul": {"dsp": -1, "latency": 5}}}
    with pytest.raises(PlatformError, match=r"ops.fp16.mul.dsp must be an integer >= 0, got -1"):
        load_op_costs(_write(tmp_path, table, "ops.json"))
    table["ops"] = {"fp32": {"mul": {"dsp": 3, "latency": 4}}}
    with pytest.raises(PlatformError, match="aliases.half points to 'fp16'"):
        load_op_costs(_write(tmp_path, table, "ops.json"))
