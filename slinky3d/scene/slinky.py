"""A scene's [slinky] table (or one of its [[slinky]] tables) -> a validated `SlinkySpec`.

Parameters, the two ends, the initial shape, contact and grab; the rules between the
ends and the shape are in docs/scene-format.md.
"""

from __future__ import annotations

import functools
import math
from dataclasses import fields, replace

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.model import chain
from slinky3d.model.bent_over import bent_over
from slinky3d.model.params import OVERRIDABLE, PRESETS, Params, preset
from slinky3d.scene.spec import (
    ANCHOR_CONDITIONS,
    CONTACT_LAWS,
    FAR_CONDITIONS,
    SHAPES,
    ContactSpec,
    EndSpec,
    GrabSpec,
    Motion,
    SlinkySpec,
)
from slinky3d.scene.validate import ANGLE, PLACE, Bounds, Table, _count, check_number
from slinky3d.scene.world import Stairs

# Half hoops: the most whose static shapes solve in seconds (docs/benchmarks.md, static
# shapes: N = 10000 held at both ends ~3-7 s; at 20000 some take minutes). Far beyond
# any real Slinky; the one place a scene's size is capped.
N_MAX = 10000

# Where the model's parameters may lie: physical signs, and guards against typos far
# beyond any real Slinky (a 1 t, 10 m Slinky is still allowed) that keep the static
# solve and the solvers' arithmetic finite.
PARAM_BOUNDS: dict[str, Bounds] = {
    "mass": {"lo": 1e-6, "hi": 1e3},  # kg
    "R": {"lo": 1e-4, "hi": 10.0},  # m
    "L0": {"lo": 1e-5, "hi": 1e2},  # m
    "I": {"lo": 1e-15, "hi": 1e3},  # kg m^2
    "k_coil": {"lo": 1e-9, "hi": 1e6},  # N m / rad: a spring, or there is no shape
    "C_D": {"lo": 0.0, "hi": 1e3},  # N m s / rad
    "g": {"lo": -1e3, "hi": 1e3},  # m / s^2
}
FORCE: Bounds = {"lo": 0.0, "hi": 1e9}  # stiffnesses and dampings of contact and grab
STIFF: Bounds = {**FORCE, "open_lo": True}  # a stiffness: > 0

SLINKY_KEYS = ("name", "preset", *OVERRIDABLE, "anchor", "far", "shape", "contact", "grab",
               "start")
START_KEYS = ("velocity", "spin")
SPEED: Bounds = {"lo": -100.0, "hi": 100.0}  # m/s and rad/s: a start's motion (a roll)
ANCHOR_KEYS = ("position", "orientation", "condition", "release_time", "motion")
FAR_PLACES = ("offset", "offset_R", "position")  # where a both_ends far end goes: one of these
FAR_KEYS = ("condition", "release_time", *FAR_PLACES, "orientation")
SHAPE_KEYS = ("kind", "theta")
CONTACT_KEYS = tuple(f.name for f in fields(ContactSpec))
GRAB_KEYS = tuple(f.name for f in fields(GrabSpec))
MOTION_KEYS = tuple(f.name for f in fields(Motion))


# ----------------------------------------------------------------- parameters


def _params(t: Table) -> Params:
    name = t.choice("preset", "plastic", tuple(PRESETS))
    over: dict[str, float] = {}
    n_coils = t.number("n_coils", None, lo=1.0)
    if n_coils is not None:
        if n_coils > N_MAX / 2:
            t.fail("n_coils", f"at most {N_MAX / 2:g} (N = {N_MAX} half hoops, the largest "
                              f"Slinky whose static shape solves in seconds), got {n_coils:g}")
        if abs(2 * n_coils - round(2 * n_coils)) > 1e-9:
            t.fail("n_coils", "must be a whole number of half coils (N = 2 n_coils), "
                              f"got {n_coils:g}")
        over["n_coils"] = n_coils
    for k, bounds in PARAM_BOUNDS.items():
        v = t.number(k, None, **bounds)
        if v is not None:
            over[k] = v
    tmin = t.number("theta_min", None, lo=1e-6, hi=math.pi / 2, open_hi=True)
    if tmin is not None:
        over["theta_min"] = tmin
    return preset(name, **over)


# ----------------------------------------------------------------------- ends


