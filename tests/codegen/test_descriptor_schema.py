"""The typed descriptor: every generated descriptor matches its TypedDicts, a file that does not
is refused naming the file, the key path and what was expected, and the JSON Schema printed from
the same TypedDicts says the same (checked by a small evaluator of the keywords it uses)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from odyssey.codegen import hls_ast as ast
from odyssey.codegen.descriptor import (
    SCHEMA_VERSION,
    descriptor_json_schema,
    load_descriptor,
    validate_descriptor,
)
from odyssey.codegen.descriptor_schema import STMT_KEYS, Descriptor, StmtNode, StmtType
from odyssey.codegen.generate import generate, generate_descriptor
from odyssey.codegen.roles import MODULE_KINDS, ROLE_OF_KIND, ModuleRole
from odyssey.codegen.samples import sample_tiling
from odyssey.codegen.typed_json import JsonMismatch, check_value, typed_fields
from odyssey.codegen.writer import write_design
from odyssey.errors import DescriptorError
from odyssey.expr import const, sym
from odyssey.expr.serialize import _BY_OP
from odyssey.model import model_from_descriptor
from odyssey.platforms import load_platform
from tests.codegen.conftest import space_of

MM = {"T_i1": 8, "T_j1": 8, "T_k1": 8, "T_i2": 2, "T_j2": 4, "T_k2": 2}  # SIMD 2 along k
#: small sizes with prime extents, so the "nondivisor" tilings pad (as scripts/compare_models.py)
SIZES = {"mm.c": {"I": "37", "J": "41", "K": "43"},
         "cnn.c": {"I": "5", "O": "7", "H": "9", "W": "11", "P": "3", "Q": "2"}}
#: named designs: MM on chip with SIMD, the two MM partial-sum orderings, a CNN layer
NAMED = [("mm.c", "ij-ij.k", MM),
         ("mm.c", "ij-ik.j", {**MM, "T_k2": 1}),
         ("mm.c", "ij-jk.i", {**MM, "T_k2": 1}),
         ("cnn.c", "oh-ohw.ipq", {"T_o1": 8, "T_h1": 8, "T_w1": 4, "T_i1": 4, "T_p1": 3, "T_q1": 3,
                                  "T_o2": 2, "T_h2": 2, "T_w2": 2, "T_i2": 4})]


def _file_form(kernel: str, design: str, tiling: dict[str, int]) -> Any:
    ks = space_of(kernel)
    return json.loads(dict(generate(ks, ks.design(design), tiling).files)["descriptor.json"])


def _statements(stmts: list[Any]) -> list[Any]:
    out = []
    for s in stmts:
        out.append(s)
        for key in ("body", "then", "else"):
            out += _statements(s.get(key, []))
    return out


@pytest.fixture(scope="module")
def mm() -> Any:
    return _file_form("mm.c", "ij-ij.k", MM)


@pytest.mark.parametrize(("kernel", "design", "tiling"), NAMED, ids=[n[1] for n in NAMED])
def test_named_designs_validate(kernel: str, design: str, tiling: dict[str, int]) -> None:
    desc = _file_form(kernel, design, tiling)
    assert validate_descriptor(desc, source="x") is desc


def test_every_mm_and_cnn_design_validates() -> None:
    """All 48 MM and CNN designs at a divisor, a padded and a SIMD tiling; between them they hold
    every module kind, partial-sum passes and the statements the models read."""
    kinds, types, passes = set(), set(), 0
    for kernel, sizes in SIZES.items():
        ks = space_of(kernel, **sizes)
        for d in ks.designs:
            for kind in ("divisor", "nondivisor", "simd"):
                desc = json.loads(json.dumps(generate_descriptor(ks, d, sample_tiling(d, kind))))
                validate_descriptor(desc, source=f"{kernel} {d.id} {kind}")
                kinds |= {m["kind"] for m in desc["modules"]}
                types |= {s["type"] for m in desc["modules"] for s in _statements(m["ast"])}
                passes += bool(desc["passes"]["loops"])
    assert kinds == set(MODULE_KINDS)
    assert types >= {"for", "if", "block", "fifo_read", "fifo_write", "dram_read", "dram_write", "decl"}
    assert passes > 0


def _set(path: tuple[str | int, ...], value: Any) -> Any:
    def apply(d: Any) -> None:
        for k in path[:-1]:
            d = d[k]
        if value is _DELETE:
            del d[path[-1]]
        else:
            d[path[-1]] = value
    return apply


_DELETE = object()
KINDS = ", ".join(MODULE_KINDS)
#: (what, path, new value, message after "x.json: ") on MM ij-ij.k: modules[0] is A_IO_L3_in
#: (ast[1] its tile loop), modules[3] the boundary loader of A
MUTATIONS = [
    ("missing key", ("modules", 3, "kind"), _DELETE, f"modules[3].kind: missing; expected one of {KINDS}"),
    ("wrong kind", ("modules", 3, "kind"), "foo", f"modules[3].kind: expected one of {KINDS}; got 'foo'"),
    ("unknown role", ("modules", 3, "role"), "boss",
     "modules[3].role: expected one of reader, chain, loader, feeder, pe, drain, writer; got 'boss'"),
    ("string for a number", ("memory", 0, "bits"), "32", "memory[0].bits: expected an integer; got '32'"),
    ("boolean for a number", ("topology", "num_pes"), True, "topology.num_pes: expected an integer; got true"),
    ("fraction for an integer", ("sizes", "I"), 2.5, "sizes.I: expected an integer; got 2.5"),
    ("null for a number", ("compute", "pe_ii"), None, "compute.pe_ii: expected an integer; got null"),
    ("misspelt key", ("design", "simd_lop"), "k", "design.simd_lop: unknown key; the keys here are id, index, "),
    ("list for an object", ("passes",), [], "passes: expected an object; got a list"),
    ("buffer role", ("memory", 1, "role"), "scratch", "memory[1].role: expected one of input_block, "),
    ("fifo kind", ("fifos", 0, "kind"), "queue", "fifos[0].kind: expected one of stream, blocks; got 'queue'"),
    ("port direction", ("ports", 0, "direction"), "in", "ports[0].direction: expected one of read, write; got 'in'"),
    ("negative DRAM channel", ("ports", 0, "channel"), -1,
     "ports[0].channel: expected a channel index (an integer >= 0); got -1"),
    ("DRAM channel as text", ("ports", 0, "channel"), "DDR[0]",
     "ports[0].channel: expected a channel index (an integer >= 0); got 'DDR[0]'"),
    ("port without a bundle", ("ports", 1, "bundle"), _DELETE, "ports[1].bundle: missing"),
    ("channel direction", ("processes", 0, "channels", 0, "direction"), "read",
     "processes[0].channels[0].direction: expected one of in, out; got 'read'"),
    ("statement type", ("modules", 0, "ast", 1, "type"), "while",
     "modules[0].ast[1].type: expected one of for, if, block, "),
    ("statement key missing", ("modules", 0, "ast", 1, "trip"), _DELETE,
     "modules[0].ast[1].trip: missing; a `for` statement has type, var, trip, "),
    ("statement key of another type", ("modules", 0, "ast", 1, "text"), "x",
     "modules[0].ast[1].text: unknown key for a `for` statement"),
    ("nested statement", ("modules", 0, "ast", 1, "body", 0, "pipeline_ii"), "1",
     "modules[0].ast[1].body[0].pipeline_ii: expected an integer or null; got '1'"),
    ("expression operator", ("loops", 0, "tiles_sym"), ["ceiling", "I"], "loops[0].tiles_sym: expected an expression"),
    ("expression type", ("operands", 1, "box_sym", 0), True, "operands[1].box_sym[0]: expected an expression"),
    ("level", ("params", 0, "level"), "array", "params[0].level: expected one of array_part, latency, simd"),
    ("generator", ("generator",), "autosa", "generator: expected odyssey; got 'autosa'"),
]


@pytest.mark.parametrize(("what", "path", "value", "message"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutated_descriptor_is_refused(mm: Any, what: str, path: tuple[str | int, ...], value: Any,
                                       message: str) -> None:
    assert mm["modules"][0]["kind"] == "io_l3_in" and mm["modules"][0]["ast"][1]["type"] == "for"
    bad = copy.deepcopy(mm)
    _set(path, value)(bad)
    with pytest.raises(DescriptorError) as err:
        validate_descriptor(bad, source="x.json")
    assert str(err.value).startswith(f"x.json: {message}"), str(err.value)
    assert not _schema_accepts(bad), f"the JSON Schema accepts the descriptor with {what}"


def test_expression_arity_is_checked(mm: Any) -> None:
    bad = copy.deepcopy(mm)
    bad["loops"][0]["tiles_sym"] = ["ceil_div", "I"]
    with pytest.raises(DescriptorError, match=re.escape("loops[0].tiles_sym: expected an expression: expression "
                                                        "$: 'ceil_div' takes 2 argument(s), got 1")):
        validate_descriptor(bad, source="x.json")


def test_other_schema_version_says_to_regenerate(mm: Any) -> None:
    old = {**mm, "schema_version": 4}
    with pytest.raises(DescriptorError, match=r"x.json: schema_version: 4 is not 12, .*regenerate the design"):
        validate_descriptor(old, source="x.json")


def test_load_descriptor_from_a_design_directory(tmp_path: Path) -> None:
    """The file boundary: a written design reads back, validated, and models as the generated
    descriptor does; a broken file is refused naming it."""
    ks = space_of("mm.c")
    gen = generate(ks, ks.design("ij-ik.j"), {**MM, "T_k2": 1})
    path = write_design(gen, tmp_path / "mm") / "descriptor.json"
    desc = load_descriptor(path)
    assert desc == json.loads(json.dumps(gen.descriptor))
    plat = load_platform("u250")
    assert model_from_descriptor(desc, plat).evaluate_one(desc["tiling"]) == \
        model_from_descriptor(gen.descriptor, plat).evaluate_one(gen.descriptor["tiling"])

    bad = json.loads(path.read_text())
    bad["modules"][3]["kind"] = "foo"
    path.write_text(json.dumps(bad))
    with pytest.raises(DescriptorError, match=re.escape(f"{path}: modules[3].kind: expected one of io_l3_in, ")):
        load_descriptor(path)
    path.write_text('{"schema_version": 3,')
    with pytest.raises(DescriptorError, match=re.escape(f"{path}:1:22: invalid JSON")):
        load_descriptor(path)
    with pytest.raises(DescriptorError, match="cannot read the descriptor"):
        load_descriptor(tmp_path / "none" / "descriptor.json")


# --- vocabularies and statements ---------------------------------------------------------------


def test_vocabularies_agree() -> None:
    assert set(ROLE_OF_KIND) == set(MODULE_KINDS) and set(ROLE_OF_KIND.values()) == set(get_args(ModuleRole))
    assert tuple(STMT_KEYS) == get_args(StmtType)
    stmt_fields = typed_fields(get_args(StmtNode)[0])
    assert {"type"} | {k for keys in STMT_KEYS.values() for k in keys} == set(stmt_fields)


#: one node of every statement class of hls_ast (a new class must be added here, and its
#: descriptor form to STMT_KEYS)
_NODES: dict[type, Any] = {
    ast.Pragma: ast.Pragma("HLS PIPELINE II=1"), ast.Comment: ast.Comment("c"), ast.Line: ast.Line("x = 1"),
    ast.Decl: ast.Decl("int", "a", (sym("T_i1"), 4)), ast.StreamRead: ast.StreamRead("f", "v"),
    ast.StreamWrite: ast.StreamWrite("f", "v"), ast.DramRead: ast.DramRead("A", "i", "v", run=sym("T_k1")),
    ast.DramWrite: ast.DramWrite("C", "i", "v"), ast.Call: ast.Call("PE", ("a",), ("0",), task=True),
    ast.Scope: ast.Scope((ast.Line("x"),)),
    ast.If: ast.If("c", (ast.Line("x"),), (ast.Line("y"),), freq=const(0.5)),
    ast.For: ast.For("i", sym("T_i1"), (ast.Line("x"),), pipeline_ii=1),
    ast.Return: ast.Return("0"), ast.ForRange: ast.ForRange("i", "0", "N", (ast.Line("x"),)),
    ast.ForEach: ast.ForEach("auto &x", "v", (ast.Line("x = 0"),)),
    ast.Guard: ast.Guard("c", (ast.Line("x"),)), ast.Decls: ast.Decls("int", (("a", "0"), ("b", "1"))),
    ast.Commented: ast.Commented(ast.Line("x"), "why"),
}


def test_every_statement_class_has_a_checked_descriptor_form() -> None:
    assert set(_NODES) == set(get_args(ast.Stmt))
    for node in _NODES.values():
        s = json.loads(json.dumps(ast.stmt_json(node)))
        check_value(s, StmtNode, "s")
        assert set(s) == {"type", *STMT_KEYS[s["type"]]}, s
    with pytest.raises(JsonMismatch, match=re.escape("s.body[0].type: expected one of for, if,")):
        check_value({"type": "block", "body": [{"type": "goto"}]}, StmtNode, "s")


# --- JSON Schema -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return descriptor_json_schema()


def test_json_schema_states_the_typeddicts(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert str(SCHEMA_VERSION) in schema["title"]
    assert list(schema["properties"]) == list(typed_fields(Descriptor))
    assert schema["required"] == list(typed_fields(Descriptor)) and schema["additionalProperties"] is False
    defs = schema["$defs"]
    assert defs["ModuleJson"]["properties"]["kind"] == {"enum": list(MODULE_KINDS)}
    assert defs["ModuleJson"]["properties"]["role"] == {"enum": list(get_args(ModuleRole))}
    assert "ctype" not in defs["BufferJson"]["required"] and "ctype" in defs["BufferJson"]["properties"]
    assert set(defs["Expr"]["anyOf"][2]["prefixItems"][0]["enum"]) == set(_BY_OP)
    refs = re.findall(r'"\$ref": "#/\$defs/(\w+)"', json.dumps(schema))
    assert refs and set(refs) <= set(defs)


def test_json_schema_accepts_generated_descriptors(schema: dict[str, Any]) -> None:
    for kernel, design, tiling in NAMED:
        assert _schema_accepts(_file_form(kernel, design, tiling), schema)


def _schema_accepts(value: Any, schema: dict[str, Any] | None = None) -> bool:
    root = schema or descriptor_json_schema()
    return _valid(value, root, root)


_TYPES = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
          "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
          "null": lambda v: v is None,
          "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool)}
_ANNOTATIONS = {"$schema", "title", "description", "$defs", "then"}


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _valid(v: Any, s: dict[str, Any], root: dict[str, Any]) -> bool:
    """A JSON Schema 2020-12 evaluator for the keywords the generator uses (another keyword
    fails the test, so the schema cannot say more than this checks)."""
    checks = {
        "$ref": lambda x: _valid(v, root["$defs"][x.split("/")[-1]], root),
        "type": lambda x: _TYPES[x](v),
        "enum": lambda x: any(_same(v, e) for e in x),
        "const": lambda x: _same(v, x),
        "anyOf": lambda x: any(_valid(v, sub, root) for sub in x),
        "allOf": lambda x: all(_valid(v, sub, root) for sub in x),
        "if": lambda x: not _valid(v, x, root) or _valid(v, s.get("then", {}), root),
        "properties": lambda x: not isinstance(v, dict) or all(_valid(v[k], sub, root) for k, sub in x.items()
                                                               if k in v),
        "required": lambda x: not isinstance(v, dict) or all(k in v for k in x),
        "additionalProperties": lambda x: not isinstance(v, dict) or all(
            k in s.get("properties", {}) or (x is not False and _valid(v[k], x, root)) for k in v),
        "propertyNames": lambda x: not isinstance(v, dict) or all(_valid(k, x, root) for k in v),
        "items": lambda x: not isinstance(v, list) or all(_valid(i, x, root)
                                                          for i in v[len(s.get("prefixItems", [])):]),
        "prefixItems": lambda x: not isinstance(v, list) or all(_valid(i, sub, root) for i, sub in zip(v, x, strict=False)),
        "minItems": lambda x: not isinstance(v, list) or len(v) >= x,
        "minimum": lambda x: not isinstance(v, int | float) or isinstance(v, bool) or v >= x,
    }
    unknown = set(s) - set(checks) - _ANNOTATIONS
    assert not unknown, f"the evaluator does not know {unknown}"
    return all(check(s[key]) for key, check in checks.items() if key in s)


def test_a_tiling_value_out_of_range_or_not_dividing_is_refused(mm: Any) -> None:
    bad = json.loads(json.dumps(mm))
    bad["tiling"]["T_i2"] = -4
    with pytest.raises(DescriptorError, match=r"x.json: tiling.T_i2: -4 is outside its range"):
        validate_descriptor(bad, source="x.json")
    bad["tiling"]["T_i2"] = 3
    bad["tiling"]["T_i1"] = 4
    with pytest.raises(DescriptorError, match=r"tiling.T_i2: 3 does not divide T_i1 = 4"):
        validate_descriptor(bad, source="x.json")
