"""Helix extrusion in numpy: side view is the bar, coils touch at theta_min, windings."""

import numpy as np
import pytest
from shapes import hanging_snapshot, point_line_distance, snapshot3d, swung

from slinky3d.viewer import helix


def test_side_view_is_the_bar(snap):
    sl = snap.slinkies[0]
    pts = helix.centre_line(sl, 33)
    e = sl.ends
    # Ends of every half turn are the bar's end points, in the plane z = 0.
    assert np.allclose(pts[:, 0, :2], e[:-1]) and np.allclose(pts[:, -1, :2], e[1:])
    assert np.allclose(pts[:, [0, -1], 2], 0.0, atol=1e-12)
    # Dropping z lands on the bar, within its length.
    for k in range(sl.N):
        assert np.max(point_line_distance(pts[k, :, :2], e[k], e[k + 1])) < 1e-12
    # Bulges alternate +z / -z with height R.
    mid = pts[:, 16, 2]
    assert np.allclose(mid[0::2], sl.R) and np.allclose(mid[1::2], -sl.R)


def test_mesh_side_view_stays_within_wire_of_bar(snap):
    sl = snap.slinkies[0]
    w = 0.003
    mesh = helix.extrude(sl, w, helix.template(12))
    per = mesh.positions.reshape(sl.N, -1, 3)
    t = helix.wire_thickness(sl)
    for k in range(sl.N):
        d = point_line_distance(per[k, :, :2], sl.ends[k], sl.ends[k + 1])
        # The radial extent only leaves the bar's line where the wire turns (s near 0, pi).
        assert np.max(d) <= 0.5 * t + 0.5 * w + 1e-12


def test_thickness_makes_collapsed_coils_touch():
    snap = hanging_snapshot("steel", stretch=0.0)  # every joint at theta_min
    sl = snap.slinkies[0]
    t = helix.wire_thickness(sl)
    assert t == pytest.approx(sl.pitch * np.cos(sl.theta_min), rel=1e-12)
    pts = helix.centre_line(sl, 17)
    for k in range(0, sl.N - 2, 7):
        d = point_line_distance(pts[k + 2, :, :2], sl.ends[k], sl.ends[k + 1])
        # Parallel at a centre distance of exactly one thickness: faces touch, no gap.
        assert np.allclose(d, t, rtol=1e-9)


