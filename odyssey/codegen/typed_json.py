"""Check JSON data against ``TypedDict`` annotations, and state them as a JSON Schema.

The types a JSON document is read with are written once, as :class:`typing.TypedDict` classes
(mypy checks the code that builds and reads them); this module reads the same annotations at
run time (``typing.get_type_hints``, ``get_origin``/``get_args``) to

* :func:`check_json`: validate parsed JSON at a boundary, raising the caller's error type at
  the first problem with the key path, what is expected and what was found
  (``modules[3].kind: expected one of io_l3_in, pe, ...; got 'foo'``);
* :func:`json_schema`: print the types as a JSON Schema (draft 2020-12), one ``$defs`` entry per
  ``TypedDict`` and per named :class:`Check`.

Understood: ``int`` (not ``bool``), ``float`` (any number), ``str``, ``bool``, ``None``,
``Literal[...]``, unions, ``list[T]``, ``dict[str, T]``, ``TypedDict`` classes (unknown keys are
rejected: a misspelt key would otherwise be ignored), ``Required``/``NotRequired``, ``Any`` and
``Annotated[T, Check(...)]`` for a check the annotations cannot state (an expression, a set of
keys that depends on another key).
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from odyssey.errors import OdysseyError

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class JsonMismatch(Exception):
    """A value that does not match its type, at ``path``; :func:`check_json` turns it into the
    caller's error type (a :class:`Check` raises it)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or '(top level)'}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class Check:
    """What ``Annotated[T, Check(...)]`` adds to ``T``: ``check(value, path)`` validates the value
    (it raises :class:`JsonMismatch`, and may call :func:`check_value` for ``T`` itself);
    ``schema(base)`` is its JSON Schema given ``T``'s, kept in ``$defs`` under ``name``."""

    name: str
    describe: str
    check: Callable[[Any, str], None]
    schema: Callable[[dict[str, Any]], dict[str, Any]]


def check_json(value: Any, tp: Any, *, source: str, error: type[OdysseyError]) -> None:
    """Raise ``error("{source}: {path}: {problem}")`` at the first place ``value`` (parsed JSON)
    does not match ``tp``."""
    try:
        check_value(value, tp, "")
    except JsonMismatch as exc:
        raise error(f"{source}: {exc}") from None


def join(path: str, key: str | int) -> str:
    """``path`` extended by a list index (``ast[3]``) or an object key (``design.id``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def show(value: Any) -> str:
    """A found value, for messages: scalars as written, containers by kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return repr(value) if isinstance(value, str) else json.dumps(value)


def describe(tp: Any) -> str:
    """What a value of ``tp`` is, for messages."""
    tp = _unrequired(tp)
    origin = get_origin(tp)
    if origin is Annotated:
        return next((m.describe for m in tp.__metadata__ if isinstance(m, Check)), describe(get_args(tp)[0]))
    if origin is Literal:
        words = [str(a) if isinstance(a, str) else json.dumps(a) for a in get_args(tp)]
        return words[0] if len(words) == 1 else "one of " + ", ".join(words)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in get_args(tp))
    if origin is list:
        return "a list"
    if origin is dict or is_typeddict(tp):
        return "an object"
    return _SCALARS.get(tp, (str(tp), ()))[0]


_SCALARS: dict[Any, tuple[str, tuple[type, ...]]] = {
    int: ("an integer", (int,)), float: ("a number", (int, float)), str: ("a string", (str,)),
    bool: ("true or false", (bool,)), type(None): ("null", (type(None),)),
}


def check_value(value: Any, tp: Any, path: str) -> None:
    """Raise :class:`JsonMismatch` where ``value`` does not match ``tp``."""
    tp = _unrequired(tp)
    origin = get_origin(tp)
    if origin is Annotated:
        checks = [m for m in tp.__metadata__ if isinstance(m, Check)]
        if not checks:
            check_value(value, get_args(tp)[0], path)
        for c in checks:
            c.check(value, path)
    elif tp is Any or tp is object:
        return
    elif origin is Literal:
        if not any(type(value) is type(a) and value == a for a in get_args(tp)):
            raise JsonMismatch(path, f"expected {describe(tp)}; got {show(value)}")
    elif origin in (Union, types.UnionType):
        _check_union(value, get_args(tp), path)
    elif origin is list:
        if not isinstance(value, list):
            raise JsonMismatch(path, f"expected a list; got {show(value)}")
        (item,) = get_args(tp)
        for i, v in enumerate(value):
            check_value(v, item, join(path, i))
    elif origin is dict:
        if not isinstance(value, dict):
            raise JsonMismatch(path, f"expected an object; got {show(value)}")
        _, item = get_args(tp)
        for k, v in value.items():
            check_value(v, item, join(path, k))
    elif is_typeddict(tp):
        _check_typeddict(value, tp, path)
    elif tp in _SCALARS:
        what, kinds = _SCALARS[tp]
        if not isinstance(value, kinds) or (isinstance(value, bool) and tp is not bool):
            raise JsonMismatch(path, f"expected {what}; got {show(value)}")
    else:  # pragma: no cover - a type this module does not read is a bug of the schema
        raise TypeError(f"{path}: cannot check values of type {tp!r}")