def _release(t: Table, condition: str, scripted: bool = False) -> float:
    """When the end is let go (s): 'released' at its release_time (default 0), a
    scripted anchored end at its own if it names one (the hand lets go as it moves: a
    toss; the 3D solver), 'free' at 0, otherwise never."""
    ok = condition == "released" or (scripted and condition == "scripted")
    t.only_with(["release_time"], ok, "to condition 'released'" + (
        " or 'scripted'" if scripted else ""), condition)
    if condition == "released":
        return t.number("release_time", 0.0, lo=0.0)
    if condition == "scripted" and t.has("release_time"):
        return t.number("release_time", math.inf, lo=0.0)
    return 0.0 if condition == "free" else math.inf


def _amplitude(t: Table, default: tuple[float, ...]) -> tuple[float, ...]:
    """[x, y] (the plane), or [x, y, z] (z != 0 needs the 3D solver), m."""
    v = t.data.get("amplitude")
    if isinstance(v, list) and len(v) == 3:
        return t.vector("amplitude", default, 3, **PLACE)
    if v is not None and not (isinstance(v, list) and len(v) == 2):
        t.fail("amplitude", "must be an array of two numbers [x, y] or three [x, y, z], "
                            f"got {_count(v)}")
    return t.point("amplitude", (default[0], default[1]))


def _phase(t: Table, amplitude: tuple[float, ...]) -> float | tuple[float, ...]:
    """One number (every axis), or [x, y] or [x, y, z] (rad); an amplitude along z
    needs z's phase when they are given per axis."""
    v = t.data.get("phase")
    if not isinstance(v, list):
        return t.number("phase", 0.0, **ANGLE)
    if len(v) not in (2, 3):
        t.fail("phase", "must be a number, or an array of two numbers [x, y] or three "
                        f"[x, y, z], got {_count(v)}")
    if len(v) == 2 and len(amplitude) == 3 and amplitude[2] != 0.0:
        t.fail("phase", "must give z's phase too, [x, y, z], as the amplitude moves "
                        "along z")
    return t.vector("phase", 0.0, len(v), **ANGLE)


def _axis(t: Table, default: tuple[float, float, float]) -> tuple[float, float, float]:
    """[x, y, z], not all zero (its length does not matter)."""
    v = t.vector("rot_axis", default, 3, **PLACE)
    if not any(v):
        t.fail("rot_axis", "must not be [0, 0, 0] (a direction to turn about)")
    x, y, z = v
    return (x, y, z)


def _motion(t: Table) -> Motion:
    m = Motion()
    amplitude = _amplitude(t, m.amplitude)
    motion = Motion(
        amplitude=amplitude,
        frequency=t.number("frequency", m.frequency, lo=0.0, hi=1e3, open_lo=True),
        phase=_phase(t, amplitude),
        rot_amplitude=t.number("rot_amplitude", m.rot_amplitude, **ANGLE),
        rot_axis=_axis(t, m.rot_axis),
        start=t.number("start", m.start, lo=0.0),
        frequency_rate=t.number("frequency_rate", m.frequency_rate, lo=0.0),
        frequency_max=t.number("frequency_max", m.frequency_max, lo=0.0, open_lo=True),
        stop=t.number("stop", m.stop, lo=0.0),
    )
    if motion.stop < motion.start:
        t.fail("stop", f"must be >= start ({motion.start:g} s), got {motion.stop:g}")
    if motion.frequency_max < motion.frequency:
        t.fail("frequency_max", f"must be >= frequency ({motion.frequency:g} Hz), got "
                                f"{motion.frequency_max:g}")
    return motion


def _anchor(t: Table) -> EndSpec:
    cond = t.choice("condition", "held", ANCHOR_CONDITIONS)
    release = _release(t, cond, scripted=True)
    t.only_with(["motion"], cond == "scripted", "to condition 'scripted'", cond)
    motion = None
    if cond == "scripted":
        if not t.has("motion"):
            t.fail("condition", f"'scripted' needs a [{t.key('motion')}] table")
        motion = _motion(t.table("motion", MOTION_KEYS))
    return EndSpec(
        condition=cond,
        release_time=release,
        position=t.point("position", (0.0, 0.0)),
        orientation=t.number("orientation", 0.0, **ANGLE),
        motion=motion,
    )


def _far_condition(t: Table) -> str:
    if t.data.get("condition") == "scripted":
        t.fail("condition", "a scripted far end is not supported; script the anchored end")
    return t.choice("condition", "free", FAR_CONDITIONS)


# ---------------------------------------------------------------------- shape


