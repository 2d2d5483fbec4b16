"""Orbit camera (pyrr matrices): orbit, zoom and pan about a target; frames a box or
snapshots.

Matrices follow pyrr's row-vector convention (`p_clip = p @ view @ proj`); written to a
GLSL mat4 as raw float32 bytes they are exactly the column-major matrices GL expects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pyrr import matrix44

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import DEFAULT_YAW_DEG, CameraHint
from slinky3d.viewer.helix import bounds
from slinky3d.viewer.stage import Stage

DEFAULT_PITCH_DEG = 8.0
MARGIN = 1.12  # framing leaves this much room around the box


@dataclass
class OrbitCamera:
    """Eye on a sphere of radius `distance` about `target`; angles in radians.

    yaw 0, pitch 0 looks along -z at the x-y plane (the model's side view). `ortho`
    projects orthographically, the view height being what the perspective view shows at
    the target's distance (the 2D side view, as in the paper's figures).
    """

    target: np.ndarray
    distance: float
    yaw: float = math.radians(DEFAULT_YAW_DEG)
    pitch: float = math.radians(DEFAULT_PITCH_DEG)
    fov_deg: float = 35.0
    ortho: bool = False
    # view_proj's last few matrices by (pose, aspect): a frame asks for the same one
    # several times (the passes, the boxes on screen, picking), and each costs ~0.2 ms.
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def eye(self) -> np.ndarray:
        cp = math.cos(self.pitch)
        d = np.array([cp * math.sin(self.yaw), math.sin(self.pitch), cp * math.cos(self.yaw)])
        return np.asarray(self.target, float) + self.distance * d

    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Camera right, up and backward unit vectors in world space: backward points to
        the eye, right is the world's up crossed with it, up is backward x right (in
        closed form: np.cross costs ~0.1 ms, and the director asks several times a
        frame)."""
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        cp, sp = math.cos(self.pitch), math.sin(self.pitch)
        return (np.array([cy, 0.0, -sy]), np.array([-sp * sy, cp, -sp * cy]),
                np.array([cp * sy, sp, cp * cy]))

    def clip_range(self) -> tuple[float, float]:
        # Near scales with the zoom so close-ups keep depth precision; far holds the floor.
        return 0.02 * self.distance, 60.0 * self.distance + 10.0

    def view(self) -> np.ndarray:
        return matrix44.create_look_at(self.eye(), self.target, [0.0, 1.0, 0.0], dtype=float)

    def half_height(self) -> float:
        """Half the view's height at the target's distance, m."""
        return self.distance * math.tan(math.radians(self.fov_deg) / 2)

    def projection(self, aspect: float) -> np.ndarray:
        near, far = self.clip_range()
        if self.ortho:
            hh = self.half_height()
            return matrix44.create_orthogonal_projection(-hh * aspect, hh * aspect, -hh, hh,
                                                         near, far, float)
        return matrix44.create_perspective_projection(self.fov_deg, aspect, near, far, float)

    def ray(self, x: float, y: float, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        """The ray under pixel (x right, y down, row 0 on top): origin and unit direction."""
        right, up, back = self.basis()
        hh = self.half_height()
        sx = (2 * x / width - 1) * hh * width / height
        sy = (1 - 2 * y / height) * hh
        if self.ortho:
            return self.eye() + sx * right + sy * up, -back
        d = sx * right + sy * up - self.distance * back
        return self.eye(), d / np.linalg.norm(d)

    def view_proj(self, aspect: float) -> np.ndarray:
        """The view and projection matrices' product (read-only: it may be shared)."""
        key = (tuple(np.asarray(self.target, float)), self.distance, self.yaw, self.pitch,
               self.fov_deg, self.ortho, aspect)
        vp = self._memo.get(key)
        if vp is None:
            if len(self._memo) >= 4:
                self._memo.clear()
            vp = self._memo[key] = self.view() @ self.projection(aspect)
            vp.flags.writeable = False
        return vp

    def project(self, points: np.ndarray, width: int, height: int) -> np.ndarray:
        """(n, 3) world points -> (n, 2) pixel coordinates (x right, y down, row 0 on top)."""
        p = np.c_[points, np.ones(len(points))] @ self.view_proj(width / height)
        ndc = p[:, :2] / p[:, 3:4]
        return np.c_[(ndc[:, 0] + 1) * 0.5 * width, (1 - ndc[:, 1]) * 0.5 * height]

    # Mouse handling: pixel deltas in, camera moves out.
    def orbit(self, dx: float, dy: float, speed: float = 0.006) -> None:
        self.yaw -= dx * speed
        lim = math.radians(89.0)
        self.pitch = min(max(self.pitch - dy * speed, -lim), lim)

    def zoom(self, steps: float) -> None:
        """Positive steps move closer (one mouse-wheel notch = 10 %)."""
        self.distance = min(max(self.distance * 0.9**steps, 0.02), 500.0)

    def pan(self, dx: float, dy: float, viewport_height: int) -> None:
        """Move the target with the mouse: the point under the cursor stays under it."""
        right, up, _ = self.basis()
        scale = 2 * self.distance * math.tan(math.radians(self.fov_deg) / 2) / viewport_height
        self.target = np.asarray(self.target, float) - (dx * right + dy * up) * scale


def corners(lo, hi) -> np.ndarray:
    """(8, 3) corners of the axis-aligned box lo-hi."""
    return np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1])
                     for c in (lo[2], hi[2])], float)


