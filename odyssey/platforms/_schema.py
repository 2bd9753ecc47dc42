"""A small declarative schema for JSON data files, checked before objects are built.

A schema is a tree of :class:`Spec` values (:class:`Int`, :class:`Num`,
:class:`Str`, :class:`Obj`, :class:`ListOf`, :class:`MapOf`). ``check`` walks
the parsed JSON and raises :class:`~odyssey.errors.PlatformError` at the first
problem, with the file, the dotted key path, the offending value and what is
expected, e.g. ``my.json: resources.dsp must be a positive integer, got -3``.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from odyssey.errors import PlatformError


def _show(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, dict | list) else type(value).__name__


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Spec(ABC):
    """A schema node: ``check`` validates one JSON value at ``path`` in ``source``."""

    @abstractmethod
    def describe(self) -> str:
        """What a valid value is, for error messages."""

    @abstractmethod
    def check(self, value: Any, path: str, source: str) -> Any:
        """The validated value, or raise :class:`PlatformError` naming ``path``."""

    def fail(self, value: Any, path: str, source: str) -> PlatformError:
        where = path or "the top level"
        return PlatformError(f"{source}: {where} must be {self.describe()}, got {_show(value)}")


@dataclass(frozen=True)
class Int(Spec):
    """An integer ``>= minimum`` (booleans rejected)."""

    minimum: int = 1

    def describe(self) -> str:
        return "a positive integer" if self.minimum == 1 else f"an integer >= {self.minimum}"

    def check(self, value: Any, path: str, source: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            raise self.fail(value, path, source)
        return value


@dataclass(frozen=True)
class Num(Spec):
    """A finite number with ``value > gt`` and, if given, ``value <= le``."""

    gt: float = 0.0
    le: float | None = None

    def describe(self) -> str:
        if self.le is not None:
            return f"a number in ({self.gt:g}, {self.le:g}]"
        return "a positive number" if self.gt == 0 else f"a number > {self.gt:g}"

    def check(self, value: Any, path: str, source: str) -> Any:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and value > self.gt
        if not ok or (self.le is not None and value > self.le):
            raise self.fail(value, path, source)
        return float(value)


@dataclass(frozen=True)
class Str(Spec):
    """A non-empty string."""

    def describe(self) -> str:
        return "a non-empty string"

    def check(self, value: Any, path: str, source: str) -> Any:
        if not isinstance(value, str) or not value:
            raise self.fail(value, path, source)
        return value


@dataclass(frozen=True)
class Obj(Spec):
    """An object with known keys: ``required`` must be present, ``optional`` may be.

    Unknown keys are rejected (a misspelt key would otherwise be silently ignored).
    """

    required: Mapping[str, Spec] = field(default_factory=dict)
    optional: Mapping[str, Spec] = field(default_factory=dict)

    def describe(self) -> str:
        return "an object"

    def check(self, value: Any, path: str, source: str) -> Any:
        if not isinstance(value, dict):
            raise self.fail(value, path, source)
        known = {**self.required, **self.optional}
        for key in value:
            if key not in known:
                raise PlatformError(
                    f"{source}: unknown key {_join(path, key)!r}; the keys allowed here are "
                    f"{', '.join(sorted(known))} (remove it or fix its spelling)"
                )
        for key, spec in self.required.items():
            if key not in value:
                raise PlatformError(
                    f"{source}: missing required key {_join(path, key)!r} ({spec.describe()})"
                )
        return {k: known[k].check(v, _join(path, k), source) for k, v in value.items()}


@dataclass(frozen=True)
class ListOf(Spec):
    """A list of at least ``min_len`` items, each matching ``item``."""

    item: Spec
    min_len: int = 1

    def describe(self) -> str:
        return f"a list of at least {self.min_len} item(s), each {self.item.describe()}"

    def check(self, value: Any, path: str, source: str) -> Any:
        if not isinstance(value, list) or len(value) < self.min_len:
            raise self.fail(value, path, source)
        return [self.item.check(v, _join(path, i), source) for i, v in enumerate(value)]


@dataclass(frozen=True)
class MapOf(Spec):
    """An object with arbitrary non-empty keys whose values match ``item``."""

    item: Spec

    def describe(self) -> str:
        return f"an object mapping names to {self.item.describe()}"

    def check(self, value: Any, path: str, source: str) -> Any:
        if not isinstance(value, dict) or not value:
            raise self.fail(value, path, source)
        return {k: self.item.check(v, _join(path, k), source) for k, v in value.items()}


def load_json(text: str, source: str) -> Any:
    """Parse JSON text, turning syntax errors into PlatformError with line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlatformError(
            f"{source}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg}); fix the syntax there"
        ) from exc