@functools.lru_cache(maxsize=64)
def _static(p: Params, kind: str, anchor: tuple[float, float], phi_A: float,
            far: tuple[float, float], phi_B: float) -> np.ndarray:
    """The static shape, cached: the continuation takes a while and tests reload scenes."""
    from slinky3d.model import static_shape  # lazily: scipy's optimiser is needed only here

    if kind == "hanging":
        q = static_shape.hanging(p, anchor=anchor, phi_A=phi_A)
    else:
        q = static_shape.both_ends(p, anchor, phi_A, far=far, phi_B=phi_B)
    q = np.asarray(q, dtype=float)
    q.setflags(write=False)
    return q


def _angles(t: Table, p: Params) -> np.ndarray:
    if not t.has("theta"):
        t.fail("kind", f"'angles' needs {t.key('theta')} (N = {p.N} torsion angles, rad)")
    v = t.data["theta"]
    if not isinstance(v, list):
        v = [v] * p.N  # one number: every joint alike
    elif len(v) != p.N:
        t.fail("theta", f"must have N = {p.N} values (one per joint), got {len(v)}")
    th = np.array([check_number(t.ctx, t.key("theta"), x) for x in v])
    lo, hi = p.theta_min, 2 * math.pi - p.theta_min
    bad = np.flatnonzero((th < lo - 1e-12) | (th > hi + 1e-12))
    if bad.size:
        k = int(bad[0])
        t.fail("theta", f"joint {k + 1} is {th[k]:.6g} rad, outside [theta_min, 2 pi - "
                        f"theta_min] = [{lo:.6g}, {hi:.6g}] (coils cannot interpenetrate)")
    return th


def _check_holds(at: Table, ft: Table, st: Table, anchor: EndSpec, far_until: float,
                 kind: str) -> None:
    """The rules between the two ends and the shape."""
    if far_until > 0 and kind != "both_ends":
        ft.fail("condition", f"a far end held at t = 0 needs {st.key('kind')} = 'both_ends' "
                             "(the static shape between the two held ends)")
    anchor_until = anchor.held_until()
    if far_until > 0 and anchor_until < far_until:
        # The solvers freeze a Slinky held at both ends in its static shape, exact only
        # while neither end moves; a moving anchor's far end is held by a hand's grip
        # instead, on the 3D solver (Scene.needs_3d).
        if anchor.condition == "scripted":
            return
        at.fail("condition", f"the anchored end is let go at t = {anchor_until:g} s while the "
                             f"far end is held until t = {far_until:g} s; hold the anchor at "
                             "least as long (or swap the ends)")


def _far_target(ft: Table, st: Table, p: Params,
                anchor_xy: tuple[float, float]) -> tuple[tuple[float, float], float]:
    """The far end's position and orientation phi_B for the both_ends shape."""
    given = [k for k in FAR_PLACES if ft.has(k)]
    if not given:
        ft.fail("offset", f"{st.key('kind')} = 'both_ends' needs the far end's offset "
                          "(or offset_R, in units of R, or position)")
    if len(given) > 1:
        ft.fail(given[1], f"give only one of {', '.join(FAR_PLACES)} (also got {given[0]})")
    if not ft.has("orientation"):
        ft.fail("orientation", f"{st.key('kind')} = 'both_ends' needs the far end's "
                               "orientation phi_B (rad; pi for the paper's tests)")
    v = ft.point(given[0], (0.0, 0.0))
    if given[0] == "position":
        far_xy = v
    else:
        scale = p.R if given[0] == "offset_R" else 1.0
        far_xy = (anchor_xy[0] + scale * v[0], anchor_xy[1] + scale * v[1])
    dist, reach = math.dist(far_xy, anchor_xy), 2 * p.R * p.N
    if dist > reach:
        ft.fail(given[0], f"the far end is {dist:.4g} m from the anchored end, farther "
                          f"than the Slinky reaches (2 R N = {reach:.4g} m)")
    return far_xy, ft.number("orientation", 0.0, **ANGLE)


