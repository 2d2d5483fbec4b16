"""Scene files: TOML -> a validated `slinky3d.model.Scene` (format: README, "Scene files").

Validation is a flat list of checks; the first that fails raises a `SceneError`
whose one sentence names the file (or "--set") and the dotted key.
"""

from __future__ import annotations

import copy
import difflib
import functools
import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from slinky3d.errors import SceneError, SlinkyError
from slinky3d.model import chain
from slinky3d.model.params import OVERRIDABLE, PRESETS, Params, preset
from slinky3d.resources import data_dir, scene_path
from slinky3d.scene.overrides import SET_WHERE, apply_overrides
from slinky3d.scene.spec import (
    CONTACT_LAWS,
    ContactSpec,
    EndSpec,
    GrabSpec,
    Motion,
    Scene,
    SlinkySpec,
    default_dt,
)

SHAPES = ("hanging", "both_ends", "angles")
ANCHOR_CONDITIONS = ("held", "free", "released", "scripted")
FAR_CONDITIONS = ("held", "free", "released")
DT_MAX = 5e-3  # s: the undamped explicit step nears its stability limit (modes ~400 rad/s)
# beyond it, and the damped one leaves sub-millimetre accuracy (README, Real-time solver)
N_MAX = 20000  # half hoops; a guard against typos, far beyond any real Slinky

SCENE_KEYS = ("title", "description", "duration", "dt", "slinky", "look", "camera")
SLINKY_KEYS = ("name", "preset", *OVERRIDABLE, "anchor", "far", "shape", "contact", "grab")
ANCHOR_KEYS = ("position", "orientation", "condition", "release_time", "motion")
FAR_KEYS = ("condition", "release_time", "offset", "offset_R", "position", "orientation")
SHAPE_KEYS = ("kind", "theta")
CONTACT_KEYS = ("enabled", "law", "stiffness", "damping")
GRAB_KEYS = ("stiffness", "damping", "max_force_weights")
MOTION_KEYS = ("amplitude", "frequency", "phase", "rot_amplitude", "start")


class _Ctx:
    """Where errors point: the file, or "--set" for keys an override wrote."""

    def __init__(self, file: str, set_keys: Iterable[str] = ()):
        self.file = file
        self.set_keys = frozenset(set_keys)

    def fail(self, key: str, message: str) -> NoReturn:
        # The key itself, a table an override wrote, or a table holding a written key.
        from_set = key and any(key == s or key.startswith(s + ".") or s.startswith(key + ".")
                               for s in self.set_keys)
        raise SceneError(SET_WHERE if from_set else self.file, key, message)


def _type_name(v: Any) -> str:
    names = {bool: "a boolean", str: "a string", list: "an array", dict: "a table"}
    for t, n in names.items():
        if isinstance(v, t):
            return n
    return "a number" if isinstance(v, int | float) else type(v).__name__


def _suggest(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.5)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f" (known: {', '.join(known)})"