def test_same_side_hoops_never_closer_than_thickness(snap):
    sl = snap.slinkies[0]
    t = helix.wire_thickness(sl)
    pts = helix.centre_line(sl, 17)
    gaps = [point_line_distance(pts[k + 2, :, :2], sl.ends[k], sl.ends[k + 1]).min()
            for k in range(sl.N - 2)]
    # Where a stretched joint meets a collapsed one the hoops are not quite parallel: the
    # overlap that leaves is a few nanometres, far below a pixel.
    assert min(gaps) >= t * (1 - 1e-4)
    # ...and the collapsed bottom really touches.
    assert np.allclose(gaps[-sl.N // 5:], t, rtol=1e-9)


def test_triangles_face_outward(snap):
    sl = snap.slinkies[0]
    tpl = helix.template(8)
    assert tpl.triangles == 8 * 8
    mesh = helix.extrude(sl, 0.003, tpl)
    assert len(mesh.indices) == sl.N * tpl.triangles
    p = mesh.positions[mesh.indices]  # (T, 3, 3)
    geo_n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    vert_n = mesh.normals[mesh.indices].sum(axis=1)
    dots = np.einsum("ij,ij->i", geo_n, vert_n)
    assert np.all(dots > 0), "winding must agree with the normals for both bulge signs"


def test_instances_match_frames(snap):
    sl = snap.slinkies[0]
    inst = helix.instances(sl)
    assert inst.shape == (sl.N, 10) and inst.dtype == np.float32
    assert np.allclose(inst[:, :2], 0.5 * (sl.ends[1:] + sl.ends[:-1]), atol=1e-7)
    assert np.all(inst[:, 2] == 0.0)  # planar: midpoints at z = 0
    assert np.allclose(np.linalg.norm(inst[:, 3:6], axis=1), 1.0, atol=1e-6)
    assert list(inst[:4, 8]) == [1, -1, 1, -1]  # bulges +-z
    assert np.all(inst[:, 6:8] == 0.0)
    assert inst[0, 9] == 0 and inst[-1, 9] == 1


def test_bounds_contain_mesh(snap):
    lo, hi = helix.bounds(snap, pad=0.004)
    mesh = helix.extrude(snap.slinkies[0], 0.003, helix.template(8))
    assert np.all(mesh.positions >= lo) and np.all(mesh.positions <= hi)


def test_impact_flash_lights_the_half_hoops_of_a_joint_that_just_hit():
    from dataclasses import replace

    sl = hanging_snapshot("steel").slinkies[0]
    assert not helix.impact_flash(sl).any()  # no impact ages: nothing flashes
    age = np.full(sl.N, np.inf)
    age[10], age[20], age[30] = 0.0, 0.5 * helix.FLASH_S, np.nan
    f = helix.impact_flash(replace(sl, impact_age=age))
    # joint k joins half hoops k - 1 and k
    assert f[9] == f[10] == 1.0 and f[19] == f[20] == pytest.approx(0.5)
    assert np.count_nonzero(f) == 4


# -- a 3D snapshot: each half hoop from its own frame -----------------------------------
def test_a_planar_pose_through_chain3d_is_the_planar_picture(snap):
    """The 3D formula given the planar pose's own 3D frames (chain3d.from_planar) draws
    the planar Slinky: the helices' geometry has one formula, not two."""
    from slinky3d.model import chain3d

    sl = snap.slinkies[0]
    q = np.r_[sl.ends[0], 0.0, sl.theta]
    q[2] = np.arctan2(*(sl.ends[1] - sl.ends[0])[::-1]) - sl.theta[0] - np.pi
    x, frames, _ = chain3d.from_planar(q, sl.R)
    as3d = snapshot3d(sl, x, frames)
    assert np.allclose(as3d.ends[:, :2], sl.ends, atol=1e-9)
    tpl = helix.template(8)
    flat, spatial = helix.extrude(sl, 0.003, tpl), helix.extrude(as3d, 0.003, tpl)
    assert np.allclose(flat.positions, spatial.positions, atol=1e-9)
    assert np.allclose(flat.normals, spatial.normals, atol=1e-9)


def test_a_3d_half_hoop_is_its_arc(snap):
    """Each half hoop of a 3D pose runs from its end point to the next through its apex
    (chain3d.apexes), in its own plane, at radius R from its bar's midpoint; the mesh's
    windings agree with its normals; the bounds hold it."""
    from slinky3d.model import chain3d
    from slinky3d.runtime.snapshot import Snapshot

    sl = snap.slinkies[0]
    x, frames = swung(sl)
    s3 = snapshot3d(sl, x, frames)
    pts = helix.centre_line(s3, 33)
    ends = chain3d.end_points(x, frames, sl.R)
    assert np.allclose(pts[:, 0], ends[:-1]) and np.allclose(pts[:, -1], ends[1:])
    assert np.allclose(pts[:, 16], chain3d.apexes(x, frames, sl.R))
    mid = 0.5 * (ends[1:] + ends[:-1])
    assert np.allclose(np.linalg.norm(pts - mid[:, None], axis=2), sl.R)
    axis = frames[:, :, 2]  # a: the half hoop's plane's normal
    assert np.allclose(np.einsum("kij,kj->ki", pts - mid[:, None], axis), 0.0, atol=1e-12)
    mesh = helix.extrude(s3, 0.003, helix.template(8))
    p = mesh.positions[mesh.indices]
    geo_n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    assert np.all(np.einsum("ij,ij->i", geo_n, mesh.normals[mesh.indices].sum(axis=1)) > 0)
    lo, hi = helix.bounds(Snapshot(t=0.0, slinkies=(s3,)), pad=0.004)
    assert np.all(mesh.positions >= lo) and np.all(mesh.positions <= hi)
    assert hi[2] - lo[2] > 4 * sl.R  # it left the plane


def test_lerp_keeps_3d_bulges_unit(snap):
    from slinky3d.runtime.snapshot import Snapshot, lerp

    sl = snap.slinkies[0]
    a = snapshot3d(sl, *swung(sl))
    x, frames = swung(sl)
    from slinky3d.model import chain3d

    turn = chain3d.turn_about_vertical(0.3)
    b = snapshot3d(sl, turn @ x, turn @ frames)
    mid = lerp(Snapshot(0.0, (a,)), Snapshot(1.0, (b,)), 0.5).slinkies[0]
    assert mid.ends.shape == (sl.N + 1, 3)
    assert np.allclose(np.linalg.norm(mid.bulge, axis=1), 1.0)
