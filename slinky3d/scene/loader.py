"""Scene files: TOML -> a validated `Scene` (format: docs/scene-format.md).

Loading reads the file, turns TOML syntax errors into one line, applies `--set`
overrides, and reads the top-level table; `slinky3d.scene.slinky` and
`slinky3d.scene.look` read the tables under it, all through `slinky3d.scene.validate`.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from slinky3d.engines import DEFAULT_ENGINE, ENGINES, PLANAR, THREE_D
from slinky3d.errors import SceneError
from slinky3d.model.chain3d import turn_about_vertical
from slinky3d.resources import data_dir, scene_path
from slinky3d.scene.look import (
    CAMERA_KEYS,
    DEFAULT_YAW_DEG,
    LOOK_KEYS,
    CameraHint,
    read_camera,
    read_look,
)
from slinky3d.scene.overrides import apply_overrides
from slinky3d.scene.slinky import SLINKY_KEYS, read_slinky
from slinky3d.scene.spec import Scene, SlinkySpec, default_dt
from slinky3d.scene.validate import Context, Table, did_you_mean
from slinky3d.scene.world import WORLD_KEYS, World, check_clear, read_world

DT_MAX = 5e-3  # s: the undamped explicit step nears its stability limit (modes ~400 rad/s)
# beyond it, and the damped one leaves sub-millimetre accuracy (docs/solver.md, "The default step")

SCENE_KEYS = ("title", "description", "references", "duration", "dt", "sleep", "solver",
              "rotate", "slinky", "look", "camera", "world")
ROTATE_MAX = 1e6  # degrees: a finite turn, far beyond any written on purpose


def from_dict(doc: dict, where: str = "<scene>", overrides: Sequence[str] = (),
              stem: str = "untitled") -> Scene:
    """Validate a parsed TOML document (after `--set` overrides) into a Scene."""
    doc = copy.deepcopy(doc)
    ctx = Context(where, apply_overrides(doc, overrides))
    t = Table(ctx, doc, "", SCENE_KEYS)
    if not t.has("slinky"):
        ctx.fail("slinky", "missing: a scene needs a [slinky] table (or [[slinky]] tables)")
    world_table = t.table("world", WORLD_KEYS)
    stairs = read_world(world_table).stairs  # the 'bent_over' shape stands on them
    raw = doc["slinky"]
    if isinstance(raw, list):
        if not raw:
            ctx.fail("slinky", "the [[slinky]] array is empty")
        slinkies = tuple(read_slinky(Table(ctx, s, f"slinky.{i}", SLINKY_KEYS), stairs)
                         for i, s in enumerate(raw))
    else:
        slinkies = (read_slinky(t.table("slinky", SLINKY_KEYS), stairs),)
    names = [s.name for s in slinkies if s.name]
    for n in names:
        if names.count(n) > 1:
            ctx.fail("slinky", f"two Slinkies are named '{n}'; names must differ")
    world = read_world(world_table, slinkies)
    look = read_look(t.table("look", LOOK_KEYS))
    if world.solid:
        if look.floor_y is not None:
            ctx.fail("look.floor_y", "the floor is where [world] floor puts it; drop floor_y")
        look = replace(look, floor_y=world.floor, stairs=world.blocks(drawn=True),
                       stairs_turns=world.turns())
    for i, s in enumerate(slinkies):
        check_clear(ctx, "slinky" if len(slinkies) == 1 else f"slinky.{i}", s, world)
    rotate = t.number("rotate", 0.0, lo=-ROTATE_MAX, hi=ROTATE_MAX)
    if world.solid:  # the blocks are drawn turned with the scene, as the 3D solver has them
        look = replace(look, stairs_turn=math.radians(rotate % 360.0))  # Scene.turn
    camera = turned_camera(read_camera(t.table("camera", CAMERA_KEYS)), rotate)
    return Scene(
        slinkies=slinkies,
        dt=t.number("dt", default_dt(slinkies), lo=0.0, hi=DT_MAX, open_lo=True),
        title=t.string("title", stem),
        description=t.caption("description", ""),
        references=t.string("references", ""),
        duration=t.number("duration", Scene.duration, lo=0.0),
        path=where,
        look=look,
        world=world,
        sleep=t.boolean("sleep", Scene.sleep),
        camera=camera,
        raw=doc,
        solver=_engine(t, slinkies, rotate, world),
        rotate=rotate,
    )


def _engine(t: Table, slinkies: tuple[SlinkySpec, ...], rotate: float,
            world: World) -> str:
    """The scene's engine: its `solver` key (or --solver's), else the planar one unless
    the scene needs the 3D one (turned out of the x-y plane, a block of its world turned
    out of it, an end moved along z or turned out of it, a scripted end let go, a start
    in motion), which is then picked by itself (docs/scene-format.md)."""
    why = ""
    if rotate % 360.0 != 0.0:
        why = f"rotate = {rotate:g} turns it out of the x-y plane"
    if not why and world.turned:
        why = f"world.{world.turned} turns a block out of the x-y plane"
    for i, s in enumerate(slinkies):
        m = s.anchor.motion
        which = f"Slinky {i + 1}'s" if len(slinkies) > 1 else "its"
        if not why and m is not None and m.out_of_plane:
            why = f"{which} anchored end moves along z (motion.amplitude)"
        if not why and m is not None and m.turns_out_of_plane:
            why = f"{which} anchored end turns about an axis other than z (motion.rot_axis)"
        if not why and m is not None and math.isfinite(s.anchor.release_time):
            why = f"{which} scripted end is let go (release_time)"
        if not why and s.moving_at_start:
            why = f"{which} start moves it ([slinky.start])"
        if not why and s.far_gripped:
            why = f"{which} far end is held while its anchored end moves"
    engine = t.choice("solver", THREE_D if why else DEFAULT_ENGINE, ENGINES)
    if engine == PLANAR and why:
        t.fail("solver", f"the planar solver cannot run this scene: {why}; the 3D solver "
                         f"runs it (solver = '{THREE_D}', picked by itself without the key)")
    return engine


def turned_camera(camera: CameraHint, rotate: float) -> CameraHint:
    """The camera hint of a scene turned by `rotate` degrees about the vertical: its
    yaw turned with it (unset: the default view's) and its target turned about y."""
    turn = rotate % 360.0
    if turn == 0.0:
        return camera
    yaw = (DEFAULT_YAW_DEG if camera.yaw_deg is None else camera.yaw_deg) + turn
    yaw = (yaw + 180.0) % 360.0 - 180.0
    target = camera.target
    if target is not None:
        x, y, z = turn_about_vertical(math.radians(turn)) @ np.array(target, float)
        target = (float(x), float(y), float(z))
    return replace(camera, yaw_deg=yaw, target=target)


def loads(text: str, where: str = "<string>", overrides: Sequence[str] = (),
          stem: str = "untitled") -> Scene:
    """Parse and validate scene TOML text."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SceneError(where, "", _toml_message(e)) from None
    return from_dict(doc, where, overrides, stem)


def _toml_message(e: tomllib.TOMLDecodeError) -> str:
    msg = str(e)
    m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
    if m:
        what = msg[: m.start()].strip()
        return f"line {m.group(1)}, column {m.group(2)}: invalid TOML: {what}"
    return f"invalid TOML: {msg}"


def load(name_or_path: str | Path, overrides: Sequence[str] = ()) -> Scene:
    """Load a scene file (a path, or the name of a shipped scene such as "1Pa")."""
    path = scene_path(str(name_or_path))
    if not path.is_file():
        names = [p.stem for p in shipped()]
        what = ("is a directory, not a scene file" if path.is_dir()
                else "no such scene file" + did_you_mean(Path(name_or_path).stem, names))
        raise SceneError(str(name_or_path), "", f"{what} (shipped scenes: {', '.join(names)})")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SceneError(str(path), "", f"cannot read: {e}") from None
    return loads(text, str(path), overrides, stem=path.stem)


def shipped() -> list[Path]:
    """The scene files that ship with slinky3d, sorted by name."""
    return sorted(data_dir("scenes").glob("*.toml"))