class _Table:
    """One TOML table under a dotted prefix, with typed getters that validate."""

    def __init__(self, ctx: _Ctx, data: Any, prefix: str, known: Sequence[str]):
        self.ctx, self.prefix = ctx, prefix
        if not isinstance(data, dict):
            ctx.fail(prefix, f"must be a table, not {_type_name(data)}")
        self.data: dict[str, Any] = data
        for k in data:
            if k not in known:
                ctx.fail(self.key(k), "unknown key" + _suggest(k, known))

    def key(self, k: str) -> str:
        return f"{self.prefix}.{k}" if self.prefix else k

    def fail(self, k: str, message: str) -> NoReturn:
        self.ctx.fail(self.key(k), message)

    def has(self, k: str) -> bool:
        return k in self.data

    def number(self, k: str, default: float, **bounds: Any) -> float:
        """A finite number (ints accepted) within the bounds of `_check_number`."""
        if k not in self.data:
            return default
        return _check_number(self.ctx, self.key(k), self.data[k], **bounds)

    def maybe(self, k: str, **bounds: Any) -> float | None:
        """Like `number`, None when absent."""
        return self.number(k, math.nan, **bounds) if k in self.data else None

    def string(self, k: str, default: str, choices: Sequence[str] | None = None) -> str:
        v = self.data.get(k, default)
        if not isinstance(v, str):
            self.fail(k, f"must be a string, not {_type_name(v)}")
        if choices is not None and v not in choices:
            self.fail(k, f"unknown value '{v}'" + _suggest(v, choices))
        return v

    def boolean(self, k: str, default: bool) -> bool:
        v = self.data.get(k, default)
        if not isinstance(v, bool):
            self.fail(k, f"must be true or false, not {_type_name(v)}")
        return v

    def vec2(self, k: str, default: tuple[float, float]) -> tuple[float, float]:
        if k not in self.data:
            return default
        v = self.data[k]
        if not isinstance(v, list) or len(v) != 2:
            got = f"{len(v)} values" if isinstance(v, list) else _type_name(v)
            self.fail(k, f"must be an array of two numbers [x, y], got {got}")
        x, y = (_check_number(self.ctx, self.key(k), c) for c in v)
        return (x, y)

    def table(self, k: str, known: Sequence[str]) -> _Table:
        return _Table(self.ctx, self.data.get(k, {}), self.key(k), known)

    def only_with(self, keys: Sequence[str], allowed: bool, why: str, here: str) -> None:
        """Reject keys that mean nothing in the chosen mode (a sign of a mistake)."""
        for k in keys:
            if k in self.data and not allowed:
                self.fail(k, f"only applies {why} (here '{here}')")