def _check_union(value: Any, members: tuple[Any, ...], path: str) -> None:
    """A value of one of ``members``. The member of the value's JSON kind (object, list, ...)
    reports its own problem (deeper in the value, or in its words); a value of no member's
    kind is reported against the union."""
    kind = _kind_of(value)
    fitting = [m for m in members if kind in _kinds(m)]
    first: JsonMismatch | None = None
    for m in fitting:
        try:
            check_value(value, m, path)
            return
        except JsonMismatch as exc:
            first = first or exc
    if first is not None:
        raise first
    raise JsonMismatch(path, f"expected {' or '.join(describe(m) for m in members)}; got {show(value)}")


def _kind_of(value: Any) -> str:
    """The JSON kind of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    kinds = {float: "number", str: "string", list: "array", dict: "object"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), type(value).__name__)


_ALL_KINDS = frozenset({"boolean", "integer", "number", "string", "array", "object", "null"})


def _kinds(tp: Any) -> frozenset[str]:
    """The JSON kinds a value of ``tp`` can have."""
    tp = _unrequired(tp)
    origin = get_origin(tp)
    if origin is Annotated:
        return _kinds(get_args(tp)[0])
    if origin is Literal:
        return frozenset(_kind_of(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return frozenset().union(*(_kinds(a) for a in get_args(tp)))
    if origin is list:
        return frozenset({"array"})
    if origin is dict or is_typeddict(tp):
        return frozenset({"object"})
    scalar = {int: {"integer"}, float: {"integer", "number"}, str: {"string"}, bool: {"boolean"},
              type(None): {"null"}}
    return frozenset(scalar.get(tp, _ALL_KINDS))


def _check_typeddict(value: Any, tp: Any, path: str) -> None:
    if not isinstance(value, dict):
        raise JsonMismatch(path, f"expected an object; got {show(value)}")
    hints = typed_fields(tp)
    for key in value:
        if key not in hints:
            raise JsonMismatch(join(path, key), f"unknown key; the keys here are {', '.join(hints)}")
    for key, ftp in hints.items():
        if key in value:
            check_value(value[key], ftp, join(path, key))
        elif key in required_keys(tp):
            raise JsonMismatch(join(path, key), f"missing; expected {describe(ftp)}")


@cache
def typed_fields(tp: Any) -> dict[str, Any]:
    """The annotations of a ``TypedDict`` with ``Annotated`` kept, in declaration order."""
    return get_type_hints(tp, include_extras=True)


@cache
def required_keys(tp: Any) -> frozenset[str]:
    """The required keys of a ``TypedDict``, from its annotations: Python 3.11 does not see
    ``NotRequired`` in string annotations (``from __future__ import annotations``) and
    counts those keys in ``__required_keys__``."""
    marks = {k: get_origin(v) for k, v in typed_fields(tp).items()}
    return frozenset(k for k, m in marks.items() if m is Required or (tp.__total__ and m is not NotRequired))


def _unrequired(tp: Any) -> Any:
    while get_origin(tp) in (Required, NotRequired):
        tp = get_args(tp)[0]
    return tp


# --- JSON Schema ---------------------------------------------------------------------------


def json_schema(tp: Any, *, title: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the ``TypedDict`` ``tp``: its object inline, every
    nested ``TypedDict`` and :class:`Check` under ``$defs``."""
    defs: dict[str, dict[str, Any]] = {}
    top = _object_schema(tp, defs)
    return {"$schema": SCHEMA_DIALECT, "title": title, **top, "$defs": dict(sorted(defs.items()))}


def _schema(tp: Any, defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    tp = _unrequired(tp)
    origin = get_origin(tp)
    if origin is Annotated:
        check = next((m for m in tp.__metadata__ if isinstance(m, Check)), None)
        if check is None:
            return _schema(get_args(tp)[0], defs)
        if check.name not in defs:
            defs[check.name] = {}  # a placeholder while a recursive type refers to itself
            defs[check.name] = check.schema(_schema(get_args(tp)[0], defs))
        return {"$ref": f"#/$defs/{check.name}"}
    if tp is Any or tp is object:
        return {}
    if origin is Literal:
        values = list(get_args(tp))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema(a, defs) for a in get_args(tp)]}
    if origin is list:
        return {"type": "array", "items": _schema(get_args(tp)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema(get_args(tp)[1], defs)}
    if is_typeddict(tp):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}
            defs[tp.__name__] = _object_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    names = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
    return {"type": names[tp]}


def _object_schema(tp: Any, defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    hints = typed_fields(tp)
    out: dict[str, Any] = {"type": "object"}
    if tp.__doc__:
        out["description"] = " ".join(tp.__doc__.split())
    out["properties"] = {k: _schema(v, defs) for k, v in hints.items()}
    out["required"] = [k for k in hints if k in required_keys(tp)]
    out["additionalProperties"] = False
    return out


__all__ = ["Check", "JsonMismatch", "check_json", "check_value", "describe", "join", "json_schema",
           "required_keys", "show", "typed_fields"]
