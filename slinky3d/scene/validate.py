"""One validator for every table of a scene file: [slinky] and its sub-tables, [look], [camera].

A `Table` is one TOML table under a dotted key; its typed getters check each value as
they read it. The first that fails raises a `SceneError` whose one sentence names the
place (the file, or "--set" where an override wrote the key) and the dotted key.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TypedDict, TypeVar, Unpack

from slinky3d.errors import SceneError
from slinky3d.scene.overrides import SET_WHERE

D = TypeVar("D")


class Bounds(TypedDict, total=False):
    """Where a number may lie: [lo, hi], an end excluded where open_lo / open_hi."""

    lo: float
    hi: float
    open_lo: bool
    open_hi: bool


# Guards against typos, far beyond any scene: a place in metres, an angle in radians.
# Within them the numbers stay well away from overflow and from losing the model's
# millimetres to round-off.
PLACE: Bounds = {"lo": -1e3, "hi": 1e3}
ANGLE: Bounds = {"lo": -1e3, "hi": 1e3}


def _within(key: str, table: str) -> bool:
    """Whether `key` is `table` itself, one of its keys or one of its elements."""
    return key == table or key.startswith((table + ".", table + "["))


class Context:
    """Where errors point: the file, or "--set" for keys an override wrote."""

    def __init__(self, file: str, set_keys: Iterable[str] = ()):
        self.file = file
        self.set_keys = frozenset(set_keys)

    def fail(self, key: str, message: str) -> NoReturn:
        # The key itself, a table an override wrote, or a table holding a written key.
        from_set = bool(key) and any(_within(key, s) or _within(s, key) for s in self.set_keys)
        raise SceneError(SET_WHERE if from_set else self.file, key, message)


def type_name(v: Any) -> str:
    """A TOML value's kind, for messages: "a string", "an array", ..."""
    names = {bool: "a boolean", str: "a string", list: "an array", dict: "a table"}
    for t, n in names.items():
        if isinstance(v, t):
            return n
    return "a number" if isinstance(v, int | float) else type(v).__name__


def did_you_mean(word: str, known: Sequence[str]) -> str:
    """"; did you mean 'x'?" for the close match to a misspelt word among `known`
    (keys, values, scene and sweep names), else ""."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def suggest(word: str, known: Sequence[str]) -> str:
    """The close match to a misspelt key or value, else the known ones."""
    return did_you_mean(word, known) or f"; expected one of those known: {', '.join(known)}"


def check_number(ctx: Context, key: str, v: Any, **bounds: Unpack[Bounds]) -> float:
    """A finite float within the bounds (ints accepted, booleans not)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        ctx.fail(key, f"must be a number, not {type_name(v)}")
    x = float(v)
    if not math.isfinite(x):
        ctx.fail(key, f"must be a finite number, not {x}")
    lo, hi = bounds.get("lo"), bounds.get("hi")
    open_lo, open_hi = bounds.get("open_lo", False), bounds.get("open_hi", False)
    below = lo is not None and (x < lo or (open_lo and x == lo))
    above = hi is not None and (x > hi or (open_hi and x == hi))
    if below or above:
        if lo is not None and hi is not None:
            interval = f"{'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
            rng = f"in {interval} (between {lo:g} and {hi:g})"
        elif lo is not None:
            rng = f"{'>' if open_lo else '>='} {lo:g}"
        else:
            rng = f"{'<' if open_hi else '<='} {hi:g}"
        ctx.fail(key, f"must be {rng}, got {x:g}")
    return x


def check_vector(ctx: Context, key: str, v: Any, n: int,
                 **bounds: Unpack[Bounds]) -> tuple[float, ...]:
    """An array of n numbers; a bad one is named by its index, `key[i]`."""
    if not isinstance(v, list | tuple) or len(v) != n:
        ctx.fail(key, f"must be an array of {n} numbers, got {_count(v)}")
    return tuple(check_number(ctx, f"{key}[{i}]", x, **bounds) for i, x in enumerate(v))