def fit_distance(cam: OrbitCamera, points: np.ndarray, aspect: float,
                 margin: float = MARGIN) -> float:
    """The least distance at which `cam`, about its target and at its angles, shows every
    point with `margin` room (1: touching the picture's edge)."""
    # Exact fit: a point at view offset (x, y, z) from the target needs
    # D >= z + |x| / tan(hfov/2) (and likewise y); a bounding sphere would waste space.
    right, up, back = cam.basis()
    c = np.asarray(points, float) - cam.target
    x, y, z = c @ right, c @ up, c @ back
    ty = math.tan(math.radians(cam.fov_deg) / 2) / margin
    tx = ty * aspect
    return float(max(np.max(z + np.abs(x) / tx), np.max(z + np.abs(y) / ty), 0.05))


def frame_box(
    lo: np.ndarray, hi: np.ndarray, aspect: float, hint: CameraHint | None = None
) -> OrbitCamera:
    """A camera that shows the box [lo, hi] whole; a hint's values override the framing."""
    hint = hint or CameraHint()
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    cam = OrbitCamera(
        target=np.array(hint.target, float) if hint.target else 0.5 * (lo + hi),
        distance=1.0,
        yaw=math.radians(DEFAULT_YAW_DEG if hint.yaw_deg is None else hint.yaw_deg),
        pitch=math.radians(DEFAULT_PITCH_DEG if hint.pitch_deg is None else hint.pitch_deg),
        fov_deg=hint.fov_deg,
    )
    if hint.distance is not None:
        cam.distance = hint.distance
        return cam
    cam.distance = fit_distance(cam, corners(lo, hi), aspect)
    return cam


def frame_snapshots(snaps: Sequence[Snapshot], size: tuple[int, int],
                    hint: CameraHint | None = None, stage: Stage | None = None,
                    reach: float | None = None) -> OrbitCamera:
    """The default camera: every Slinky of every snapshot in view, down to `reach` (the
    lowest y expected), and the floor under them when it is close (a hint's values
    override the framing)."""
    boxes = [bounds(s, pad=0.01) for s in snaps]
    lo = np.min([b[0] for b in boxes], axis=0)
    hi = np.max([b[1] for b in boxes], axis=0)
    if reach is not None:
        lo[1] = min(lo[1], reach)
    # Show the floor when it is close under the Slinky; a far one would shrink the view.
    if stage is not None and lo[1] - stage.floor_y < 0.3 * (hi[1] - lo[1]):
        lo[1] = min(lo[1], stage.floor_y)
    return frame_box(lo, hi, size[0] / size[1], hint)


def frame_snapshot(snap: Snapshot, size: tuple[int, int], hint: CameraHint | None = None,
                   stage: Stage | None = None) -> OrbitCamera:
    """`frame_snapshots` for one snapshot."""
    return frame_snapshots((snap,), size, hint, stage)
