"""`--set KEY=VALUE` overrides: dotted paths written into a scene's TOML document.

They are applied before validation, so a bad key or value gets the same one-line
error as in the file, with "--set" as the place.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Sequence
from typing import Any

from slinky3d.errors import SceneError

SET_WHERE = "--set"



def parse_assignment(text: str) -> tuple[list[str], Any]:
    """`KEY=VALUE` -> (dotted path, value); VALUE is TOML, else a plain string."""
    key, sep, value = text.partition("=")
    key = key.strip()
    parts = key.split(".")
    if not sep or not key or any(not s.strip() for s in parts):
        raise SceneError(SET_WHERE, text, "expected KEY=VALUE with a dotted KEY, "
                                          "e.g. slinky.C_D=0")
    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return [s.strip() for s in parts], parsed


def apply_overrides(doc: dict, assignments: Sequence[str]) -> set[str]:
    """Write each KEY=VALUE into the TOML document; return the concrete keys written.

    A number selects an element of an array of tables (`slinky.1.C_D`); a name
    applied to an array sets it in every element (`slinky.C_D` on [[slinky]]).
    """
    written: set[str] = set()
    for text in assignments:
        path, value = parse_assignment(text)
        _assign(doc, path, copy.deepcopy(value), "", written)
    return written


def _assign(node: Any, path: list[str], value: Any, done: str, written: set[str]) -> None:
    head, rest = path[0], path[1:]
    here = f"{done}.{head}" if done else head
    if isinstance(node, list):
        if head.isdigit():
            i = int(head)
            if i >= len(node):
                raise SceneError(SET_WHERE, here, f"index {i} is out of range "
                                                  f"({len(node)} elements)")
            if not rest:
                node[i] = value
                written.add(here)
            else:
                _assign(node[i], rest, value, here, written)
        else:
            for i, item in enumerate(node):
                _assign(item, path, value, f"{done}.{i}", written)
        return
    if not isinstance(node, dict):
        raise SceneError(SET_WHERE, here, f"'{done}' is a value, not a table")
    if head.isdigit():
        if head != "0":
            raise SceneError(SET_WHERE, here, f"'{done}' is a single table; only index 0 exists")
        if not rest:
            raise SceneError(SET_WHERE, here, "give a key after the index")
        _assign(node, rest, value, done, written)
        return
    if not rest:
        node[head] = value
        written.add(here)
        return
    child = node.setdefault(head, {})
    _assign(child, rest, value, here, written)
