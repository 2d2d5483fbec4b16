"""Picking: the ray under a pixel meets z = 0 where the camera projects that point; the
nearest end point within the pick radius is found; extreme cursors stay finite."""

from dataclasses import replace

import numpy as np
import pytest
from shapes import hanging_snapshot

from slinky3d.viewer.app import picking
from slinky3d.viewer.camera import frame_snapshot

SIZE = (640, 360)


@pytest.fixture(params=[False, True], ids=["perspective", "ortho"])
def cam(request):
    c = frame_snapshot(hanging_snapshot("steel"), SIZE)
    return replace(c, ortho=True, yaw=0.0, pitch=0.0) if request.param else c


def test_ray_through_a_projected_point_hits_it(cam):
    rng = np.random.default_rng(1)
    pts = np.c_[rng.uniform(-0.3, 0.3, 20), rng.uniform(-1.0, 0.1, 20), np.zeros(20)]
    px = cam.project(pts, *SIZE)
    box = (np.array([-10.0, -10.0]), np.array([10.0, 10.0]))
    for p, (x, y) in zip(pts, px, strict=True):
        assert np.allclose(picking.cursor_point(cam, x, y, SIZE, box), p[:2], atol=1e-9)


def test_nearest_end_point_within_the_radius(cam):
    snap = hanging_snapshot("steel")
    ends = snap.slinkies[0].ends
    px = cam.project(np.c_[ends, np.zeros(len(ends))], *SIZE)
    for k in (0, 40, len(ends) - 1):
        x, y = px[k] + [1.0, -1.0]
        i, j = picking.nearest_point(snap, cam, x, y, SIZE)
        # several ends may share a pixel where coils are collapsed; the one found is there
        assert i == 0 and np.linalg.norm(px[j] - px[k]) < 2.0
    far = px.min(axis=0) - 3 * picking.PICK_RADIUS_PX
    assert picking.nearest_point(snap, cam, *far, SIZE) is None


def test_a_click_in_the_middle_of_a_coil_takes_hold_of_it(cam):
    """The end points lie on the coils' rims; the centre of a half hoop, one radius
    from both its ends, is still in reach (zoomed in, a radius is many pixels)."""
    snap = hanging_snapshot("steel")
    sl = snap.slinkies[0]
    close = replace(cam, distance=0.25 * cam.distance)
    for k in (20, 60):
        centre = 0.5 * (sl.ends[k] + sl.ends[k + 1])
        x, y = close.project(np.r_[centre, 0.0][None], *SIZE)[0]
        ends_px = close.project(np.c_[sl.ends[k:k + 2], np.zeros(2)], *SIZE)
        assert np.linalg.norm(ends_px - [x, y], axis=1).min() > picking.PICK_RADIUS_PX
        hit = picking.nearest_point(snap, close, x, y, SIZE)
        # on screen the coils overlap: a neighbour's end may be the nearer one
        assert hit is not None and np.linalg.norm(sl.ends[hit[1]] - centre) < 3 * sl.R


def test_extreme_cursors_stay_finite_and_in_the_box(cam):
    box = picking.scene_box(hanging_snapshot("steel"), 1.0)
    for x, y in ((-1e9, 5.0), (1e9, 1e9), (SIZE[0] / 2, -1e7), (np.inf, 0.0), (np.nan, 0.0)):
        p = picking.cursor_point(cam, x, y, SIZE, box)
        assert np.all(np.isfinite(p)) and np.all(p >= box[0][:2]) and np.all(p <= box[1][:2])
        q = picking.facing_point(cam, x, y, SIZE, np.array([0.1, -0.3, 0.05]), box)
        assert np.all(np.isfinite(q)) and np.all(q >= box[0]) and np.all(q <= box[1])


def test_edge_on_plane_falls_back_to_the_target_plane():
    c = frame_snapshot(hanging_snapshot("steel"), SIZE)
    c = replace(c, yaw=np.pi / 2, pitch=0.0)  # looking along -x: z = 0 is seen edge-on
    box = (np.array([-5.0, -5.0]), np.array([5.0, 5.0]))
    p = picking.cursor_point(c, SIZE[0] / 2, SIZE[1] / 2, SIZE, box)
    assert np.allclose(p, c.target[:2], atol=1e-9)
    assert picking.on_plane(c.eye(), -c.basis()[2]) is None


def test_a_3d_slinkys_end_point_is_picked_where_it_is_drawn(cam):
    """A 3D snapshot's end points off the plane are picked where the camera shows them
    (not where their x, y would be at z = 0)."""
    from shapes import snapshot3d, swung

    from slinky3d.runtime.snapshot import Snapshot

    sl = hanging_snapshot("steel", stretch=0.3).slinkies[0]
    s3 = snapshot3d(sl, *swung(sl))
    snap = Snapshot(t=0.0, slinkies=(s3,))
    assert np.ptp(s3.ends[:, 2]) > 0.05
    px = cam.project(s3.ends, *SIZE)
    for k in (0, 60, len(s3.ends) - 1):
        i, j = picking.nearest_point(snap, cam, *px[k], SIZE)
        assert i == 0 and np.linalg.norm(px[j] - px[k]) < 2.0


def test_a_3d_drag_moves_the_point_across_the_screen_at_its_depth(cam):
    """On the 3D solver the cursor's point lies on the plane through the grabbed point
    facing the camera: where the camera projects it, at the grabbed point's depth; a
    quarter turn of the camera about the vertical turns a sideways drag into depth."""
    box = (np.full(3, -10.0), np.full(3, 10.0))
    through = np.array([0.05, -0.4, 0.1])
    _, _, back = cam.basis()
    rng = np.random.default_rng(3)
    for x, y in rng.uniform([0, 0], SIZE, (10, 2)):
        p = picking.facing_point(cam, x, y, SIZE, through, box)
        assert np.allclose(cam.project(p[None], *SIZE)[0], [x, y], atol=1e-6)
        assert abs((p - through) @ back) < 1e-9
    side = replace(cam, yaw=cam.yaw + np.pi / 2)  # a quarter turn
    x0, y0 = side.project(through[None], *SIZE)[0]
    moved = picking.facing_point(side, x0 + 50, y0, SIZE, through, box) - through
    was_depth = cam.basis()[2]
    assert abs(moved @ was_depth) > 0.9 * np.linalg.norm(moved) > 0.0


def test_shift_drag_and_the_wheel_move_the_point_along_the_view(cam):
    box = (np.full(3, -10.0), np.full(3, 10.0))
    p = np.array([0.05, -0.4, 0.1])
    right, up, back = cam.basis()
    away = picking.along_view(cam, p, 30.0, SIZE[1], box)
    assert np.allclose(np.cross(away - p, back), 0.0, atol=1e-12) and (away - p) @ back < 0
    # it stays under the cursor's pixel only in the orthographic view; in both it moves
    # a pixel's worth at its depth per pixel of the drag
    depth = (cam.eye() - p) @ back if not cam.ortho else cam.distance
    per_px = 2 * depth * np.tan(np.radians(cam.fov_deg) / 2) / SIZE[1]
    assert np.isclose(np.linalg.norm(away - p), 30.0 * per_px)
    back_again = picking.along_view(cam, away, -30.0, SIZE[1], box)
    if cam.ortho:
        assert np.allclose(back_again, p)
    else:  # a pixel's worth at the new depth: nearly back, from further away
        assert (back_again - away) @ back > 0 and np.linalg.norm(back_again - p) < 0.1 * \
            np.linalg.norm(away - p)
