"""Orbit camera: projection, framing, orbit/zoom/pan."""

import math

import numpy as np
import pytest

from slinky3d.scene.look import CameraHint
from slinky3d.viewer.camera import OrbitCamera, frame_box

W, H = 640, 360


def test_side_view_axes():
    cam = OrbitCamera(target=np.zeros(3), distance=2.0, yaw=0.0, pitch=0.0)
    assert np.allclose(cam.eye(), [0, 0, 2])
    px = cam.project(np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.5]]), W, H)
    assert np.allclose(px[0], [W / 2, H / 2])
    assert px[1, 0] > W / 2 and np.isclose(px[1, 1], H / 2)  # +x to the right
    assert px[2, 1] < H / 2 and np.isclose(px[2, 0], W / 2)  # +y up (rows go down)
    assert np.allclose(px[3], [W / 2, H / 2])  # along the view axis


def test_projection_matches_pinhole():
    cam = OrbitCamera(target=np.array([0.2, -0.3, 0.0]), distance=1.5, yaw=0.0, pitch=0.0,
                      fov_deg=40.0)
    f = (H / 2) / math.tan(math.radians(20.0))  # focal length in pixels
    p = cam.project(np.array([[0.2 + 0.1, -0.3 + 0.05, 0.0]]), W, H)[0]
    assert np.allclose(p, [W / 2 + f * 0.1 / 1.5, H / 2 - f * 0.05 / 1.5], atol=1e-6)


@pytest.mark.parametrize("yaw, pitch", [(0, 0), (30, 10), (-60, 45), (90, -20)])
def test_frame_box_shows_all_corners(yaw, pitch):
    lo, hi = np.array([-0.1, -1.0, -0.03]), np.array([0.05, 0.0, 0.03])
    cam = frame_box(lo, hi, W / H, CameraHint(yaw_deg=yaw, pitch_deg=pitch))
    c = np.array([[a, b, z] for a in (lo[0], hi[0]) for b in (lo[1], hi[1])
                  for z in (lo[2], hi[2])])
    px = cam.project(c, W, H)
    assert np.all(px >= -1e-6) and np.all(px[:, 0] <= W) and np.all(px[:, 1] <= H)
    # Tight: the box fills the frame in at least one direction (margin 12 %).
    span = np.ptp(px, axis=0) / [W, H]
    assert span.max() > 0.75


def test_hint_overrides_framing():
    hint = CameraHint(target=(1.0, 2.0, 3.0), distance=4.0, yaw_deg=10.0, pitch_deg=5.0,
                      fov_deg=50.0)
    cam = frame_box(np.zeros(3), np.ones(3), 16 / 9, hint)
    assert np.allclose(cam.target, [1, 2, 3]) and cam.distance == 4.0 and cam.fov_deg == 50.0
    assert math.isclose(cam.yaw, math.radians(10.0))


def test_orbit_zoom_pan():
    cam = OrbitCamera(target=np.zeros(3), distance=2.0, yaw=0.0, pitch=0.0)
    cam.orbit(100, 0)
    assert cam.yaw != 0 and np.isclose(np.linalg.norm(cam.eye() - cam.target), 2.0)
    cam.orbit(0, -1e6)
    assert cam.pitch == pytest.approx(math.radians(89.0))  # clamped short of the pole
    cam.zoom(1)
    assert cam.distance == pytest.approx(1.8)
    cam.zoom(-2)
    assert cam.distance == pytest.approx(1.8 / 0.81)
    # Panning moves the scene with the mouse: a point follows the cursor by dx pixels.
    cam = OrbitCamera(target=np.zeros(3), distance=2.0, yaw=0.3, pitch=0.2)
    p = np.array([[0.0, 0.0, 0.0]])
    before = cam.project(p, W, H)[0]
    cam.pan(25, 0, H)
    after = cam.project(p, W, H)[0]
    assert np.allclose(after - before, [25, 0], atol=1e-6)


def test_view_proj_is_pyrr_row_vector_convention():
    cam = OrbitCamera(target=np.zeros(3), distance=3.0, yaw=0.4, pitch=0.3)
    vp = cam.view_proj(W / H)
    clip = np.array([0.0, 0.0, 0.0, 1.0]) @ vp
    assert np.allclose(clip[:2], 0.0) and clip[3] == pytest.approx(3.0)