def _check_number(
    ctx: _Ctx,
    key: str,
    v: Any,
    lo: float | None = None,
    hi: float | None = None,
    open_lo: bool = False,
    open_hi: bool = False,
) -> float:
    """A finite float within [lo, hi] (an end excluded where open_*)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        ctx.fail(key, f"must be a number, not {_type_name(v)}")
    v = float(v)
    if not math.isfinite(v):
        ctx.fail(key, f"must be a finite number, not {v}")
    below = lo is not None and (v < lo or (open_lo and v == lo))
    above = hi is not None and (v > hi or (open_hi and v == hi))
    if below or above:
        if lo is not None and hi is not None:
            rng = f"in {'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        elif lo is not None:
            rng = f"{'>' if open_lo else '>='} {lo:g}"
        else:
            rng = f"{'<' if open_hi else '<='} {hi:g}"
        ctx.fail(key, f"must be {rng}, got {v:g}")
    return v


# ----------------------------------------------------------------- parameters


def _params(t: _Table) -> Params:
    name = t.string("preset", "plastic", choices=tuple(PRESETS))
    over: dict[str, float] = {}
    n_coils = t.maybe("n_coils", lo=1.0, hi=N_MAX / 2)
    if n_coils is not None:
        if abs(2 * n_coils - round(2 * n_coils)) > 1e-9:
            t.fail("n_coils", "must be a whole number of half coils (N = 2 n_coils), "
                              f"got {n_coils:g}")
        over["n_coils"] = n_coils
    for k in ("mass", "R", "L0", "I"):
        v = t.maybe(k, lo=0.0, open_lo=True)
        if v is not None:
            over[k] = v
    for k in ("k_coil", "C_D"):
        v = t.maybe(k, lo=0.0)
        if v is not None:
            over[k] = v
    g = t.maybe("g")
    if g is not None:
        over["g"] = g
    tmin = t.maybe("theta_min", lo=0.0, hi=math.pi / 2, open_lo=True, open_hi=True)
    if tmin is not None:
        over["theta_min"] = tmin
    return preset(name, **over)


# ----------------------------------------------------------------------- ends


def _release(t: _Table, condition: str) -> float:
    t.only_with(["release_time"], condition == "released", "to condition 'released'",
                condition)
    if condition == "released":
        return t.number("release_time", 0.0, lo=0.0)
    return 0.0 if condition == "free" else math.inf


def _motion(t: _Table) -> Motion:
    m = Motion()
    return Motion(
        amplitude=t.vec2("amplitude", m.amplitude),
        frequency=t.number("frequency", m.frequency, lo=0.0, open_lo=True),
        phase=t.number("phase", m.phase),
        rot_amplitude=t.number("rot_amplitude", m.rot_amplitude),
        start=t.number("start", m.start, lo=0.0),
    )


def _anchor(t: _Table) -> EndSpec:
    cond = t.string("condition", "held", choices=ANCHOR_CONDITIONS)
    release = _release(t, cond)
    t.only_with(["motion"], cond == "scripted", "to condition 'scripted'", cond)
    motion = None
    if cond == "scripted":
        if not t.has("motion"):
            t.fail("condition", f"'scripted' needs a [{t.key('motion')}] table")
        motion = _motion(t.table("motion", MOTION_KEYS))
    return EndSpec(
        condition=cond,
        release_time=release,
        position=t.vec2("position", (0.0, 0.0)),
        orientation=t.number("orientation", 0.0),
        motion=motion,
    )


def held_until(e: EndSpec) -> float:
    """The time until which an end stays still: a scripted end waits for its start."""
    if e.condition == "scripted":
        return e.motion.start if e.motion else 0.0
    return e.release_time


def _far_condition(t: _Table) -> str:
    cond = t.data.get("condition", "free")
    if cond == "scripted":
        t.fail("condition", "a scripted far end is not supported; script the anchored end")
    return t.string("condition", "free", choices=FAR_CONDITIONS)


# ---------------------------------------------------------------------- shape


@functools.lru_cache(maxsize=64)
def _static(p: Params, kind: str, anchor: tuple, phi_A: float, far: tuple, phi_B: float):
    """The static shape, cached: the continuation takes a while and tests reload scenes."""
    from slinky3d.model import (
        static_shape as equilibrium,  # lazily: scipy's optimiser is needed only here
    )

    if kind == "hanging":
        q = equilibrium.hanging(p, anchor=anchor, phi_A=phi_A)
    else:
        q = equilibrium.both_ends(p, anchor, phi_A, far=far, phi_B=phi_B)
    q = np.asarray(q, dtype=float)
    q.setflags(write=False)
    return q


def _angles(t: _Table, p: Params) -> np.ndarray:
    if not t.has("theta"):
        t.fail("kind", f"'angles' needs {t.key('theta')} (N = {p.N} torsion angles, rad)")
    v = t.data["theta"]
    if not isinstance(v, list):
        v = [v] * p.N  # one number: every joint alike
    elif len(v) != p.N:
        t.fail("theta", f"must have N = {p.N} values (one per joint), got {len(v)}")
    th = np.array([_check_number(t.ctx, t.key("theta"), x) for x in v])
    lo, hi = p.theta_min, 2 * math.pi - p.theta_min
    bad = np.flatnonzero((th < lo - 1e-12) | (th > hi + 1e-12))
    if bad.size:
        k = int(bad[0])
        t.fail("theta", f"joint {k + 1} is {th[k]:.6g} rad, outside [theta_min, 2 pi - "
                        f"theta_min] = [{lo:.6g}, {hi:.6g}] (coils cannot interpenetrate)")
    return th


def _check_holds(at: _Table, ft: _Table, st: _Table, anchor: EndSpec, far_until: float,
                 kind: str) -> None:
    """The rules between the two ends and the shape (README, "Scene files")."""
    if far_until > 0 and kind != "both_ends":
        ft.fail("condition", f"a far end held at t = 0 needs {st.key('kind')} = 'both_ends' "
                             "(the static shape between the two held ends)")
    anchor_until = held_until(anchor)
    if far_until > 0 and anchor_until < far_until:
        # The solver freezes a Slinky held at both ends in its static shape, exact only
        # while neither end moves.
        if anchor.condition == "scripted":
            at.fail("condition", "a moving anchor with a held far end is not supported; "
                                 "release the far end before the motion starts")
        at.fail("condition", f"the anchored end is let go at t = {anchor_until:g} s while the "
                             f"far end is held until t = {far_until:g} s; hold the anchor at "
                             "least as long (or swap the ends)")


def _far_target(ft: _Table, st: _Table, p: Params,
                anchor_xy: tuple[float, float]) -> tuple[tuple[float, float], float]:
    """The far end's position and orientation phi_B for the both_ends shape."""
    given = [k for k in ("offset", "offset_R", "position") if ft.has(k)]
    if not given:
        ft.fail("offset", f"{st.key('kind')} = 'both_ends' needs the far end's offset "
                          "(or offset_R, in units of R, or position)")
    if len(given) > 1:
        ft.fail(given[1], f"give only one of offset, offset_R, position (also got {given[0]})")
    if not ft.has("orientation"):
        ft.fail("orientation", f"{st.key('kind')} = 'both_ends' needs the far end's "
                               "orientation phi_B (rad; pi for the paper's tests)")
    v = ft.vec2(given[0], (0.0, 0.0))
    if given[0] == "position":
        far_xy = v
    else:
        scale = p.R if given[0] == "offset_R" else 1.0
        far_xy = (anchor_xy[0] + scale * v[0], anchor_xy[1] + scale * v[1])
    dist, reach = math.dist(far_xy, anchor_xy), 2 * p.R * p.N
    if dist > reach:
        ft.fail(given[0], f"the far end is {dist:.4g} m from the anchored end, farther "
                          f"than the Slinky reaches (2 R N = {reach:.4g} m)")
    return far_xy, ft.number("orientation", 0.0)


