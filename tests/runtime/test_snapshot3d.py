"""Snapshots of the 3D solver: its pose and energy as the renderer gets them, and a
picture of a Slinky swinging in 3D."""

import numpy as np
import pytest

from slinky3d.dynamics.solver3d import Solver3D
from slinky3d.model import chain3d
from slinky3d.runtime.snapshot import lerp
from slinky3d.runtime.snapshot3d import snapshot
from slinky3d.scene import loader


@pytest.fixture(scope="module")
def swing():
    """The plastic Slinky hanging from a pivot, tilted towards the viewer and spun about
    the vertical, its collapsed coils in contact: 0.1 s of swing."""
    spec = loader.load("hanging-plastic").slinkies[0]
    p = spec.params
    x, frames, holder = chain3d.from_planar(np.asarray(spec.q0), p.R)
    frames = chain3d.exp_map(np.array([0.4, 0.0, 0.0])) @ frames
    s = Solver3D(p, x, frames, None, np.tile([0.0, 3.0, 0.0], (p.N, 1)), "pivot", holder,
                 contact=True)
    first = snapshot(s)
    s.advance(round(0.1 / s.h))
    return s, first, snapshot(s)


def test_the_snapshot_is_the_solvers_pose_and_energy(swing):
    s, _, snap = swing
    sl = snap.slinkies[0]
    assert snap.t == s.t and sl.N == s.p.N
    assert np.allclose(sl.ends, s.end_points(), atol=0.0)
    x, frames, _, _ = s.pose()
    assert np.allclose(sl.bulge, frames[:, :, 1], atol=0.0)
    assert np.allclose(np.linalg.norm(sl.bulge, axis=1), 1.0)
    e = sl.energy
    assert e.kinetic + e.gravity + e.spring == pytest.approx(s.energy(), rel=1e-12)
    assert e.impacts == pytest.approx(float(s.impact_loss[0]), abs=0.0)
    assert np.array_equal(sl.contact, s.locked) and sl.contact.any()
    assert np.ptp(sl.ends[:, 2]) > 2 * sl.R  # it swings out of the plane


def test_frames_between_two_3d_snapshots(swing):
    _, a, b = swing
    mid = lerp(a, b, 0.5 * (a.t + b.t)).slinkies[0]
    assert np.allclose(mid.ends, 0.5 * (a.slinkies[0].ends + b.slinkies[0].ends))
    assert np.allclose(np.linalg.norm(mid.bulge, axis=1), 1.0)


@pytest.mark.gl
def test_a_3d_swing_is_drawn_in_frame(swing, tmp_path):
    """The follow camera frames the swinging Slinky and its coils are in the picture,
    away from the edges, where the camera projects its end points."""
    from PIL import Image

    from slinky3d.scene.look import Look
    from slinky3d.viewer.camera import frame_snapshot
    from slinky3d.viewer.director import FOLLOW, Director
    from slinky3d.viewer.gl.context import headless_context
    from slinky3d.viewer.gl.renderer import Renderer
    from slinky3d.viewer.stage import stage_for

    _, _, snap = swing
    size = (320, 240)
    look = Look()
    stage = stage_for(look, snap)
    cam = Director(FOLLOW, frame_snapshot(snap, size, stage=stage), size).start(snap)
    ctx = headless_context()
    try:
        r = Renderer(ctx, size)
        r.render(snap, look, cam, stage)
        img = r.read()
    finally:
        ctx.release()  # not left current for the tests after (a window's detect)
    Image.fromarray(img).save(tmp_path / "swing3d.png")
    red = (img[..., 0] > 120) & (img[..., 1] < 90) & (img[..., 2] < 90)  # the plastic
    assert red.sum() > 500
    ys, xs = np.nonzero(red)
    assert xs.min() > 2 and xs.max() < size[0] - 3 and ys.min() > 2 and ys.max() < size[1] - 3
    px = cam.project(snap.slinkies[0].ends, *size)
    near = [red[max(0, int(y) - 3):int(y) + 4, max(0, int(x) - 3):int(x) + 4].any()
            for x, y in px[::8]]  # (project's rows run down, as the image's)
    assert np.mean(near) > 0.9
