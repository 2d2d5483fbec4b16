"""Editing a loaded scene: the parameter panel's values, applied and saved as TOML.

A change goes back through the scene loader as `--set` overrides on the scene's raw
TOML document, so the static shape is solved again and every check of a scene file
applies (a bad value is the same one-line `SceneError`, placed at "--set"). Saving
writes that document, which loads back to the same scene.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import tomli_w

from slinky3d.errors import SceneError
from slinky3d.model.params import PRESETS, G
from slinky3d.scene.loader import from_dict
from slinky3d.scene.overrides import SET_WHERE
from slinky3d.scene.spec import Scene

# Surface gravity, m/s^2, for the panel's planet buttons.
PLANETS: dict[str, float] = {"Earth": G, "Moon": 1.62, "Mars": 3.71, "Jupiter": 24.79}


@dataclass(frozen=True)
class PanelValues:
    """What the parameter panel shows and edits (SI units)."""

    preset: str  # "plastic" | "steel"
    n_coils: float
    mass: float  # kg
    R: float  # m
    L0: float  # m, collapsed length ("height")
    k_coil: float  # N m / rad
    C_D: float  # N m s / rad
    g: float  # m/s^2
    contact_law: str  # "rigid" | "paper" | "soft"
    impacts: bool


# PanelValues field -> key in a [slinky] table (dotted below it); the preset's own
# values are the five that PRESETS gives.
KEYS: dict[str, str] = {
    "preset": "preset",
    "n_coils": "n_coils",
    "mass": "mass",
    "R": "R",
    "L0": "L0",
    "k_coil": "k_coil",
    "C_D": "C_D",
    "g": "g",
    "contact_law": "contact.law",
    "impacts": "contact.enabled",
}


def panel_values(scene: Scene, slinky: int = 0) -> PanelValues:
    """The values of Slinky `slinky` of a loaded scene."""
    s = scene.slinkies[slinky]
    p = s.params
    return PanelValues(preset=p.preset, n_coils=p.n_coils, mass=p.mass, R=p.R, L0=p.L0,
                       k_coil=p.k_coil, C_D=p.C_D, g=p.g, contact_law=s.contact.law,
                       impacts=s.contact.enabled)


def with_preset(values: PanelValues, preset: str) -> PanelValues:
    """The values with another preset's own parameters (the rest kept)."""
    if preset not in PRESETS:
        raise SceneError("panel", "preset", f"unknown preset {preset!r} "
                                            f"(known: {', '.join(PRESETS)})")
    own: dict[str, Any] = dict(PRESETS[preset])
    return replace(values, preset=preset, **own)


def overrides(scene: Scene, values: PanelValues, slinky: int = 0) -> list[str]:
    """The `--set` assignments that turn Slinky `slinky` of the scene into `values`.

    Only what changes is written, so a saved scene stays as its author wrote it; a
    preset parameter that a new preset gives by itself is not written either.
    """
    raw = scene.raw.get("slinky")
    table = raw[slinky] if isinstance(raw, list) else raw
    prefix = f"slinky.{slinky}." if isinstance(raw, list) else "slinky."
    if not isinstance(table, dict):
        table = {}
    now = panel_values(scene, slinky)
    own = PRESETS.get(values.preset, {})
    out = []
    for f in fields(PanelValues):
        v, key = getattr(values, f.name), KEYS[f.name]
        if f.name in own:
            keep = f.name not in table and v == own[f.name]
        else:
            keep = v == getattr(now, f.name)
        if not keep:
            out.append(f"{prefix}{key}={_toml_value(v)}")
    return out


def with_values(scene: Scene, values: PanelValues, slinky: int = 0) -> Scene:
    """The scene with Slinky `slinky`'s values replaced, loaded again from its TOML (the
    static shape re-solved). Raises SceneError (one line) for a value the scene format
    rejects."""
    sets = overrides(scene, values, slinky)
    try:
        return from_dict(scene.raw, scene.path or "<scene>", sets, stem=scene.title)
    except SceneError:
        raise
    except (ArithmeticError, IndexError, ValueError) as e:
        # A value inside every bound whose static shape the solver cannot find.
        raise SceneError(SET_WHERE, ", ".join(sets), "no static shape for these values "
                                                     f"({type(e).__name__}: {e})") from None


def dump(scene: Scene) -> str:
    """The scene as TOML text that loads back to the same scene."""
    doc = dict(scene.raw)
    doc.setdefault("title", scene.title)  # else a load names it after the file
    head = f"# Saved by slinky3d from {scene.path}.\n" if scene.path else ""
    return head + tomli_w.dumps(doc)


def save(scene: Scene, path: str | Path) -> Path:
    """Write the scene as TOML (folders made as needed); returns the path written."""
    p = Path(path).expanduser()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(dump(scene), encoding="utf-8")
    except OSError as e:
        raise SceneError(str(p), "", f"cannot write the scene: {e.strerror or e}") from None
    return p


def _toml_value(v: object) -> str:
    """A value as TOML text for an assignment."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    return json.dumps(str(v))  # a JSON string is a TOML basic string
