"""The phenomena overlays' numbers (no GL): the centre of mass follows the free-fall
parabola the overlay draws, the collapse front runs down a dropped Slinky, the contact
timeline holds the closed joints of the snapshots it got, the stretch colours map as
defined, and the click is off by default and quiet without an audio device."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from shapes import hanging_snapshot

from slinky3d.model import chain, static_shape
from slinky3d.model.params import preset
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer.app import impact_sound
from slinky3d.viewer.app.phenomena import Phenomena
from slinky3d.viewer.marks import collapse_front, stretch
from slinky3d.viewer.marks.free_fall import STRAY_RADII, FreeFall, Parabola, centre_of_mass
from slinky3d.viewer.overlay import timeline


@pytest.fixture(scope="module")
def steel_drop():
    """The steel Slinky hanging, let go: (snapshots at 60 Hz from the release for
    0.45 s, the exact centre-of-mass velocity at the release, gravity)."""
    from slinky3d.runtime.simulation import Simulation
    from slinky3d.scene.loader import load

    sc = load("hanging-steel", ["world.floor=-100"])  # a free fall, far from the floor
    sim = Simulation(sc)
    sim.advance_to(0.05)
    assert sim.let_go(0) == ""
    s = sim.slinkies[0]
    v0 = chain.centre_velocities(s.q, s.qd, s.p.R).mean(axis=0)
    t0, snaps = sim.t, [sim.snapshot()]
    for k in range(1, 28):
        sim.advance_to(t0 + k / 60)
        snaps.append(sim.snapshot())
    return snaps, v0, s.p.g


# -- centre of mass and free fall ------------------------------------------------------
def test_centre_of_mass_is_the_mean_of_the_bar_centres():
    sl = hanging_snapshot("plastic", stretch=0.3).slinkies[0]
    p = preset("plastic")
    q = np.r_[sl.ends[0], -0.5 * sl.theta[0], sl.theta]  # as shapes.hanging_snapshot
    got = centre_of_mass(sl)
    assert np.allclose(got, chain.centres(q, p.R).mean(axis=0), atol=1e-12)


def test_the_centre_of_mass_follows_the_parabola_drawn(steel_drop):
    snaps, v0, g = steel_drop
    fall = FreeFall(g)
    for s in snaps[:5]:  # past FIT_SECONDS
        fall.observe(s.t, s.slinkies[0])
    par = fall.parabola
    assert par is not None and par.g == g and par.t0 == snaps[0].t
    # the release state: where the centre of mass was and how fast it moved
    assert np.allclose(par.at(snaps[0].t), centre_of_mass(snaps[0].slinkies[0]), atol=1e-6)
    # (the solver's centre of mass picks up ~1 mm/s in the first steps after the
    # release, and the steel collapse's impacts push it sideways: docs/rendering.md)
    assert np.allclose(par.v0, v0, atol=2e-3)
    # gravity is the only outside force: the coils collapse, the centre of mass falls
    # as a stone would, 0.45 s and 1 m down: within half a millimetre of the parabola
    # vertically, 5 mm sideways
    for s in snaps:
        if s.t > snaps[4].t:
            fall.observe(s.t, s.slinkies[0])
        dx, dy = np.abs(par.at(s.t) - centre_of_mass(s.slinkies[0]))
        assert dy < 5e-4 and dx < 5e-3
    assert fall.parabola is par  # held, not refitted after the first FIT_SECONDS
    s = snaps[-1].t - snaps[0].t
    drop = centre_of_mass(snaps[-1].slinkies[0]) - centre_of_mass(snaps[0].slinkies[0])
    assert drop[1] == pytest.approx(v0[1] * s - 0.5 * g * s * s, abs=1e-3)
    assert drop[1] < -0.9


def test_parabola_reaches_the_floor_when_a_stone_would():
    par = Parabola(t0=1.0, p0=np.array([0.3, 2.0]), v0=np.array([1.0, 3.0]), g=9.81)
    t = par.until(-1.0, 10.0)
    assert par.at(t)[1] == pytest.approx(-1.0, abs=1e-9) and t > 1.0 + 2 * 3.0 / 9.81
    assert par.until(-1.0, 1.2) == 1.2  # capped
    assert par.until(5.0, 10.0) == 1.0  # starts below it
    assert np.allclose(par.at([1.0, 2.0])[:, 0], [0.3, 1.3])


def test_held_grabbed_reset_or_strayed_means_no_parabola():
    snap = hanging_snapshot("plastic")
    held = snap.slinkies[0]
    free = replace(held, anchor_held=False)
    fall = FreeFall(9.81)
    fall.observe(0.0, held)
    fall.observe(0.01, held)
    assert fall.parabola is None  # held: no free fall
    fall.observe(0.02, free)
    fall.observe(0.03, free)
    assert fall.parabola is not None
    fall.observe(0.04, replace(free, grab=np.zeros(2), grab_point=np.zeros(2)))
    assert fall.parabola is None  # a grab holds it
    fall.observe(0.05, free)
    fall.observe(0.06, free)
    assert fall.parabola is not None
    fall.observe(0.01, free)
    assert fall.parabola is None  # time went back: a reset, a replay
    # a Slinky that stops falling (a floor): the parabola goes and stays gone
    fall = FreeFall(9.81)
    for k in range(6):
        fall.observe(0.01 * k, free)  # still, while "free": on something, not falling
    assert fall.parabola is not None  # it cannot know yet
    for k in range(6, 40):
        fall.observe(0.01 * k, free)
        par = fall.parabola
        if par is not None:  # shown only while the centre of mass is near it
            assert np.linalg.norm(par.at(0.01 * k) - centre_of_mass(free)) <= (
                STRAY_RADII * free.R)
    assert fall.parabola is None


# -- the collapse front -------------------------------------------------------------
def test_front_definition():
    f = collapse_front.front_index
    assert f(np.array([0, 0, 0, 1, 1], bool)) is None  # hanging: the top is open
    assert f(np.array([0, 1, 1, 0, 1], bool)) == 3  # joint 0 does not count
    assert f(np.array([1, 1, 0, 0, 0], bool)) == 2
    assert f(np.array([0, 1, 1, 1, 1], bool)) == 5  # all closed: the far end, N
    assert f(np.array([1], bool)) is None


@given(st.lists(st.lists(st.booleans(), min_size=6, max_size=6), min_size=1, max_size=20))
def test_fronts_of_rows_are_the_front_of_each_row(rows):
    c = np.array(rows, bool)
    got = collapse_front.fronts(c)
    want = [collapse_front.front_index(r) for r in c]
    assert [None if np.isnan(x) else int(x) for x in got] == want


def test_the_front_runs_down_a_dropped_slinky(steel_drop):
    snaps, _, _ = steel_drop
    fronts = [collapse_front.front(s.slinkies[0]) for s in snaps]
    seen = [f for f in fronts if f is not None]
    assert fronts[0] is None  # the top still open at the release
    assert seen == sorted(seen) and len(set(seen)) > 5  # down, never up
    assert seen[-1] == snaps[0].slinkies[0].N  # all the way to the bottom
    # above the front every joint is closed (except joint 0), at the front it is open
    for s, f in zip(snaps, fronts, strict=True):
        if f is not None and f < s.slinkies[0].N:
            c = s.slinkies[0].contact
            assert c[1:f].all() and not c[f]


# -- the contact timeline ------------------------------------------------------------
def _snaps(contacts, dt=0.01, t0=0.0):
    base = hanging_snapshot("plastic").slinkies[0]
    n = base.N
    return [Snapshot(t=t0 + k * dt, slinkies=(replace(base, contact=np.resize(c, n)),))
            for k, c in enumerate(contacts)]


def test_timeline_holds_the_closed_joints_of_its_snapshots():
    rng = np.random.default_rng(1)
    n = hanging_snapshot("plastic").slinkies[0].N
    contacts = rng.random((40, n)) < 0.3
    snaps = _snaps(contacts)
    tl = timeline.build(snaps, 0, t_end=snaps[-1].t, seconds=1.0)
    assert tl is not None
    assert np.array_equal(tl.closed, contacts)  # one column each: exactly their joints
    assert np.allclose(tl.starts, [s.t for s in snaps])
    assert np.allclose(tl.stops[:-1], tl.starts[1:]) and tl.stops[-1] == snaps[-1].t
    assert np.array_equal(np.isnan(tl.front), np.isnan(collapse_front.fronts(contacts)))
    # every run of closed joints is one rectangle, and the runs cover exactly them
    cover = np.zeros_like(contacts)
    for col, a, b in zip(*tl.runs(), strict=True):
        assert not cover[col, a:b].any() and contacts[col, a:b].all()
        cover[col, a:b] = True
    assert np.array_equal(cover, contacts)


def test_timeline_window_and_merged_columns_keep_every_contact():
    n = hanging_snapshot("plastic").slinkies[0].N
    contacts = np.zeros((300, n), bool)
    contacts[137, 5] = True  # one brief impact among 300 snapshots
    snaps = _snaps(contacts, dt=0.001)
    tl = timeline.build(snaps, 0, t_end=0.299, seconds=0.2, columns=20)
    assert tl is not None and len(tl.starts) == 20
    assert tl.starts[0] >= 0.299 - 0.2 - 1e-12  # only the window's snapshots
    assert tl.closed.sum() == 1 and tl.closed[:, 5].any()  # merged, not lost
    assert timeline.build(snaps, 0, t_end=5.0, seconds=1.0) is None  # none in the window
    assert timeline.build(snaps, 1, t_end=0.299) is None  # no such Slinky
    many = timeline.coarsen(replace(tl, closed=np.tile([True, False], (20, n // 2 + 1))[:, :n]),
                            max_rects=100)
    assert len(many.runs()[0]) <= 100 and many.stops[-1] == tl.stops[-1]


# -- the colour by stretch ----------------------------------------------------------
def test_stretch_maps_closed_to_0_and_the_hanging_top_to_1():
    tmin, thang = 0.03, 0.5
    s = stretch.joint_stretch(np.array([0.0, tmin, 0.5 * (tmin + thang), thang, 2.0]), tmin,
                              thang)
    assert np.allclose(s, [0.0, 0.0, 0.5, 1.0, 1.0])
    assert np.allclose(stretch.colour(np.array([0.0, 1.0])), stretch.COLOURS[[0, -1]])
    assert np.allclose(stretch.colour(stretch.STOPS), stretch.COLOURS)
    # the hue runs blue (closed) to red (as at the top of a hanging Slinky)
    c = stretch.colour(np.linspace(0.0, 1.0, 11))
    assert c[0, 2] > c[0, 0] and c[-1, 0] > c[-1, 2]
    assert np.all(np.diff(c[:, 0] - c[:, 2]) >= -1e-12)


@pytest.mark.parametrize("name", ["plastic", "steel"])
def test_hanging_angle_is_the_hanging_slinkys_largest(name):
    p = preset(name)
    q = static_shape.hanging(p)
    est = stretch.hanging_angle(p.m, p.g, p.R, p.N, p.k_coil)
    assert est == pytest.approx(q[chain.BASE:].max(), rel=0.08)
    assert stretch.hanging_angle(p.m, 0.0, p.R, p.N, p.k_coil) == pytest.approx(
        stretch.hanging_angle(p.m, stretch.EARTH_G, p.R, p.N, p.k_coil))


def test_hoop_stretch_averages_its_spring_joints():
    sl = hanging_snapshot("plastic", stretch=0.3).slinkies[0]
    thang = 0.4
    s = stretch.joint_stretch(sl.theta, sl.theta_min, thang)
    h = stretch.hoop_stretch(sl, thang)
    assert np.allclose(h[:-1], 0.5 * (s[:-1] + s[1:])) and h[-1] == s[-1]
    free = replace(sl, anchor_held=False, theta=np.r_[10.0, sl.theta[1:]])  # joint 0: junk
    assert stretch.hoop_stretch(free, thang)[0] == pytest.approx(s[1])
    t = stretch.tints(sl, thang)
    assert t.shape == (sl.N, 4) and np.all(t[:, 3] == 1.0)
    assert np.allclose(t[:, :3], stretch.colour(h), atol=1e-6)


# -- the click -----------------------------------------------------------------------
def test_click_is_off_by_default_and_counts_new_impacts():
    snap = hanging_snapshot("plastic", t=1.0)
    sl = snap.slinkies[0]
    ages = np.full(sl.N, np.inf)
    ages[[3, 4, 9]] = [0.001, 0.004, 0.5]
    snap = replace(snap, slinkies=(replace(sl, impact_age=ages),))
    assert impact_sound.new_impacts(snap, since=1.0 - 1 / 60) == 2
    assert impact_sound.new_impacts(snap, since=1.0) == 0  # paused
    sound = impact_sound.ImpactSound()
    assert not sound.on and sound.unavailable == ""
    sound.frame(replace(snap, t=0.9), 0.0)
    assert sound.frame(snap, 0.1) == 0 and sound.clicks == 0  # off: nothing played
    c = impact_sound.click_samples()
    assert c.dtype == np.int16 and 0 < len(c) < impact_sound.RATE * 0.05
    assert 0 < impact_sound.volume(1) < impact_sound.volume(5) <= 1.0


@pytest.mark.parametrize("failure", ["silent", "raises"])
def test_click_without_an_audio_device_says_so_and_stays_off(monkeypatch, failure):
    import pyglet

    # as the app's window has it when the click is turned on (pyglet.media imports
    # pyglet.window, which would otherwise open a hidden context of its own)
    monkeypatch.setitem(pyglet.options, "headless", True)
    monkeypatch.setitem(pyglet.options, "shadow_window", False)
    import pyglet.media

    if failure == "silent":
        monkeypatch.setattr(pyglet.media, "get_audio_driver",
                            lambda: type("SilentDriver", (), {})())
    else:
        def broken():
            raise OSError("no such device")

        monkeypatch.setattr(pyglet.media, "get_audio_driver", broken)
    sound = impact_sound.ImpactSound()
    assert sound.enable(True) is False
    assert not sound.on and sound.unavailable.startswith(impact_sound.UNAVAILABLE)
    assert sound.enable(True) is False  # asked again: still off, no second try
    snap = hanging_snapshot("plastic")
    sound.frame(snap, 0.0)
    sound.frame(replace(snap, t=1.0), 1.0)
    assert sound.clicks == 0


def test_click_plays_through_a_device_and_a_failing_one_turns_it_off(monkeypatch):
    sound = impact_sound.ImpactSound()
    played = []

    class Player:
        volume = 1.0

    class Source:
        def play(self):
            played.append(Player())
            return played[-1]

    monkeypatch.setattr(sound, "_open", lambda: Source())
    assert sound.enable(True)
    snap = hanging_snapshot("plastic", t=1.0)
    sl = snap.slinkies[0]
    hit = replace(snap, slinkies=(replace(sl, impact_age=np.r_[0.0, np.full(sl.N - 1, 9.0)]),))
    sound.frame(replace(hit, t=0.98), 0.0)
    assert sound.frame(hit, 1.0) == 1 and sound.clicks == 1
    assert played[0].volume == impact_sound.volume(1)
    sound.frame(replace(hit, t=1.02), 1.001)  # too soon after the last click: none
    assert sound.clicks == 1

    class Broken:
        def play(self):
            raise RuntimeError("device lost")

    sound._source = Broken()
    sound.frame(replace(hit, t=1.04), 2.0)
    sound.frame(replace(hit, t=1.06), 3.0)  # no exception, and off now, saying why
    assert not sound.on and "audio failed" in sound.unavailable


# -- the window's side ---------------------------------------------------------------
def _phenomena(history=None):
    """The window's part, without a window: a source with `history`, a plastic scene."""
    from slinky3d.runtime.history import History

    said: list[str] = []
    scene = SimpleNamespace(slinkies=[SimpleNamespace(params=preset("plastic"))])
    source = SimpleNamespace(history=history if history is not None else History())
    part = Phenomena(source, lambda: scene, lambda: None, said.append, impact_sound.ImpactSound())
    return part, said


