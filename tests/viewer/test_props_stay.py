"""Props that stay: a holder that lets go of an end stays where it let go, drawn open;
what holds a Slinky is drawn whenever it exists."""

import numpy as np
import pytest

from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load
from slinky3d.viewer import props


def test_the_snapshot_keeps_where_each_holder_let_go():
    # drop-plastic: the top is held, and let go at 0.2 s by the scene's schedule
    sim = Simulation(load("drop-plastic"))
    sim.advance_to(0.1)
    held = sim.snapshot().slinkies[0]
    assert held.anchor_held and held.left == ()
    sim.advance_to(0.4)
    sl = sim.snapshot().slinkies[0]
    assert not sl.anchor_held and len(sl.left) == 1
    (left,) = sl.left
    assert left.t == pytest.approx(0.2)
    # where the top was held (it stood still until the release), not where it fell to
    assert np.allclose(left.points, held.ends[:3], atol=1e-12)
    assert sl.ends[0, 1] < left.points[0, 1] - 0.05
    # the app's hand: L lets go now, and taking hold again leaves no holder open
    sim.reset()
    assert sim.snapshot().slinkies[0].left == ()
    sim.advance_to(0.05)
    assert sim.let_go(0) == ""
    assert len(sim.snapshot().slinkies[0].left) == 1
    sim.advance_to(0.1)
    assert sim.take_hold(0, 0) == ""
    assert sim.snapshot().slinkies[0].left == ()


def test_a_far_end_let_go_at_the_start_keeps_its_holder():
    """1Pa: the far end is held until t = 0; its holder stays there, opening."""
    sim = Simulation(load("1Pa"))
    first = sim.snapshot().slinkies[0]
    assert not first.far_held and len(first.left) == 1
    assert np.allclose(first.left[0].points[0], first.ends[-1])
    sim.advance_to(0.2)
    sl = sim.snapshot().slinkies[0]
    assert np.allclose(sl.left[0].points, first.left[0].points)
    assert props.opening(first, 0.0) == [0.0] and props.opening(sl, 0.2) == [1.0]


@pytest.mark.gl
@pytest.mark.parametrize("name", ["drop-plastic", "levitation"])  # a post, a hand
def test_the_stand_is_in_the_picture_after_the_release(name):
    """Rendered frames before and after the release: the holder's pixels (the frame less
    the same frame drawn without holders) are there after it, at the same place."""
    from dataclasses import replace

    from slinky3d.viewer.film.filming import Camera, Shot
    from slinky3d.viewer.gl.context import headless_context
    from slinky3d.viewer.gl.renderer import Renderer

    sc = load(name)
    release = sc.slinkies[0].anchor.release_time
    sim = Simulation(sc)
    # the fixed camera: the holder's pixels compared in place
    shot = Shot(size=(240, 180), fps=30, hint=replace(sc.camera, mode="fixed"))
    camera = Camera(sc, sim.snapshot(), sc.look, shot)
    still = camera.at(0, sim.snapshot())
    ctx = headless_context()
    try:
        r = Renderer(ctx, shot.size, quality="software")

        def holder_pixels(t: float) -> np.ndarray:
            sim.advance_to(t)
            snap = sim.snapshot()
            r.render(snap, sc.look, still, camera.stage, helices=False)
            with_holder = r.read().astype(int)
            r.render(snap, replace(sc.look, anchor="none"), still, camera.stage,
                     helices=False)
            return np.abs(with_holder - r.read()).max(axis=2) > 20

        before = holder_pixels(release - 0.05)
        after = holder_pixels(release + 0.2)  # open, the Slinky fallen well away
    finally:
        ctx.release()
    assert before.sum() > 30
    assert after.sum() > 0.5 * before.sum()
    overlap = (before & after).sum() / before.sum()
    assert overlap > 0.5, f"the holder moved: {overlap:.0%} of its pixels still covered"
