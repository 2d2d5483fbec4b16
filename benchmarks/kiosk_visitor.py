"""A random museum visitor for the kiosk benchmarks (bench_kiosk.py, bench_soak.py): the
events pyglet would deliver, dispatched through the kiosk window's own handlers.

A day at the kiosk alternates: nobody there (the attract loop plays, and comes back
`idle` s after a visitor leaves), then a visitor who plays for a while with gestures
drawn at random: grab the Slinky's bottom end and swing it, orbit the camera, let go
(L), reset (R), drive the held end with the arrows, pause, slow down, replay, open
another scene, and the keys the kiosk must ignore (Esc, F11, P, V, K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# (key, weight): what a visitor presses; the kiosk ignores the last five.
KEYS = (("L", 3), ("R", 2), ("SPACE", 1), ("I", 1), ("MINUS", 1), ("PLUS", 1), ("TAB", 1),
        ("H", 1), ("G", 1), ("_1", 1), ("_3", 1), ("_5", 1), ("ESCAPE", 1), ("F11", 1),
        ("P", 1), ("V", 1), ("K", 1))
SCENE_KEYS = ("_1", "_3", "_5")  # open another scene
STAYING = tuple(kw for kw in KEYS if kw[0] not in SCENE_KEYS)  # a visitor who stays
GESTURES = (("drag", 5), ("orbit", 2), ("key", 4), ("drive", 2), ("wait", 2))


@dataclass
class Gesture:
    kind: str
    start: float
    length: float
    key: str = ""
    xy: tuple[float, float] = (0.0, 0.0)
    last: tuple[float, float] = (0.0, 0.0)


class Visitor:
    """Plays with `kiosk` whenever `step(now)` is called inside a visit."""

    def __init__(self, kiosk: Any, rng: np.random.Generator, visit: tuple[float, float] =
                 (10.0, 60.0), away: tuple[float, float] = (30.0, 150.0),
                 keys: tuple[tuple[str, int], ...] = KEYS):
        from pyglet.window import key, mouse

        self.k, self.rng, self.keys = kiosk, rng, keys
        self.key, self.mouse = key, mouse
        self.visit, self.away = visit, away
        self.g: Gesture | None = None
        self.visiting = False
        self.next_change = 0.0
        self.visits = 0
        self.gestures = 0

    def _pick(self, table) -> str:
        names, weights = zip(*table, strict=True)
        p = np.asarray(weights, float)
        return str(self.rng.choice(names, p=p / p.sum()))

    def step(self, now: float) -> None:
        if now >= self.next_change:
            self._end_gesture()
            self.visiting = not self.visiting
            lo, hi = self.visit if self.visiting else self.away
            self.next_change = now + float(self.rng.uniform(lo, hi))
            if self.visiting:
                self.visits += 1
                self.touch()
        if not self.visiting:
            return
        g = self.g
        if g is None or now - g.start >= g.length:
            self._end_gesture()
            self._start(now)
            return
        s = now - g.start
        if g.kind in ("drag", "orbit"):
            w, h = self.k.app.window.width, self.k.app.window.height
            x = g.xy[0] + 0.2 * w * math.sin(2 * math.pi * 0.4 * s)
            y = g.xy[1] + 0.15 * h * math.sin(2 * math.pi * 0.6 * s)
            lx, ly = g.last
            self._dispatch("on_mouse_drag", x, y, x - lx, y - ly, self.mouse.LEFT, 0)
            g.last = (x, y)

    def pause(self) -> None:
        """Hands off (the gesture under way ended), until `resume`."""
        self._end_gesture()
        self.visiting = False

    def resume(self, now: float) -> None:
        """Away from now, for a random while, then visits as before."""
        lo, hi = self.away
        self.next_change = now + float(self.rng.uniform(lo, hi))

    def touch(self) -> None:
        """A move of the mouse, as a hand taking it: the kiosk wakes to play."""
        self._dispatch("on_mouse_motion", 40.0, 40.0, 0, 0)
        self._dispatch("on_mouse_motion", 60.0, 50.0, 20, 10)

    def _start(self, now: float) -> None:
        kind = self._pick(GESTURES)
        g = Gesture(kind, now, float(self.rng.uniform(0.5, 4.0)))
        self.gestures += 1
        w = self.k.app.window
        if kind == "drag":
            sl = self.k.app.shown.slinkies[0]
            px = self.k.app.camera.project(np.r_[sl.ends[-1], 0.0][None], w.width, w.height)[0]
            g.xy = g.last = (float(px[0]), float(w.height - px[1]))
            self._dispatch("on_mouse_motion", *g.xy, 1, 1)
            self._dispatch("on_mouse_press", *g.xy, self.mouse.LEFT, 0)
        elif kind == "orbit":
            g.xy = g.last = (0.1 * w.width, 0.9 * w.height)
            self._dispatch("on_mouse_press", *g.xy, self.mouse.LEFT, 0)
        elif kind == "key":
            g.key = self._pick(self.keys)
            g.length = 0.2
            self._dispatch("on_key_press", getattr(self.key, g.key), 0)
        elif kind == "drive":
            g.key = str(self.rng.choice(["LEFT", "RIGHT", "UP", "DOWN"]))
            self._dispatch("on_key_press", getattr(self.key, g.key), 0)
        self.g = g

    def _end_gesture(self) -> None:
        g, self.g = self.g, None
        if g is None:
            return
        if g.kind in ("drag", "orbit"):
            self._dispatch("on_mouse_release", *g.last, self.mouse.LEFT, 0)
        elif g.kind in ("key", "drive"):
            self._dispatch("on_key_release", getattr(self.key, g.key), 0)

    def _dispatch(self, name: str, *args) -> None:
        if self.k.app.window.context is not None:
            self.k.app.window.dispatch_event(name, *args)
