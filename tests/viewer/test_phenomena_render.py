"""The phenomena overlays drawn headless (EGL): the centre-of-mass marker where the
centre of mass is, the parabola where free fall goes, the front's ring at the front,
the coils in their stretch colours."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from shapes import hanging_snapshot

from slinky3d.runtime.history import History
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import CameraHint, Look
from slinky3d.viewer import helix
from slinky3d.viewer.app.impact_sound import ImpactSound
from slinky3d.viewer.app.phenomena import Phenomena
from slinky3d.viewer.marks import collapse_front, meshes, stretch
from slinky3d.viewer.marks.free_fall import centre_of_mass
from slinky3d.viewer.stage import Stage

pytestmark = pytest.mark.gl
SIZE = (400, 400)
FLAT = (0.2, 0.3, 0.4)
BARE = Look(floor=False, anchor="none", background_top=FLAT, background_bottom=FLAT,
            material="steel")
SIDE = CameraHint(yaw_deg=0.0, pitch_deg=0.0)


class Scene:
    def __init__(self, snap: Snapshot):
        from slinky3d.model.params import preset

        self.slinkies = [SimpleNamespace(params=preset(sl.preset)) for sl in snap.slinkies]


class App(Phenomena):
    """The window's part, without a window."""

    def __init__(self, snap: Snapshot, floor_y: float = -5.0):
        self.scene, self.stage = Scene(snap), Stage(floor_y, 0.0, 10.0)
        self.said: list[str] = []
        super().__init__(SimpleNamespace(history=History()), lambda: self.scene,
                         lambda: self.stage, self.said.append, ImpactSound())


@pytest.fixture(scope="module")
def renderer():
    from slinky3d.viewer.gl.context import headless_context
    from slinky3d.viewer.gl.renderer import Renderer

    ctx = headless_context()
    r = Renderer(ctx, SIZE, quality="software")
    yield r
    assert ctx.error == "GL_NO_ERROR"
    ctx.release()


def draw(r, snap, marks=None, tints=None, cam=None, look=BARE):
    from slinky3d.viewer.camera import frame_snapshot

    cam = cam or frame_snapshot(snap, r.size, SIDE)
    r.render(snap, look, cam, Stage(-1.2, 0.0, 3.0), marks=marks, tints=tints)
    return r.read().astype(int), cam


def changed(a, b):
    return np.abs(a - b).max(axis=2) > 30


def pixel(cam, xy):
    return cam.project(np.r_[xy, 0.0][None], *SIZE)[0]


def test_the_centre_of_mass_marker_is_drawn_where_the_centre_of_mass_is(renderer):
    snap = hanging_snapshot("steel", stretch=0.25)
    app = App(snap)
    app.set("com", True)
    app.observe(snap, 0.0)
    assert len(app.props(snap)) == 1  # held: the marker, no parabola
    plain, cam = draw(renderer, snap)
    marked, _ = draw(renderer, snap, marks=app.marks(snap), cam=cam)
    diff = changed(plain, marked)
    assert diff.sum() > 20  # it shows through the coils
    ys, xs = np.nonzero(diff)
    com = pixel(cam, centre_of_mass(snap.slinkies[0]))
    assert np.hypot(xs.mean() - com[0], ys.mean() - com[1]) < 1.5
    # the marker's glow colour (magenta) where it shows
    mean = marked[diff].mean(axis=0)
    assert mean[0] > mean[1] + 60 and mean[2] > mean[1] + 60


