"""The camera director: the camera each picture is seen through, frame after frame.

Three modes (scene/look.py CAMERA_MODES):

* fixed: the scene's framing (camera.frame_snapshots), held still;
* follow: every Slinky, and the holder at a held end, kept in frame with a margin. The
  camera's target and the logarithm of its distance move toward the framing the
  Slinkies ask for as a critically damped spring (no overshoot). That goal has a dead
  band: it stays while the Slinkies' box stays inside it and fills most of it, so that
  coils vibrating inside it move nothing; it leads a Slinky that travels by its
  smoothed velocity times 2 / OMEGA, which cancels the spring's lag behind a steady
  motion (a fall), and not far past the floor, where a fall ends. Whatever the spring
  does, the box is kept in the picture, and the eye stays above the floor;
* cinematic: follow, the camera swaying slowly to and fro about the action.

Numpy only, no GL: the app, `record`, the kiosk and `screenshot` use it, and tests run
it headless. It has no clock of its own: `step` is told how much of the subject's time
passed (simulated seconds: the motion it follows) and of the show's (the film's, or the
window's, seconds: the sway), so a film is the same however fast it was made.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import CAMERA_MODES
from slinky3d.viewer.camera import OrbitCamera, corners, fit_distance
from slinky3d.viewer.helix import bounds, ends3

FIXED, FOLLOW, CINEMATIC = CAMERA_MODES

MARGIN = 1.2  # the goal's box fills 1 / MARGIN of the picture's height or width
# The Slinkies' box itself: when it needs more than 1 / KEEP of the picture the goal
# draws back (smoothly), and it never needs more than 1 / HARD_KEEP (at once).
KEEP, HARD_KEEP = 1.15, 1.03
# 1/s of simulated time: the springs' rates, the target's (settles to 2 % in 0.3 s: it
# keeps up with a fall) and the distance's, as quick (a collapsing Slinky shrinks fast)
OMEGA, OMEGA_ZOOM = 20.0, 20.0
RATES = np.array([OMEGA, OMEGA, OMEGA, OMEGA_ZOOM])  # of target x, y, z, ln distance
SLACK = 0.06  # the goal's box: the Slinkies' grown by this fraction of its size each side
SHRINK = 0.75  # ... set again when the Slinkies' box is less than this fraction of it
LEAD = 2.0 / OMEGA  # s: a travelling Slinky is led by its velocity times this
VELOCITY_TAU = 0.01  # s: the low-pass of that velocity
VELOCITY_DEAD = 0.2  # m/s: slower than this (a swing, a vibration) is not led
MIN_SPAN = 0.16  # m: the least box followed (a collapsed stack keeps its surroundings)
HOLDER_UP, HOLDER_SIDE = 0.12, 0.06  # m: room the holder (post clamp, hand) takes at a held end
FLOOR_CLEAR = 0.03  # the eye stays this fraction of its distance above the floor
SWAY_DEG, SWAY_PERIOD = 30.0, 16.0  # cinematic: degrees either way, show seconds per to-and-fro
DOLLY = 0.1  # cinematic: the distance breathes by this fraction, in step with the sway


def subject_box(snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """The box the follow camera keeps in view: every Slinky, and the room of the
    holder at each held end."""
    lo, hi = bounds(snap, pad=0.01)
    for sl in snap.slinkies:
        for held, k in ((sl.anchor_held, 0), (sl.far_held, -1)):
            if held:
                p = ends3(sl)[k]
                side = sl.R + HOLDER_SIDE
                lo = np.minimum(lo, p - side)
                hi = np.maximum(hi, p + [side, HOLDER_UP, side])
    return lo, hi


def _centre(snap: Snapshot) -> np.ndarray:
    """The mean of every end point (x, y, z): close to the centre of mass, which coils
    vibrating about it do not move."""
    pts = [ends3(sl) for sl in snap.slinkies]
    return np.concatenate(pts).mean(axis=0) if pts else np.zeros(3)


def spring(x: np.ndarray, v: np.ndarray, goal: np.ndarray, dt: float,
           omega: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """`dt` of x'' = -omega^2 (x - goal) - 2 omega x', solved exactly (stable for any dt)."""
    e = x - goal
    b = v + omega * e
    decay = np.exp(-omega * dt)
    return goal + (e + b * dt) * decay, (v - omega * b * dt) * decay


