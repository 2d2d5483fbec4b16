"""The walk's measure (output/walk.py) on ends' tracks made by hand: steps, rests, flips."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from slinky3d.output import walk
from slinky3d.scene.world import Stairs

FPS = 200.0
STAIRS = Stairs(top=(0.0, 0.0), height=0.08, depth=0.2, count=6, landing=0.3)
MARGIN = 0.03  # m: about a hoop's radius


def on(stairs: Stairs, k: int, where: float = 0.5) -> np.ndarray:
    """A point on step k's tread, `where` of the way along it."""
    x0, x1, y = stairs.tread(k)
    x1 = x0 + stairs.depth if math.isinf(x1) else x1
    return np.array([x0 + where * (x1 - x0), y])


def walked(stairs: Stairs, landings: list[int], rest: float = 0.2, flip: float = 0.3):
    """Ends' track of a Slinky walking end over end: the anchored end starts on
    landings[0], the far end on landings[1]; then the trailing end flips, over the
    other, onto each next landing in turn. Returns (t, anchored, far)."""
    a, f = on(stairs, landings[0], 0.7), on(stairs, landings[1], 0.3)
    pos = {0: a, 1: f}
    track = [(a, f)] * int(rest * FPS)
    mover = 0
    for k in landings[2:]:
        start, end = pos[mover], on(stairs, k, 0.3 if mover else 0.7)
        for s in np.arange(1, int(flip * FPS) + 1) / int(flip * FPS):
            p = start + s * (end - start) + np.array([0.0, 0.3 * math.sin(math.pi * s)])
            pos[mover] = p
            track.append((pos[0].copy(), pos[1].copy()))
        pos[mover] = end
        track += [(pos[0].copy(), pos[1].copy())] * int(rest * FPS)
        mover = 1 - mover
    t = np.arange(len(track)) / FPS
    return t, np.array([p[0] for p in track]), np.array([p[1] for p in track])


def test_a_walk_down_counts_its_steps_and_flips():
    t, a, f = walked(STAIRS, [0, 1, 2, 3, 4, 5])
    w = walk.measure(STAIRS, t, a, f, MARGIN)
    # Arched from step 0 onto step 1, then four flips onto steps 2..5.
    assert w == walk.Walk(steps=4, start=1, lowest=5, flips=4)


def test_the_floor_beyond_the_last_step_counts_as_a_step():
    t, a, f = walked(STAIRS, [4, 5, 6, 7])
    w = walk.measure(STAIRS, t, a, f, MARGIN)
    assert (w.start, w.lowest, w.steps, w.flips) == (5, STAIRS.count + 1, 2, 2)


def test_a_slinky_that_stays_put_walks_no_steps():
    t, a, f = walked(STAIRS, [0, 1])
    assert walk.measure(STAIRS, t, a, f, MARGIN) == walk.Walk(0, 1, 1, 0)


@settings(max_examples=25, deadline=None)
@given(dx=st.floats(-2.0, 2.0), dy=st.floats(-2.0, 2.0))
def test_moving_the_stairs_with_the_slinky_changes_nothing(dx, dy):
    t, a, f = walked(STAIRS, [0, 1, 2, 3])
    moved = Stairs(top=(dx, dy), height=STAIRS.height, depth=STAIRS.depth,
                   count=STAIRS.count, landing=STAIRS.landing)
    shift = np.array([dx, dy])
    assert (walk.measure(moved, t, a + shift, f + shift, MARGIN)
            == walk.measure(STAIRS, t, a, f, MARGIN))


def test_falling_through_the_steps_is_no_rest():
    """Ends that pass a tread's height in free fall never rest on it: no steps walked."""
    t = np.arange(int(0.6 * FPS)) / FPS
    fall = np.stack([np.zeros_like(t), -0.5 * 9.81 * t**2], axis=1)
    a, f = on(STAIRS, 0) + fall, on(STAIRS, 1) + fall
    assert walk.measure(STAIRS, t, a, f, MARGIN) == walk.Walk(None, None, None, 0)


def test_a_touch_shorter_than_the_dwell_is_no_rest():
    t = np.arange(100) / FPS
    a = np.tile(on(STAIRS, 1), (len(t), 1))
    f = np.tile(on(STAIRS, 3) + [0.0, 0.2], (len(t), 1))  # in the air above step 3
    touch = (t >= 0.2) & (t < 0.2 + 0.5 * walk.DWELL)
    f[touch] = on(STAIRS, 3)
    assert walk.measure(STAIRS, t, a, f, MARGIN).lowest == 1
    f[(t >= 0.2) & (t < 0.2 + 1.5 * walk.DWELL)] = on(STAIRS, 3)
    assert walk.measure(STAIRS, t, a, f, MARGIN).lowest == 3


def test_rests_are_told_apart_by_their_step_and_time():
    t, a, _ = walked(STAIRS, [0, 1, 2, 3, 4])
    r = walk.rests(STAIRS, t, a)
    assert [k for _, k in r] == [0, 2, 4]  # the anchored end lands on every other step
    assert r[0][0] == 0.0 and r[1][0] > r[0][0]


def test_an_end_just_off_the_tread_is_not_on_it():
    t = np.arange(40) / FPS
    end = np.tile(on(STAIRS, 2) + [0.0, 2 * walk.TOL], (len(t), 1))
    assert walk.rests(STAIRS, t, end) == []
    end[:, 1] -= 1.5 * walk.TOL
    assert walk.rests(STAIRS, t, end) == [(0.0, 2)]


def test_ends_side_by_side_do_not_flip():
    """A lead smaller than the margin, back and forth, is no flip; beyond it, each
    change of the leading end is one."""
    t = np.arange(400) / FPS
    a = np.zeros((len(t), 2))
    f = np.zeros((len(t), 2))
    f[:, 0] = 0.9 * MARGIN * np.sin(2 * math.pi * 5 * t)
    assert walk.flips(a, f, MARGIN) == 0
    f[:, 0] = 3 * MARGIN * np.sin(2 * math.pi * 5 * t)  # 20 half periods in 2 s
    assert walk.flips(a, f, MARGIN) == 20 - 1  # the first lead taken is no flip


def test_without_stairs_only_flips_are_counted():
    t, a, f = walked(STAIRS, [0, 1, 2, 3])
    assert walk.measure(None, t, a, f, MARGIN) == walk.Walk(None, None, None, 2)