def _count(v: Any) -> str:
    if not isinstance(v, list | tuple):
        return type_name(v)
    return f"{len(v)} value" + ("" if len(v) == 1 else "s")


# A reference to the docs in a visitor's caption: a docs/ path, a Markdown file or a
# numbered section of one.
DOC_REFERENCE = re.compile(r"docs/\S*|\b[\w-]+\.md\b|\bsection \d+")


class Table:
    """One TOML table under a dotted key, with typed getters that validate."""

    def __init__(self, ctx: Context, data: Any, prefix: str, known: Sequence[str]):
        self.ctx, self.prefix = ctx, prefix
        if not isinstance(data, dict):
            ctx.fail(prefix, f"must be a table, not {type_name(data)} "
                             "(expected a table of key = value pairs)")
        self.data: dict[str, Any] = data
        for k in data:
            if k not in known:
                ctx.fail(self.key(k), "unknown key" + suggest(k, known))

    def key(self, k: str) -> str:
        return f"{self.prefix}.{k}" if self.prefix else k

    def fail(self, k: str, message: str) -> NoReturn:
        self.ctx.fail(self.key(k), message)

    def has(self, k: str) -> bool:
        return k in self.data

    def table(self, k: str, known: Sequence[str]) -> Table:
        """A sub-table (empty when absent)."""
        return Table(self.ctx, self.data.get(k, {}), self.key(k), known)

    def number(self, k: str, default: D, **bounds: Unpack[Bounds]) -> float | D:
        if k not in self.data:
            return default
        return check_number(self.ctx, self.key(k), self.data[k], **bounds)

    def string(self, k: str, default: str) -> str:
        v = self.data.get(k, default)
        if not isinstance(v, str):
            self.fail(k, f"must be a string, not {type_name(v)}")
        return v

    def caption(self, k: str, default: str) -> str:
        """A string shown to visitors (a scene's description, a kiosk caption): plain
        words, without references to the docs, which go in the scene's `references`."""
        v = self.string(k, default)
        m = DOC_REFERENCE.search(v)
        if m:
            self.fail(k, f"a caption for visitors cites '{m.group(0)}': put references to "
                         "the docs in the scene's `references` key")
        return v

    def choice(self, k: str, default: str, choices: Sequence[str]) -> str:
        """One of a fixed set of strings; a misspelt one gets a suggestion."""
        v = self.data.get(k, default)
        if not isinstance(v, str):
            self.fail(k, f"must be one of {', '.join(choices)}, not {type_name(v)}")
        if v not in choices:
            self.fail(k, f"unknown value '{v}'" + suggest(v, choices))
        return v

    def boolean(self, k: str, default: bool) -> bool:
        v = self.data.get(k, default)
        if not isinstance(v, bool):
            self.fail(k, f"must be true or false, not {type_name(v)}")
        return v

    def point(self, k: str, default: tuple[float, float],
              **bounds: Unpack[Bounds]) -> tuple[float, float]:
        """A point or offset [x, y] in the plane of the model, each coordinate within the
        bounds (PLACE unless given); errors name the point."""
        if k not in self.data:
            return default
        v = self.data[k]
        if not isinstance(v, list) or len(v) != 2:
            self.fail(k, f"must be an array of two numbers [x, y], got {_count(v)}")
        x, y = (check_number(self.ctx, self.key(k), c, **(bounds or PLACE)) for c in v)
        return (x, y)

    def vector(self, k: str, default: D, n: int,
               **bounds: Unpack[Bounds]) -> tuple[float, ...] | D:
        """n numbers, each within the bounds; errors name the element."""
        if k not in self.data:
            return default
        return check_vector(self.ctx, self.key(k), self.data[k], n, **bounds)

    def only_with(self, keys: Sequence[str], allowed: bool, why: str, here: str) -> None:
        """Reject keys that mean nothing in the chosen mode (a sign of a mistake)."""
        for k in keys:
            if k in self.data and not allowed:
                self.fail(k, f"only applies {why} (here '{here}')")