class Director:
    """The camera of one run. `base` is the fixed camera (its angles and field of view
    are the follow camera's too); `floor_y` the floor the eye stays above (None: none);
    `turn` (radians) is added to the yaw in every mode (`record --orbit`, the kiosk's
    sway); `room` (x0, y0, x1, y1: fractions of the picture, y down) is the part of the
    picture the Slinkies are framed in, the rest being reserved (the app's HUD and
    panel: overlay/placement.room)."""

    def __init__(self, mode: str, base: OrbitCamera, size: tuple[int, int],
                 floor_y: float | None = None):
        if mode not in CAMERA_MODES:
            raise ValueError(f"camera mode {mode!r}: one of {', '.join(CAMERA_MODES)}")
        self.mode, self.base, self.floor_y = mode, base, floor_y
        self.aspect = size[0] / max(size[1], 1)
        self.turn = 0.0
        self.room: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)
        self.show = 0.0  # show seconds since the start: the sway's phase
        self._x = np.zeros(4)  # target x, y, z and ln distance
        self._v = np.zeros(4)
        self._goal_box: tuple[np.ndarray, np.ndarray] | None = None
        self._centre: np.ndarray | None = None
        self._velocity = np.zeros(3)
        self.camera = replace(base)

    def resize(self, size: tuple[int, int]) -> None:
        self.aspect = size[0] / max(size[1], 1)

    # -- the angles -----------------------------------------------------------------
    def _angles(self) -> tuple[float, float]:
        """(yaw, distance factor) now: the base's turned, and the cinematic sway's."""
        yaw, scale = self.base.yaw + self.turn, 1.0
        if self.mode == CINEMATIC:
            phase = 2 * math.pi * self.show / SWAY_PERIOD
            yaw += math.radians(SWAY_DEG) * math.sin(phase)
            scale = 1.0 - DOLLY * math.cos(phase)
        return yaw, scale

    def _camera(self, target: np.ndarray, distance: float, yaw: float) -> OrbitCamera:
        return replace(self.base, target=np.array(target, float), distance=distance,
                       yaw=yaw, ortho=False)

    # -- the goal -------------------------------------------------------------------
    def _goal(self, box: tuple[np.ndarray, np.ndarray], yaw: float, scale: float,
              lead: np.ndarray) -> np.ndarray:
        """(target, ln distance) that frames the goal's box (set again when `box` leaves
        it or shrinks well inside it; centred on `box` while the Slinkies travel, so
        that it moves with them rather than in steps) with MARGIN, `lead` ahead."""
        lo, hi = box
        g = self._goal_box
        if g is not None:
            if np.any(lead):
                mid, half = 0.5 * (lo + hi), 0.5 * (g[1] - g[0])
                g = (mid - half, mid + half)
            inside = np.all(lo >= g[0]) and np.all(hi <= g[1])
            need = np.maximum(hi - lo, MIN_SPAN)[:2]
            have = (g[1] - g[0])[:2]
            if not inside or np.any(need < SHRINK * have):
                g = None
            self._goal_box = g
        if g is None:
            mid, half = 0.5 * (lo + hi), 0.5 * np.maximum(hi - lo, MIN_SPAN)
            half = half * (1 + 2 * SLACK)
            half[2] = 0.5 * (hi - lo)[2]  # across the Slinky's plane: its width only
            g = self._goal_box = (mid - half, mid + half)
        cam = self._camera(0.5 * (g[0] + g[1]), 1.0, yaw)
        # Framed in the room: fitted as if the picture were the room (its share of the
        # height is its share of the field of view's tangent), then the camera moved
        # across so that the goal's centre is seen at the room's centre.
        x0, y0, x1, y1 = self.room
        half = math.tan(math.radians(self.base.fov_deg) / 2)
        inner = replace(cam, fov_deg=math.degrees(2 * math.atan(half * (y1 - y0))))
        d = scale * fit_distance(inner, corners(*g), self.aspect * (x1 - x0) / (y1 - y0),
                                 MARGIN)
        right, up, _ = cam.basis()
        shift = d * half * ((x0 + x1 - 1) * self.aspect * right + (1 - y0 - y1) * up)
        target = cam.target - shift + lead
        if self.floor_y is not None:  # led not far past the floor, where a fall ends
            target[1] = max(target[1], self.floor_y - 0.5 * (g[1] - g[0])[1])
        return np.r_[target, math.log(d)]

    def _track(self, snap: Snapshot, dt: float) -> None:
        """The Slinkies' centre's velocity, low-passed over VELOCITY_TAU."""
        c = _centre(snap)
        if self._centre is not None and dt > 0:
            raw = (c - self._centre) / dt
            self._velocity += (1 - math.exp(-dt / VELOCITY_TAU)) * (raw - self._velocity)
        self._centre = c

    def _lead(self) -> np.ndarray:
        """How far ahead the goal goes: the velocity less VELOCITY_DEAD, times LEAD."""
        speed = float(np.linalg.norm(self._velocity))
        if speed <= VELOCITY_DEAD:
            return np.zeros(3)
        return self._velocity * (1.0 - VELOCITY_DEAD / speed) * LEAD

    # -- the frames -----------------------------------------------------------------
    def start(self, snap: Snapshot) -> OrbitCamera:
        """The camera at the start of a run (or after a jump in time): framed at once."""
        self._goal_box, self._centre = None, None
        self._velocity = np.zeros(3)
        self._track(snap, 0.0)
        yaw, scale = self._angles()
        box = subject_box(snap)
        self._x = self._goal(box, yaw, scale, np.zeros(3))
        self._v = np.zeros(4)
        return self._finish(box, yaw)

    def set_mode(self, mode: str, current: OrbitCamera) -> None:
        """Another mode, the camera moving on from `current` (no cut)."""
        if mode not in CAMERA_MODES:
            raise ValueError(f"camera mode {mode!r}: one of {', '.join(CAMERA_MODES)}")
        self.mode = mode
        self._x = np.r_[np.asarray(current.target, float), math.log(current.distance)]
        self._v = np.zeros(4)
        self._goal_box = None

    def step(self, snap: Snapshot, dt: float, show_dt: float = 0.0) -> OrbitCamera:
        """The camera for `snap`, `dt` simulated seconds and `show_dt` show seconds after
        the last frame."""
        self.show += show_dt
        yaw, scale = self._angles()
        if self.mode == FIXED:
            self.camera = replace(self.base, yaw=yaw)
            return self.camera
        self._track(snap, dt)
        box = subject_box(snap)
        goal = self._goal(box, yaw, scale, self._lead())
        here = self._camera(self._x[:3], 1.0, yaw)
        goal[3] = max(goal[3], math.log(fit_distance(here, corners(*box), self.aspect, KEEP)))
        if dt > 0:
            self._x, self._v = spring(self._x, self._v, goal, dt, RATES)
        return self._finish(box, yaw)

    def _finish(self, box: tuple[np.ndarray, np.ndarray], yaw: float) -> OrbitCamera:
        """The state as a camera: the Slinkies' box kept in the picture, the eye above
        the floor."""
        if self.mode == FIXED:
            self.camera = replace(self.base, yaw=yaw)
            return self.camera
        if self.floor_y is not None and self._x[1] < self.floor_y:
            # A Slinky stops on the floor, and so does the camera led down to it.
            self._x[1], self._v[1] = self.floor_y, max(self._v[1], 0.0)
        cam = self._camera(self._x[:3], math.exp(self._x[3]), yaw)
        need = fit_distance(cam, corners(*box), self.aspect, HARD_KEEP)
        if need > cam.distance:
            cam.distance = need
            self._x[3] = math.log(need)
            self._v[3] = max(self._v[3], 0.0)
        if self.floor_y is not None:
            low = self.floor_y + FLOOR_CLEAR * cam.distance
            if cam.eye()[1] < low:
                s = (low - cam.target[1]) / cam.distance
                cam.pitch = math.asin(min(max(s, -0.99), 0.99))
        self.camera = cam
        return cam