def test_timeline_view_from_the_history():
    from slinky3d.runtime.history import History
    from slinky3d.viewer.app.phenomena import TIMELINE_PERIOD

    n = hanging_snapshot("plastic").slinkies[0].N
    contacts = np.random.default_rng(2).random((30, n)) < 0.4
    snaps = _snaps(contacts)
    history = History()
    for s in snaps:
        history.add(s)
    part, _ = _phenomena(history)
    assert part.view(snaps[-1], 0.0).timelines == ()  # off
    part.set("timeline", True)
    for s in snaps:
        part.observe(s, 0.0)
    view = part.view(snaps[-1], 0.0)
    assert "timeline" in view.on
    tl = view.timelines[0]
    assert np.array_equal(tl.closed, contacts)
    # refreshed every TIMELINE_PERIOD of wall time, and at once when time goes back
    assert part.view(snaps[-1], 0.5 * TIMELINE_PERIOD).timelines[0] is tl
    back = part.view(snaps[10], 0.5 * TIMELINE_PERIOD).timelines[0]
    assert np.array_equal(back.closed, contacts[:11])


def test_the_click_key_without_audio_says_so(monkeypatch):
    from slinky3d.viewer.app import impact_sound as sound_module

    part, said = _phenomena()
    monkeypatch.setattr(sound_module.ImpactSound, "_open",
                        lambda self: setattr(self, "unavailable", "no audio device"))
    part.actions()["overlay"](4)  # O
    assert "sound" not in part.on and said == [
        "click on impacts unavailable: no audio device"]
    assert part.view(hanging_snapshot("plastic"), 0.0).sound_unavailable
