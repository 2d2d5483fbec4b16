"""How a scene looks: materials, floor, stairs, holders, camera hint.

Plain dataclasses with every default in one place (`Look()`, `CameraHint()`), and
`read_look` / `read_camera` that turn a scene's `[look]` / `[camera]` table into them
through the scene validator. Nothing here imports OpenGL: the scene loader and the
tests use it without a context.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Unpack

from slinky3d.scene.validate import PLACE, Bounds, Context, D, Table

MATERIALS = ("auto", "steel", "plastic")
ANCHORS = ("post", "hand", "none")
# How the camera moves (viewer/director.py): held still, following the Slinkies, or
# following them while it sways about them.
CAMERA_MODES = ("fixed", "follow", "cinematic")

RGB = tuple[float, float, float]
COLOUR: Bounds = {"lo": 0.0, "hi": 1.0}  # display RGB
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
    stairs: tuple[Step, ...] = ()  # the world's blocks (scene.world), not a key
    stairs_turn: float = 0.0  # rad about the vertical: the scene's `rotate`, not a key
    # each block's own turn (rad) and pivot x before the scene's (world.turns), not a key
    stairs_turns: tuple[tuple[float, float], ...] = ()
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


DEFAULT_YAW_DEG = 22.0  # the view's yaw: a little off the side view, so the helices read as 3D


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
    mode: str | None = None


def _three(t: Table, k: str, default: D, **bounds: Unpack[Bounds]
           ) -> tuple[float, float, float] | D:
    v = t.vector(k, None, 3, **bounds)
    if v is None:
        return default
    a, b, c = v
    return (a, b, c)


# The blocks drawn are the world's (scene.world, filled in by the loader): not a key.
LOOK_KEYS = tuple(f.name for f in fields(Look)
                  if f.name not in ("stairs", "stairs_turn", "stairs_turns"))
CAMERA_KEYS = tuple(f.name for f in fields(CameraHint))


def read_look(t: Table) -> Look:
    """A validated `Look` from a scene's `[look]` table (missing keys keep defaults)."""
    d = Look()
    return Look(
        material=t.choice("material", d.material, MATERIALS),
        colour=_three(t, "colour", d.colour, **COLOUR),
        rainbow=t.boolean("rainbow", d.rainbow),
        wire_width=t.number("wire_width", d.wire_width, lo=1e-4, hi=0.05),
        background_top=_three(t, "background_top", d.background_top, **COLOUR),
        background_bottom=_three(t, "background_bottom", d.background_bottom, **COLOUR),
        floor=t.boolean("floor", d.floor),
        floor_y=t.number("floor_y", d.floor_y, **PLACE),
        floor_colour=_three(t, "floor_colour", d.floor_colour, **COLOUR),
        stairs_colour=_three(t, "stairs_colour", d.stairs_colour, **COLOUR),
        stairs_depth=t.number("stairs_depth", d.stairs_depth, lo=0.01, hi=10.0),
        anchor=t.choice("anchor", d.anchor, ANCHORS),
    )


def read_camera(t: Table) -> CameraHint:
    """A validated `CameraHint` from a scene's `[camera]` table."""
    d = CameraHint()
    return CameraHint(
        target=_three(t, "target", d.target, **PLACE),
        distance=t.number("distance", d.distance, lo=1e-3, hi=1e3),
        yaw_deg=t.number("yaw_deg", d.yaw_deg, lo=-360.0, hi=360.0),
        pitch_deg=t.number("pitch_deg", d.pitch_deg, lo=-89.0, hi=89.0),
        fov_deg=t.number("fov_deg", d.fov_deg, lo=5.0, hi=120.0),
        mode=t.choice("mode", "", CAMERA_MODES) if t.has("mode") else d.mode,
    )


def parse_look(table: Any, where: str) -> Look:
    """`read_look` of a table on its own, its errors pointing at `where`."""
    return read_look(Table(Context(where), table, "look", LOOK_KEYS))


def parse_camera(table: Any, where: str) -> CameraHint:
    """`read_camera` of a table on its own (the --camera option), errors pointing at `where`."""
    return read_camera(Table(Context(where), table, "camera", CAMERA_KEYS))


def merge_camera(base: CameraHint, over: CameraHint) -> CameraHint:
    """`base` with the values that `over` sets (not None) replacing its own."""
    kw = {f.name: getattr(over, f.name) for f in fields(CameraHint)}
    kw = {k: v for k, v in kw.items() if v is not None and v != getattr(CameraHint(), k)}
    return replace(base, **kw)


