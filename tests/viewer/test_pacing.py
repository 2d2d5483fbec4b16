"""The window's frame pacing: frames spaced out while the solver needs the CPU."""

import pytest

from slinky3d.viewer.app.pacing import (
    DUTY_HIGH,
    DUTY_LOW,
    FRAME_INTERVAL,
    MAX_INTERVAL,
    FramePacer,
)


def test_a_busy_solver_spaces_the_frames_out_and_an_idle_one_brings_them_back():
    pacer = FramePacer()
    assert pacer.interval == FRAME_INTERVAL and not pacer.giving_way
    seen = [pacer.update(0.99) for _ in range(60)]
    assert all(b >= a for a, b in zip(seen[:-1], seen[1:], strict=True))  # monotone while busy
    assert seen[-1] == MAX_INTERVAL and pacer.giving_way  # bounded: never slower
    between = 0.5 * (DUTY_LOW + DUTY_HIGH)
    assert pacer.update(between) == MAX_INTERVAL  # a dead band: no hunting
    back = [pacer.update(0.1) for _ in range(200)]
    assert all(b <= a for a, b in zip(back[:-1], back[1:], strict=True))
    assert back[-1] == FRAME_INTERVAL and not pacer.giving_way
    # giving way is quicker than coming back: a few frames against a few dozen
    up = next(i for i, v in enumerate(seen) if v == MAX_INTERVAL)
    down = next(i for i, v in enumerate(back) if v == FRAME_INTERVAL)
    assert up < down / 2


def test_no_duty_published_keeps_the_display_rate():
    pacer = FramePacer()
    for _ in range(100):
        assert pacer.update(0.0) == FRAME_INTERVAL


@pytest.mark.parametrize("interval,slowest", [(0.0, 0.1), (0.1, 0.05), (-1.0, 1.0)])
def test_bad_intervals_are_refused(interval, slowest):
    with pytest.raises(ValueError, match="frame intervals"):
        FramePacer(interval, slowest)