def _initial(st: _Table, ft: _Table, p: Params, kind: str, anchor: EndSpec
             ) -> tuple[np.ndarray, tuple[float, float], float]:
    """q0 at rest, and the far end's pose in it."""
    xy, phi_A = anchor.position, anchor.orientation
    if kind == "angles":
        q0 = np.concatenate([xy, [phi_A], _angles(st, p)])
    else:
        far_xy, phi_B = _far_target(ft, st, p, xy) if kind == "both_ends" else ((0, 0), 0)
        try:
            q0 = _static(p, kind, xy, phi_A, far_xy, phi_B)
        except SlinkyError as e:
            what = "hanging shape" if kind == "hanging" else "static shape between the two ends"
            st.fail("kind", f"no {what}: {e}")
        if kind == "both_ends":
            return np.array(q0), far_xy, phi_B
    # Elsewhere the far end is where the shape puts it (for drawing and for solvers).
    far_xy = tuple(float(c) for c in chain.end_points(q0, p.R)[-1])
    return np.array(q0), far_xy, float(chain.composite(q0[chain.BASE:], phi_A)[-1])


def _contact(ct: _Table) -> ContactSpec:
    c = ContactSpec()
    return ContactSpec(
        enabled=ct.boolean("enabled", c.enabled),
        law=ct.string("law", c.law, choices=CONTACT_LAWS),
        stiffness=ct.number("stiffness", c.stiffness, lo=0.0, open_lo=True),
        damping=ct.maybe("damping", lo=0.0),
    )


def _grab(gt: _Table) -> GrabSpec:
    g = GrabSpec()
    return GrabSpec(
        stiffness=gt.number("stiffness", g.stiffness, lo=0.0, open_lo=True),
        damping=gt.number("damping", g.damping, lo=0.0),
        max_force_weights=gt.number("max_force_weights", g.max_force_weights, lo=0.0,
                                    open_lo=True),
    )


