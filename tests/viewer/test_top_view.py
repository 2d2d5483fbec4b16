"""The view from above: drawn only in its corner, up in it is away from the viewer, and
the picture there is the Slinky where its camera puts it."""

import numpy as np
import pytest
from shapes import hanging_snapshot, snapshot3d

from slinky3d.model import chain3d
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import Look
from slinky3d.viewer.gl import top_view
from slinky3d.viewer.stage import stage_for

SIZE = (480, 320)
BACK = (0.1, 0.6, 0.2)  # the window's colour before the view is drawn


@pytest.fixture(scope="module")
def ctx():
    from slinky3d.viewer.gl.context import headless_context

    c = headless_context()
    yield c
    c.release()


def tilted(angle: float) -> Snapshot:
    """The hanging plastic Slinky turned about x through its top: angle > 0 swings its
    bottom away from a viewer on +z (the main camera's side at yaw 0)."""
    snap = hanging_snapshot("plastic", stretch=0.3)
    sl = snap.slinkies[0]
    q = np.r_[sl.ends[0], np.arctan2(*(sl.ends[1] - sl.ends[0])[::-1]) - sl.theta[0] - np.pi,
              sl.theta]
    x, frames, _ = chain3d.from_planar(q, sl.R)
    turn = chain3d.exp_map(np.array([angle, 0.0, 0.0]))
    return Snapshot(t=0.0, slinkies=(snapshot3d(sl, turn @ x, turn @ frames),))


def corner(ctx, view, snap, heading=0.0):
    screen = ctx.simple_framebuffer(SIZE)
    screen.use()
    screen.clear(*BACK, 1.0)
    look = Look()
    framed = view.draw(snap, look, stage_for(look, snap), heading, screen, SIZE)
    img = np.frombuffer(screen.read(components=3), np.uint8).reshape(SIZE[1], SIZE[0], 3)
    return img, framed, screen


def test_drawn_only_in_its_corner_with_up_away_from_the_viewer(ctx):
    view = top_view.TopView(ctx, "software")
    for angle in (0.5, -0.5):
        snap = tilted(angle)
        img, (x, y, w, h), _ = corner(ctx, view, snap)
        inside = np.zeros(img.shape[:2], bool)
        inside[y:y + h, x:x + w] = True  # rows from the bottom, as GL reads them
        back = np.all(np.abs(img.astype(int) - np.round(255 * np.array(BACK))) <= 1, axis=-1)
        assert back[~inside].all() and not back[inside].any()
        # The corner's camera: the bottom end above the top end in the corner when it
        # swings away (rows top-first), below when it swings towards the viewer.
        ends = snap.slinkies[0].ends
        (_, r_top), (_, r_bottom) = view.camera.project(ends[[0, -1]], w - 4, h - 4)
        assert (r_bottom < r_top - 20) if angle > 0 else (r_bottom > r_top + 20)


def test_the_corner_shows_the_slinky_where_its_camera_puts_it(ctx):
    view = top_view.TopView(ctx, "software")
    snap = tilted(0.5)
    img, (x, y, w, h), screen = corner(ctx, view, snap)
    f = top_view.FRAME_PX
    with_slinky = img[y + f:y + h - f, x + f:x + w - f].astype(int)
    # The same camera, the Slinky moved far out of its sight: what is left is the floor.
    far = Snapshot(t=0.0, slinkies=(snapshot3d(snap.slinkies[0], np.array([50.0, 0, 0]),
                                               np.broadcast_to(np.eye(3), (snap.slinkies[0].N,
                                                                           3, 3)).copy()),))
    r = view.renderer
    r.render(far, Look(), view.camera, stage_for(Look(), snap))
    r.lay_into(screen, (x + f, y + f))
    img2 = np.frombuffer(screen.read(components=3), np.uint8).reshape(SIZE[1], SIZE[0], 3)
    without = img2[y + f:y + h - f, x + f:x + w - f].astype(int)
    mask = np.abs(with_slinky - without).sum(axis=-1) > 30
    assert 0.02 < mask.mean() < 0.6
    # Every end point's pixel (rows top-first in project, bottom-first here) is near a
    # pixel of the Slinky.
    cw, ch = w - 2 * f, h - 2 * f
    px = view.camera.project(snap.slinkies[0].ends, cw, ch)
    rows, cols = np.nonzero(mask)
    for u, v in px[::8]:
        d = np.min(np.hypot(cols - u, rows - (ch - 1 - v)))
        assert d < 4.0


def test_between_fresh_pictures_the_last_one_is_laid_again(ctx):
    """The app draws the view afresh every top_view.EVERY frames: in between the corner
    shows the last picture, not the new snapshot, and drawing nothing new."""
    view = top_view.TopView(ctx, "software")
    img0, framed, screen = corner(ctx, view, tilted(0.5))
    r = view.renderer
    drawn = r.helices.upload
    calls = []
    r.helices.upload = lambda *a, **k: calls.append(a) or drawn(*a, **k)  # type: ignore
    screen.clear(*BACK, 1.0)
    look = Look()
    moved = tilted(-0.5)
    view.draw(moved, look, stage_for(look, moved), 0.0, screen, SIZE, fresh=False)
    again = np.frombuffer(screen.read(components=3), np.uint8).reshape(SIZE[1], SIZE[0], 3)
    assert not calls and np.array_equal(again, img0)
    view.draw(moved, look, stage_for(look, moved), 0.0, screen, SIZE, fresh=True)
    new = np.frombuffer(screen.read(components=3), np.uint8).reshape(SIZE[1], SIZE[0], 3)
    assert calls and not np.array_equal(new, img0)
    # A new size has no last picture: it is drawn whatever `fresh` says.
    calls.clear()
    bigger = ctx.simple_framebuffer((SIZE[0] * 2, SIZE[1] * 2))
    view.draw(moved, look, stage_for(look, moved), 0.0, bigger, (SIZE[0] * 2, SIZE[1] * 2),
              fresh=False)
    assert calls
