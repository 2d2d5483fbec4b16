"""The 3D marks and the coupling take a 3D snapshot's points: the collapse front's ring
lies in its half hoop's own plane, the hover marker and the coupling sit at 3D points."""

import numpy as np
from shapes import hanging_snapshot, snapshot3d, swung

from slinky3d.viewer import coupling
from slinky3d.viewer.marks.free_fall import Parabola
from slinky3d.viewer.marks.meshes import FRONT_RING, front_ring


def test_the_front_ring_lies_in_its_half_hoops_plane():
    sl = hanging_snapshot("steel", stretch=0.3).slinkies[0]
    s3 = snapshot3d(sl, *swung(sl))
    k = 40
    ring = front_ring(s3.ends, k, s3.R, s3.bulge)[:, :3].astype(float)
    c = 0.5 * (s3.ends[k] + s3.ends[k + 1])
    u = (s3.ends[k + 1] - s3.ends[k]) / np.linalg.norm(s3.ends[k + 1] - s3.ends[k])
    n = np.cross(s3.bulge[k], u)  # the half hoop's plane's normal
    r = ring - c
    assert np.allclose(np.linalg.norm(r - np.outer(r @ n, n), axis=1).mean(),
                       FRONT_RING * s3.R, rtol=0.1)  # about the coil, at its radius
    assert np.abs(r @ n).max() < 0.5 * FRONT_RING * s3.R  # a flat ring in that plane
    # a planar snapshot's ring is the same drawn with its bulge +-z
    flat = front_ring(sl.ends, k, sl.R)
    assert np.allclose(flat[:, 2].astype(float).mean(), 0.0, atol=1e-6)


def test_marker_coupling_and_parabola_at_3d_points():
    p = np.array([0.1, -0.2, 0.3])
    m = coupling.marker(p, 0.01, (1, 1, 1, 1))
    assert np.allclose(m[:, :3].astype(float).mean(axis=0), p, atol=1e-6)
    sd = coupling.spring_damper(p + [0.0, 0.0, 0.2], p, 0.03, (1, 1, 1, 1), (1, 1, 1, 1))
    z = sd[:, 2].astype(float)
    assert z.min() >= 0.3 - 0.03 and z.max() <= 0.5 + 0.03  # along z, from p to the target
    arc = Parabola(0.0, p, np.array([1.0, 2.0, -1.0]), 9.81).at([0.0, 0.5])
    assert np.allclose(arc[0], p) and np.allclose(arc[1], p + [0.5, 1.0 - 0.5 * 9.81 / 4,
                                                              -0.5])