def _initial(st: Table, ft: Table, p: Params, kind: str, anchor: EndSpec,
             stairs: Stairs | None = None) -> tuple[np.ndarray, tuple[float, float], float]:
    """q0 at rest, and the far end's pose in it."""
    xy, phi_A = anchor.position, anchor.orientation
    if kind == "bent_over":
        if stairs is None:
            st.fail("kind", "'bent_over' bends the Slinky over the top step of the "
                            "[world.stairs]: the scene has none")
        try:
            q0 = bent_over(p, stairs.top, stairs.height, stairs.depth, stairs.landing)
        except SlinkyError as e:
            st.fail("kind", f"no bent-over start: {e}")
        phi_A = float(q0[2])
    elif kind == "angles":
        q0 = np.concatenate([xy, [phi_A], _angles(st, p)])
    else:
        far_xy, phi_B = _far_target(ft, st, p, xy) if kind == "both_ends" else ((0.0, 0.0), 0.0)
        try:
            q0 = _static(p, kind, xy, phi_A, far_xy, phi_B)
        except SlinkyError as e:
            what = "hanging shape" if kind == "hanging" else "static shape between the two ends"
            st.fail("kind", f"no {what}: {e}")
        if kind == "both_ends":
            return np.array(q0), far_xy, phi_B
    # Elsewhere the far end is where the shape puts it (for drawing and for solvers).
    x, y = (float(c) for c in chain.end_points(q0, p.R)[-1])
    return np.array(q0), (x, y), float(chain.composite(q0[chain.BASE:], phi_A)[-1])


def _contact(ct: Table) -> ContactSpec:
    c = ContactSpec()
    return ContactSpec(
        enabled=ct.boolean("enabled", c.enabled),
        law=ct.choice("law", c.law, CONTACT_LAWS),
        stiffness=ct.number("stiffness", c.stiffness, **STIFF),
        damping=ct.number("damping", c.damping, **FORCE),
    )


def _grab(gt: Table) -> GrabSpec:
    g = GrabSpec()
    return GrabSpec(
        stiffness=gt.number("stiffness", g.stiffness, **STIFF),
        damping=gt.number("damping", g.damping, **FORCE),
        max_force_weights=gt.number("max_force_weights", g.max_force_weights, lo=0.0,
                                    hi=1e3, open_lo=True),
    )


def read_slinky(t: Table, stairs: Stairs | None = None) -> SlinkySpec:
    """A validated `SlinkySpec` from a table read with SLINKY_KEYS; `stairs`: the
    scene's, for the 'bent_over' shape."""
    name = t.string("name", "")
    p = _params(t)
    at, ft = t.table("anchor", ANCHOR_KEYS), t.table("far", FAR_KEYS)
    st = t.table("shape", SHAPE_KEYS)
    anchor = _anchor(at)
    far_cond = _far_condition(ft)
    far_release = _release(ft, far_cond)
    kind = st.choice("kind", "hanging", SHAPES)
    st.only_with(["theta"], kind == "angles", "to shape kind 'angles'", kind)
    ft.only_with([*FAR_PLACES, "orientation"], kind == "both_ends",
                 f"to {st.key('kind')} = 'both_ends'", kind)
    _check_holds(at, ft, st, anchor, far_release, kind)
    if kind == "bent_over":
        at.only_with(["position", "orientation"], False, "without the 'bent_over' shape, "
                     "which places the anchored end", kind)
    q0, far_xy, phi_B = _initial(st, ft, p, kind, anchor, stairs)
    if kind == "bent_over":  # the anchored end stands where the shape put it
        anchor = replace(anchor, position=(float(q0[0]), float(q0[1])),
                                     orientation=float(q0[2]))
    far = EndSpec(condition=far_cond, release_time=far_release, position=far_xy,
                  orientation=phi_B)
    velocity, spin = _start(t.table("start", START_KEYS), anchor, far)
    return SlinkySpec(params=p, anchor=anchor, far=far, q0=q0, shape=kind,
                      contact=_contact(t.table("contact", CONTACT_KEYS)),
                      grab=_grab(t.table("grab", GRAB_KEYS)), name=name,
                      velocity=velocity, spin=spin)


def _start(t: Table, anchor: EndSpec, far: EndSpec) -> tuple[tuple[float, float, float],
                                                               tuple[float, float, float]]:
    """[slinky.start]: the whole Slinky moving at t = 0 as a rigid body, its centre of
    mass at `velocity` (m/s) and turning at `spin` (rad/s) about it (world, before the
    scene's `rotate`; the 3D solver's, picked by itself): a Slinky thrown, or set rolling.
    Only a Slinky loose at t = 0 can move so."""
    v = t.vector("velocity", (0.0, 0.0, 0.0), 3, **SPEED)
    w = t.vector("spin", (0.0, 0.0, 0.0), 3, **SPEED)
    if any(v) or any(w):
        for end, key in ((anchor, "anchor"), (far, "far")):
            if end.held_at(0.0):
                t.fail("velocity" if any(v) else "spin",
                       f"a Slinky held at t = 0 cannot start moving (its {key} end is "
                       f"'{end.condition}')")
    return (v[0], v[1], v[2]), (w[0], w[1], w[2])