def test_the_parabola_is_drawn_along_free_fall(renderer):
    held = hanging_snapshot("plastic", stretch=0.25)
    app = App(held, floor_y=-1.2)
    app.set("com", True)
    g = app.scene.slinkies[0].params.g
    v = np.array([0.8, 1.0])  # thrown up and to the right

    def at(t):
        shift = v * t - [0.0, 0.5 * g * t * t]
        sl = held.slinkies[0]
        return Snapshot(t=t, slinkies=(replace(sl, anchor_held=False, ends=sl.ends + shift),))

    for k in range(5):
        app.observe(at(0.01 * k), 0.0)
    par = app.free_falls()[0].parabola
    assert par is not None and np.allclose(par.v0, v, atol=1e-9)
    snap = at(0.05)
    box = Snapshot(t=0.0, slinkies=(replace(snap.slinkies[0], ends=np.r_[
        snap.slinkies[0].ends, [par.at(par.until(-1.2, 9.0))], [par.at(0.1 + 1 / 9.81)]]),))
    from slinky3d.viewer.camera import frame_snapshot

    cam = frame_snapshot(box, SIZE, SIDE)  # the Slinky and the whole arc in view
    # on the floor, with shadows: the marks cast none and leave the rest alone
    look = replace(BARE, floor=True)
    plain, _ = draw(renderer, snap, cam=cam, look=look)
    marked, _ = draw(renderer, snap, marks=app.marks(snap), cam=cam, look=look)
    diff = np.any(plain != marked, axis=2)
    # every point of the arc after the Slinky's own box, down to the floor, is drawn
    lo, hi = helix.bounds(snap)
    ts = np.linspace(par.t0, par.until(-1.2, 9.0), 80)
    pts = [p for p in par.at(ts) if not (lo[0] - 0.01 < p[0] < hi[0] + 0.01
                                         and lo[1] - 0.01 < p[1] < hi[1] + 0.01)]
    assert len(pts) > 40
    px = np.round(cam.project(np.c_[pts, np.zeros(len(pts))], *SIZE)).astype(int)
    hit = [diff[max(y - 1, 0):y + 2, max(x - 1, 0):x + 2].any() for x, y in px
           if 0 <= x < SIZE[0] and 0 <= y < SIZE[1]]
    assert len(hit) > 30 and np.mean(hit) > 0.95
    # and nothing far from it (the arc, the marker and the Slinky's box)
    ys, xs = np.nonzero(diff)
    arc = cam.project(np.c_[par.at(np.linspace(par.t0, 9.0, 4000)), np.zeros(4000)], *SIZE)
    far = np.min(np.hypot(xs[:, None] - arc[None, :, 0], ys[:, None] - arc[None, :, 1]),
                 axis=1)
    com = pixel(cam, centre_of_mass(snap.slinkies[0]))
    near_com = np.hypot(xs - com[0], ys - com[1]) < 12
    assert np.all((far < 4) | near_com)


def test_the_front_ring_is_drawn_at_the_front(renderer):
    snap = hanging_snapshot("steel", stretch=0.25)
    sl = snap.slinkies[0]
    contact = np.zeros(sl.N, bool)
    contact[1:40] = True
    sl = replace(sl, contact=contact, theta=np.where(contact, sl.theta_min, sl.theta))
    from slinky3d.model import chain

    q = np.r_[0.0, 0.0, -0.5 * sl.theta[0], sl.theta]
    snap = Snapshot(t=0.0, slinkies=(replace(sl, ends=chain.end_points(q, sl.R)),))
    sl = snap.slinkies[0]
    assert collapse_front.front(sl) == 40
    app = App(snap)
    assert app.marks(snap) is None  # off
    app.set("front", True)
    plain, cam = draw(renderer, snap)
    marked, _ = draw(renderer, snap, marks=app.marks(snap), cam=cam)
    ys, xs = np.nonzero(changed(plain, marked))
    assert len(ys) > 20
    # a ring around half hoop 40, a little wider than the coil (coils hide some of it)
    centre = pixel(cam, 0.5 * (sl.ends[40] + sl.ends[41]))
    radius = abs(pixel(cam, sl.ends[40] + [sl.R, 0.0])[0] - pixel(cam, sl.ends[40])[0])
    assert np.hypot(ys.mean() - centre[1], xs.mean() - centre[0]) < 0.2 * radius
    assert xs.max() - xs.min() == pytest.approx(2 * meshes.FRONT_RING * radius, rel=0.2)


def test_coils_coloured_by_stretch(renderer):
    snap = hanging_snapshot("steel", stretch=0.4)
    sl = snap.slinkies[0]
    app = App(snap)
    assert app.tints(snap) is None  # off: the material's colours
    app.set("stretch", True)
    tints = app.tints(snap)
    p = app.scene.slinkies[0].params
    hang = stretch.hanging_angle(p.m, p.g, p.R, p.N, p.k_coil)
    assert tints is not None and np.allclose(tints[0], stretch.tints(sl, hang))
    img, cam = draw(renderer, snap, tints=tints)
    grey, _ = draw(renderer, snap, cam=cam)
    h = stretch.hoop_stretch(sl, hang)
    lines = helix.centre_line(sl, 33)
    for k in (0, 5, sl.N - 30, sl.N - 1):
        px = np.round(cam.project(lines[k], *SIZE)).astype(int)
        got = np.array([img[y, x] for x, y in px]).mean(axis=0)
        base = np.array([grey[y, x] for x, y in px]).mean(axis=0)
        want = stretch.colour(h[k])
        assert np.abs(base[0] - base[2]) < 40  # steel's own: grey
        # the hue of the stretch colour: its strongest channel, and red against blue
        assert np.argmax(got) == np.argmax(want), (k, got, want)
        assert np.sign(got[0] - got[2]) == np.sign(want[0] - want[2]), (k, got, want)
    assert h[0] > 0.7 and h[-1] == 0.0  # the top stretched, the bottom closed
