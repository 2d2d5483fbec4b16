"""The hand's props: the spring-damper coupling spans target to point and stretches, the
marker sits on its point and glows, the side view's bars follow the end points."""

import numpy as np
import pytest
from shapes import hanging_snapshot

from slinky3d.viewer import coupling

C = (1.0, 1.0, 1.0, 0.5)


def faces_outward(tri, centre_axis=None):
    p = tri[:, :3].reshape(-1, 3, 3)
    geo = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    big = np.linalg.norm(geo, axis=1) > 1e-14
    return np.all(np.einsum("ij,ij->i", geo[big], tri[::3, 3:6][big]) > 0)


def test_tube_faces_outward_and_has_its_radius():
    pts = np.array([[0, 0, 0], [0.1, 0.05, 0], [0.2, 0.0, 0.02]], float)
    t = coupling.tube(pts, 0.01, C, sides=8)
    assert faces_outward(t)
    assert len(t) == 2 * 8 * 6
    # every vertex is one radius from its segment's axis
    d0 = np.linalg.norm(np.cross(t[:48, :3] - pts[0], pts[1] - pts[0]), axis=1)
    assert np.allclose(d0 / np.linalg.norm(pts[1] - pts[0]), 0.01, atol=1e-6)


@pytest.mark.parametrize("length", [0.05, 0.3])
def test_spring_damper_spans_target_to_point_and_stretches(length):
    a, R = np.array([0.1, -0.2]), 0.03
    b = a + length * np.array([0.6, -0.8])
    m = coupling.spring_damper(a, b, R, C, (0.2, 0.2, 0.2, 0.5))
    assert faces_outward(m) and np.all(np.isfinite(m))
    d = (b - a) / length
    along = (m[:, :2] - a) @ d
    assert -0.2 * R < along.min() < 0  # the cube on the target
    assert along.max() == pytest.approx(length, abs=0.03 * R)  # the coil ends on the point
    across = np.abs((m[:, :2] - a) @ [-d[1], d[0]])
    assert across.max() < 0.2 * R  # slim: no wider than the damper's cylinder


def test_coupling_of_zero_length_is_the_target_cube():
    m = coupling.spring_damper([0.0, 0.0], [0.0, 0.0], 0.03, C, C)
    assert len(m) == 36 and np.all(np.isfinite(m))


def test_marker_glows_on_its_point():
    m = coupling.marker([0.2, -0.3], 0.01, C)
    assert faces_outward(m)
    assert np.allclose(m[:, :3].mean(axis=0), [0.2, -0.3, 0.0])
    assert np.all(m[:, 9] > 1.0)  # alpha above 1: mesh.glsl draws it unlit and bright


def test_bars_follow_the_end_points():
    sl = hanging_snapshot("steel").slinkies[0]
    b = coupling.bars(sl, 1e-3, C)
    assert np.abs(b[:, 2]).max() <= 1e-3 + 1e-9  # flat in the plane z = 0
    lo, hi = sl.ends.min(axis=0), sl.ends.max(axis=0)
    assert np.all(b[:, :2] >= lo - 1.1e-3) and np.all(b[:, :2] <= hi + 1.1e-3)
