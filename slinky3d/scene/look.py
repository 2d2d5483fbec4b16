"""How a scene looks: materials, floor, stairs, holders, camera hint.

Plain dataclasses with every default in one place (`Look()`, `CameraHint()`), and
`parse_look` / `parse_camera` that turn a scene's `[look]` / `[camera]` TOML table
into them, as a flat list of checks that each raise one `SceneError` naming the key.
Nothing here imports OpenGL: the scene loader and the tests use it without a context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from slinky3d.errors import SceneError

MATERIALS = ("auto", "steel", "plastic")
ANCHORS = ("post", "hand", "none")

RGB = tuple[float, float, float]
Step = tuple[float, float, float]  # (x0, x1, top_y): a stair block, m


@dataclass(frozen=True)
class Look:
    """What the renderer draws besides the Slinky's shape.

    material "auto" follows each Slinky's preset (steel or plastic). `colour` tints the
    plastic (ignored by steel); `rainbow` runs the plastic through the hues from the
    anchored end to the far end. `wire_width` is the flat wire's radial width (None:
    the material's). `floor_y` None puts the floor just below the initial shape.
    """

    material: str = "auto"
    colour: RGB = (0.86, 0.08, 0.12)
    rainbow: bool = False
    wire_width: float | None = None  # m
    background_top: RGB = (0.13, 0.16, 0.22)
    background_bottom: RGB = (0.50, 0.55, 0.62)
    floor: bool = True
    floor_y: float | None = None  # m
    floor_colour: RGB = (0.62, 0.60, 0.57)
    stairs: tuple[Step, ...] = ()
    stairs_colour: RGB = (0.55, 0.38, 0.22)
    stairs_depth: float = 0.30  # m, extent along z
    anchor: str = "post"  # holder drawn at a held end: "post", "hand" or "none"

    def material_for(self, preset: str) -> str:
        """The concrete material for a Slinky of the given preset name."""
        if self.material != "auto":
            return self.material
        return "plastic" if preset == "plastic" else "steel"

    def width_for(self, material: str, R: float) -> float:
        """Radial wire width: the look's, else the real toy's (steel 2.6 mm, plastic 4.5 mm)."""
        if self.wire_width is not None:
            return self.wire_width
        w = 0.0026 if material == "steel" else 0.0045
        return min(w, 0.5 * R)


@dataclass(frozen=True)
class CameraHint:
    """A scene's starting camera; every value None frames the Slinky by default.

    The orbit camera looks at `target` from `distance`, turned by `yaw_deg` about the
    vertical (0: looking along -z at the x-y plane, the model's side view) and raised by
    `pitch_deg`.
    """

    target: tuple[float, float, float] | None = None  # m
    distance: float | None = None  # m
    yaw_deg: float | None = None
    pitch_deg: float | None = None
    fov_deg: float = 35.0  # vertical field of view


def _number(where: str, key: str, v: Any, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise SceneError(where, key, f"expected a number, got {v!r}")
    x = float(v)
    if not math.isfinite(x):
        raise SceneError(where, key, f"must be finite, got {v!r}")
    if not lo <= x <= hi:
        raise SceneError(where, key, f"must be between {lo:g} and {hi:g}, got {x:g}")
    return x


def _vector(where: str, key: str, v: Any, n: int, lo: float, hi: float) -> tuple[float, ...]:
    if not isinstance(v, list | tuple) or len(v) != n:
        raise SceneError(where, key, f"expected a list of {n} numbers, got {v!r}")
    return tuple(_number(where, f"{key}[{i}]", x, lo, hi) for i, x in enumerate(v))


def _choice(where: str, key: str, v: Any, options: tuple[str, ...]) -> str:
    if not isinstance(v, str) or v not in options:
        raise SceneError(where, key, f"expected one of {', '.join(options)}, got {v!r}")
    return v


def _flag(where: str, key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise SceneError(where, key, f"expected true or false, got {v!r}")
    return v


def _known(where: str, section: str, table: Any, cls: type) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise SceneError(where, section, f"expected a table, got {table!r}")
    names = [f.name for f in fields(cls)]
    for k in table:
        if k not in names:
            raise SceneError(
                where, f"{section}.{k}", f"unknown key (known: {', '.join(names)})"
            )
    return table


def _steps(where: str, key: str, v: Any) -> tuple[Step, ...]:
    if not isinstance(v, list):
        raise SceneError(where, key, f"expected a list of [x0, x1, top_y] steps, got {v!r}")
    out = []
    for i, s in enumerate(v):
        x0, x1, top = _vector(where, f"{key}[{i}]", s, 3, -1e3, 1e3)
        if not x1 > x0:
            raise SceneError(where, f"{key}[{i}]", f"needs x0 < x1, got {x0:g}, {x1:g}")
        out.append((x0, x1, top))
    return tuple(out)


def parse_look(table: dict, where: str) -> Look:
    """A validated `Look` from a scene's `[look]` table (missing keys keep defaults)."""
    t = _known(where, "look", table, Look)
    k = "look."
    kw: dict[str, Any] = {}
    for name, v in t.items():
        key = k + name
        if name == "material":
            kw[name] = _choice(where, key, v, MATERIALS)
        elif name == "anchor":
            kw[name] = _choice(where, key, v, ANCHORS)
        elif name in ("rainbow", "floor"):
            kw[name] = _flag(where, key, v)
        elif name.endswith("colour") or name.startswith("background"):
            kw[name] = _vector(where, key, v, 3, 0.0, 1.0)
        elif name == "wire_width":
            kw[name] = _number(where, key, v, 1e-4, 0.05)
        elif name == "floor_y":
            kw[name] = _number(where, key, v, -1e3, 1e3)
        elif name == "stairs_depth":
            kw[name] = _number(where, key, v, 0.01, 10.0)
        elif name == "stairs":
            kw[name] = _steps(where, key, v)
    return replace(Look(), **kw)


def parse_camera(table: dict, where: str) -> CameraHint:
    """A validated `CameraHint` from a scene's `[camera]` table (or the --camera option)."""
    t = _known(where, "camera", table, CameraHint)
    kw: dict[str, Any] = {}
    for name, v in t.items():
        key = "camera." + name
        if name == "target":
            kw[name] = _vector(where, key, v, 3, -1e3, 1e3)
        elif name == "distance":
            kw[name] = _number(where, key, v, 1e-3, 1e3)
        elif name == "yaw_deg":
            kw[name] = _number(where, key, v, -360.0, 360.0)
        elif name == "pitch_deg":
            kw[name] = _number(where, key, v, -89.0, 89.0)
        elif name == "fov_deg":
            kw[name] = _number(where, key, v, 5.0, 120.0)
    return replace(CameraHint(), **kw)


def merge_camera(base: CameraHint, over: CameraHint) -> CameraHint:
    """`base` with the values that `over` sets (not None) replacing its own."""
    kw = {f.name: getattr(over, f.name) for f in fields(CameraHint)}
    kw = {k: v for k, v in kw.items() if v is not None and v != getattr(CameraHint(), k)}
    return replace(base, **kw)


__all__ = ["Look", "CameraHint", "parse_look", "parse_camera", "merge_camera"]
