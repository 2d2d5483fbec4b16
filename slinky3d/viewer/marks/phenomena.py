"""The overlays that show what the Slinky does, for people who would rather look than
read: the centre of mass and its free-fall parabola, the collapse front, the contact
timeline, coils coloured by stretch, and a click on coil impacts.

A part of the window (window.Viewer): it reads the scene, the stage and the source's
history, and says what it does through the window's `say`; the window joins its
`action` and `view` to the panel's actions and the overlay's view. Each overlay is
toggled by a key (keys.py) and in the panel's "overlays" section; all start off. The 3D
ones are drawn in the scene: the centre of mass as a glowing marker, its parabola as a
glowing line from the release down to the floor, the front as a ring around its coil
(the renderer's `marks`: main pass only, no shadow); the stretch as the renderer's
per-hoop tints; the timeline in its own overlay window (overlay/timeline.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.runtime.source import Source
from slinky3d.scene.spec import Scene
from slinky3d.viewer import coupling
from slinky3d.viewer.marks import collapse_front, stretch
from slinky3d.viewer.marks.free_fall import FreeFall, Parabola, centre_of_mass
from slinky3d.viewer.overlay import timeline

# (name, the panel's label), in the order of the keys of keys.py's "overlay" binding.
OVERLAYS: tuple[tuple[str, str], ...] = (
    ("com", "centre of mass"),
    ("front", "collapse front"),
    ("timeline", "contact timeline"),
    ("stretch", "stretch colours"),
    ("sound", "impact click"),
)
COM_COLOUR = (1.0, 0.25, 0.85)  # magenta: apart from every material and the stretch colours
PARABOLA_COLOUR = (1.0, 0.55, 0.95)
FRONT_COLOUR = timeline.FRONT_COLOUR[:3]
COM_SIZE = 0.45  # the marker's half size, in Slinky radii (x, y) ...
COM_DEPTH = 1.5  # ... and along z: it pierces the coils, so it shows through them
PARABOLA_WIDTH = 0.07  # the parabola's tube radius, in Slinky radii
PARABOLA_SECONDS = 3.0  # the parabola is drawn this long after the release at most
PARABOLA_SEGMENTS = 60
FRONT_RING = 1.35  # the front's ring radius, in Slinky radii
FRONT_WIDTH = 0.09  # its tube radius, in Slinky radii
TIMELINE_PERIOD = 0.1  # wall s between updates of the timeline (as the HUD's plot)


class Sound(Protocol):
    """The click on impacts (app/impact_sound.py's ImpactSound)."""

    unavailable: str  # why there is no click ("": it works, or none was asked for)

    def enable(self, on: bool) -> bool: ...

    def frame(self, snap: Snapshot, now: float) -> int: ...


@dataclass(frozen=True)
class SetOverlay:
    """The panel's "Overlays" section turned one on or off."""

    name: str
    on: bool


@dataclass(frozen=True)
class PhenomenaView:
    """What the 2D overlay shows of these overlays (overlay.OverlayView.phenomena)."""

    on: frozenset[str]
    sound_unavailable: str  # why there is no click ("": none asked for, or it works)
    timelines: tuple[timeline.Timeline | None, ...] = ()


class Phenomena:
    """The overlays' state, their keys, and what they add to the frame."""

    def __init__(self, source: Source, scene: Callable[[], Scene],
                 stage: Callable[[], Any], say: Callable[[str], None], sound: Sound):
        self.source, self._scene, self._stage, self._say = source, scene, stage, say
        self.on: set[str] = set()
        self.impact_sound = sound
        self._falls: tuple[Any, list[FreeFall]] | None = None  # (scene, one per Slinky)
        self._parabola_mesh: tuple[tuple, np.ndarray] | None = None
        self._timelines: tuple[float, float, tuple] | None = None  # (wall, t, timelines)

    def actions(self) -> dict[str, Callable[[int], None]]:
        """The overlay keys (keys.py): the index-th of OVERLAYS on or off."""
        return {"overlay": lambda index: self.toggle(OVERLAYS[index][0])}

    # -- toggles -------------------------------------------------------------------
    def set(self, name: str, on: bool) -> None:
        """Turn overlay `name` (OVERLAYS) on or off; the click only with an audio device."""
        if name == "sound":
            on = self.impact_sound.enable(on)
            if not on and self.impact_sound.unavailable:
                self._say(f"click on impacts unavailable: {self.impact_sound.unavailable}")
        if on:
            self.on.add(name)
        else:
            self.on.discard(name)

    def toggle(self, name: str) -> None:
        self.set(name, name not in self.on)

    def action(self, action: object) -> bool:
        """Carry out the panel's `action` if it is these overlays' (SetOverlay)."""
        if isinstance(action, SetOverlay):
            self.set(action.name, action.on)
            return True
        return False

    # -- each frame ----------------------------------------------------------------
    def observe(self, snap: Snapshot, now: float) -> None:
        """The frame shows `snap`: follow the releases (so that the parabola is there the
        moment its overlay is turned on), click on impacts."""
        for fall, sl in zip(self.free_falls(), snap.slinkies, strict=False):
            fall.observe(snap.t, sl)
        self.impact_sound.frame(snap, now)

    def free_falls(self) -> list[FreeFall]:
        """One free-fall tracker per Slinky of the scene, each with its gravity."""
        scene = self._scene()
        if self._falls is None or self._falls[0] is not scene:
            self._falls = (scene, [FreeFall(s.params.g) for s in scene.slinkies])
        return self._falls[1]

    def props(self, snap: Snapshot) -> list[np.ndarray]:
        """This frame's 3D marks ((n, 10) mesh triangles, as props): the centre of mass,
        its parabola, the collapse front."""
        parts: list[np.ndarray] = []
        if "com" in self.on:
            for fall, sl in zip(self.free_falls(), snap.slinkies, strict=False):
                parts.append(com_marker(centre_of_mass(sl), sl.R))
                if fall.parabola is not None:
                    parts.append(self._parabola(fall.parabola, sl.R))
        if "front" in self.on:
            for sl in snap.slinkies:
                f = collapse_front.front(sl)
                if f is not None:
                    parts.append(front_ring(sl.ends, f, sl.R))
        return parts

    def marks(self, snap: Snapshot) -> np.ndarray | None:
        """`props` as one mesh for the renderer's `marks` (None: nothing)."""
        parts = self.props(snap)
        return np.concatenate(parts) if parts else None

    def _parabola(self, p: Parabola, R: float) -> np.ndarray:
        floor_y = self._stage().floor_y
        key = (p.t0, tuple(p.p0), tuple(p.v0), p.g, R, floor_y)
        if self._parabola_mesh is None or self._parabola_mesh[0] != key:
            self._parabola_mesh = (key, parabola_tube(p, R, floor_y))
        return self._parabola_mesh[1]

    def tints(self, snap: Snapshot) -> list[np.ndarray | None] | None:
        """Per Slinky, the per-hoop tints of the colour by stretch (None: off)."""
        if "stretch" not in self.on:
            return None
        out: list[np.ndarray | None] = []
        for spec, sl in zip(self._scene().slinkies, snap.slinkies, strict=False):
            p = spec.params
            out.append(stretch.tints(sl, stretch.hanging_angle(p.m, p.g, p.R, p.N, p.k_coil)))
        return out

    def view(self, snap: Snapshot, now: float) -> PhenomenaView:
        """What the 2D overlay shows: the toggles and the timelines up to `snap`'s time."""
        timelines: tuple = ()
        if "timeline" in self.on:
            cached = self._timelines
            if cached is None or now - cached[0] >= TIMELINE_PERIOD or snap.t < cached[1]:
                snaps = self.source.history.snapshots()
                timelines = tuple(timeline.build(snaps, i, snap.t)
                                  for i in range(len(snap.slinkies)))
                self._timelines = (now, snap.t, timelines)
            else:
                timelines = cached[2]
        return PhenomenaView(on=frozenset(self.on),
                             sound_unavailable=self.impact_sound.unavailable,
                             timelines=timelines)


def com_marker(com: np.ndarray, R: float) -> np.ndarray:
    """The centre of mass: a glowing octahedron at (x, y, 0), long along z so that it
    pierces the coils around it and shows on both sides."""
    m = _com_marker_at_origin(float(R)).copy()
    m[:, :2] += np.asarray(com, "f4")
    return m


@functools.lru_cache(maxsize=8)
def _com_marker_at_origin(R: float) -> np.ndarray:
    m = coupling.marker(np.zeros(2), COM_SIZE * R, (*COM_COLOUR, 1.0))
    k = COM_DEPTH / COM_SIZE
    m[:, 2] *= k  # its centre is at z = 0
    n = m[:, 3:6].astype(float)
    n[:, 2] /= k  # normals of the stretched faces
    m[:, 3:6] = n / np.linalg.norm(n, axis=1, keepdims=True)
    return m


def parabola_tube(p: Parabola, R: float, floor_y: float) -> np.ndarray:
    """The parabola from its release down to the floor (PARABOLA_SECONDS at most), a
    glowing tube in the plane z = 0."""
    t1 = p.until(floor_y, p.t0 + PARABOLA_SECONDS)
    xy = p.at(np.linspace(p.t0, max(t1, p.t0 + 1e-3), PARABOLA_SEGMENTS + 1))
    pts = np.c_[xy, np.zeros(len(xy))]
    return coupling.tube(pts, PARABOLA_WIDTH * R, (*PARABOLA_COLOUR, coupling.GLOW), sides=5)


def front_ring(ends: np.ndarray, f: int, R: float) -> np.ndarray:
    """A glowing ring around the coil at joint f (collapse_front): about half hoop f (the
    last one when f = N), in the plane of its bar and z."""
    e = np.asarray(ends, float)
    k = min(f, len(e) - 2)
    c, d = 0.5 * (e[k] + e[k + 1]), e[k + 1] - e[k]
    ux, uy = d / max(float(np.linalg.norm(d)), 1e-12)
    ring = _ring_at_origin(float(R))  # about the x axis: turned onto u, moved to c
    out = ring.copy()
    for col in (0, 3):  # positions, normals
        x, y = ring[:, col], ring[:, col + 1]
        out[:, col], out[:, col + 1] = ux * x - uy * y, uy * x + ux * y
    out[:, :2] += c.astype("f4")
    return out


@functools.lru_cache(maxsize=8)
def _ring_at_origin(R: float) -> np.ndarray:
    """The front's ring about the origin, in the plane of x and z."""
    phi = np.linspace(0.0, 2 * np.pi, 33)
    pts = FRONT_RING * R * np.c_[np.cos(phi), np.zeros_like(phi), np.sin(phi)]
    return coupling.tube(pts, FRONT_WIDTH * R, (*FRONT_COLOUR, coupling.GLOW), sides=5)


def panel_section(view: PhenomenaView | None, imgui: Any,
                  rects: dict[str, tuple[float, float, float, float]]) -> list[SetOverlay]:
    """The panel's "Overlays" section: a checkbox per overlay (its rectangle into `rects`
    under the overlay's name); the click, when there is no audio device, greyed out and
    saying so."""
    if view is None:
        return []
    out = []
    imgui.separator()
    imgui.text("overlays")
    for i, (name, label) in enumerate(OVERLAYS):
        if i % 2 == 0:  # two a row: the panel is tall already
            imgui.same_line()
        off = name == "sound" and bool(view.sound_unavailable)
        imgui.begin_disabled(off)
        text = f"{label} (unavailable: {view.sound_unavailable})" if off else label
        changed, on = imgui.checkbox(text, name in view.on)
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        rects[name] = (lo.x, lo.y, hi.x, hi.y)
        imgui.end_disabled()
        if changed:
            out.append(SetOverlay(name, on))
    return out