def _slinky(ctx: _Ctx, data: Any, prefix: str) -> SlinkySpec:
    t = _Table(ctx, data, prefix, SLINKY_KEYS)
    name = t.string("name", "")
    p = _params(t)
    at, ft = t.table("anchor", ANCHOR_KEYS), t.table("far", FAR_KEYS)
    st = t.table("shape", SHAPE_KEYS)
    anchor = _anchor(at)
    far_cond = _far_condition(ft)
    far_release = _release(ft, far_cond)
    kind = st.string("kind", "hanging", choices=SHAPES)
    st.only_with(["theta"], kind == "angles", "to shape kind 'angles'", kind)
    ft.only_with(["offset", "offset_R", "position", "orientation"], kind == "both_ends",
                 f"to {st.key('kind')} = 'both_ends'", kind)
    _check_holds(at, ft, st, anchor, far_release, kind)
    q0, far_xy, phi_B = _initial(st, ft, p, kind, anchor)
    far = EndSpec(condition=far_cond, release_time=far_release, position=far_xy,
                  orientation=phi_B)
    return SlinkySpec(params=p, anchor=anchor, far=far, q0=q0, shape=kind,
                      contact=_contact(t.table("contact", CONTACT_KEYS)),
                      grab=_grab(t.table("grab", GRAB_KEYS)), name=name)


# ---------------------------------------------------------------- look/camera


def _hints(ctx: _Ctx, doc: dict, key: str) -> Any:
    """The renderer's [look] / [camera] tables, validated by slinky3d.look when present."""
    table = doc.get(key, {})
    if not isinstance(table, dict):
        ctx.fail(key, f"must be a table, not {_type_name(table)}")
    try:
        from slinky3d.scene import look
    except ImportError:
        return dict(table)  # the renderer's parser is optional for headless use
    parse = look.parse_look if key == "look" else look.parse_camera
    try:
        return parse(table, ctx.file)
    except SceneError as e:  # re-point at "--set" when an override wrote the key
        ctx.fail(e.key, str(e).removeprefix(f"{e.where}: {e.key}: "))


# ----------------------------------------------------------------------- load


def from_dict(doc: dict, where: str = "<scene>", overrides: Sequence[str] = (),
              stem: str = "untitled") -> Scene:
    """Validate a parsed TOML document (after `--set` overrides) into a Scene."""
    doc = copy.deepcopy(doc)
    ctx = _Ctx(where, apply_overrides(doc, overrides))
    t = _Table(ctx, doc, "", SCENE_KEYS)
    if not t.has("slinky"):
        ctx.fail("slinky", "missing: a scene needs a [slinky] table (or [[slinky]] tables)")
    raw = doc["slinky"]
    if isinstance(raw, list):
        if not raw:
            ctx.fail("slinky", "the [[slinky]] array is empty")
        slinkies = tuple(_slinky(ctx, s, f"slinky.{i}") for i, s in enumerate(raw))
    else:
        slinkies = (_slinky(ctx, raw, "slinky"),)
    names = [s.name for s in slinkies if s.name]
    for n in names:
        if names.count(n) > 1:
            ctx.fail("slinky", f"two Slinkies are named '{n}'; names must differ")
    kw: dict[str, Any] = {}
    if t.has("dt"):
        kw["dt"] = t.number("dt", 0.0, lo=0.0, hi=DT_MAX, open_lo=True)
    else:
        kw["dt"] = default_dt(slinkies)
    return Scene(
        slinkies=slinkies,
        title=t.string("title", stem),
        description=t.string("description", ""),
        duration=t.number("duration", Scene.duration, lo=0.0),
        path=where,
        look=_hints(ctx, doc, "look"),
        camera=_hints(ctx, doc, "camera"),
        raw=doc,
        **kw,
    )


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


def load(scene: str | Path, overrides: Sequence[str] = ()) -> Scene:
    """Load a scene file (a path, or the name of a shipped scene such as "1Pa")."""
    path = scene_path(str(scene))
    if not path.is_file():
        known = ", ".join(p.stem for p in shipped())
        what = "is a directory, not a scene file" if path.is_dir() else "no such scene file"
        raise SceneError(str(scene), "", f"{what} (shipped scenes: {known})")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SceneError(str(path), "", f"cannot read: {e}") from None
    return loads(text, str(path), overrides, stem=path.stem)


def shipped() -> list[Path]:
    """The scene files that ship with slinky3d, sorted by name."""
    return sorted(data_dir("scenes").glob("*.toml"))
