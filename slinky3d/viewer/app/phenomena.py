"""The overlays that show what the Slinky does, for people who would rather look than
read: the centre of mass and its free-fall parabola, the collapse front, the contact
timeline, coils coloured by stretch, and a click on coil impacts.

A part of the window (window.Viewer): it reads the scene, the stage and the source's
history, and says what it does through the window's `say`; the window joins its
`action` and `view` to the panel's actions and the overlay's view. The 3D marks' meshes
are marks/meshes.py's; the toggles' list and checkboxes overlay/panel.py's. Each overlay is
toggled by a key (keys.py) and in the panel's "overlays" section; all start off. The 3D
ones are drawn in the scene: the centre of mass as a glowing marker, its parabola as a
glowing line from the release down to the floor, the front as a ring around its coil
(the renderer's `marks`: main pass only, no shadow); the stretch as the renderer's
per-hoop tints; the timeline in its own overlay window (overlay/timeline.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.runtime.source import Source
from slinky3d.scene.spec import Scene
from slinky3d.viewer.app.impact_sound import ImpactSound
from slinky3d.viewer.marks import collapse_front, stretch
from slinky3d.viewer.marks.free_fall import FreeFall, Parabola, centre_of_mass
from slinky3d.viewer.marks.meshes import com_marker, front_ring, parabola_tube
from slinky3d.viewer.overlay import timeline
from slinky3d.viewer.overlay.panel import OVERLAYS, PhenomenaView, SetOverlay

TIMELINE_PERIOD = 0.1  # wall s between updates of the timeline (as the HUD's plot)


class Phenomena:
    """The overlays' state, their keys, and what they add to the frame."""

    def __init__(self, source: Source, scene: Callable[[], Scene],
                 stage: Callable[[], Any], say: Callable[[str], None], sound: ImpactSound):
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
                    parts.append(front_ring(sl.ends, f, sl.R, sl.bulge))
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
