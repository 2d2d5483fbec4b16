"""The dynamic-resolution controller's law (no GL): bounds, monotone response,
smoothness, and one settled scale under a steady load."""

import numpy as np
import pytest

from slinky3d.viewer.gl.dynamic_resolution import (
    BAND,
    DOWN_STEP,
    HEADROOM,
    MAX_SCALE,
    MIN_SCALE,
    UP_STEP,
    ResolutionController,
)

BUDGET = 1 / 60


def play(ctrl: ResolutionController, full_s: float, rest_s: float, frames: int,
         fixed_s: float = 0.0, noise: float = 0.0, seed: int = 0) -> list[float]:
    """Scales chosen frame by frame for a load whose 3D picture costs fixed_s plus
    full_s times the area (scale^2), with relative noise, and rest_s besides it."""
    rng = np.random.default_rng(seed)
    scales = []
    for _ in range(frames):
        s = ctrl.scale
        render = (fixed_s + full_s * s * s) * (1.0 + noise * rng.uniform(-1, 1))
        rest = rest_s * (1.0 + noise * rng.uniform(-1, 1))
        scales.append(ctrl.update(render, render + rest))
    return scales


def test_bounds():
    heavy = ResolutionController(BUDGET)
    assert min(play(heavy, full_s=1.0, rest_s=0.0, frames=200)) == MIN_SCALE
    hopeless = ResolutionController(BUDGET)  # the rest alone over the budget
    assert play(hopeless, full_s=0.005, rest_s=0.05, frames=200)[-1] == MIN_SCALE
    light = ResolutionController(BUDGET, scale=MIN_SCALE)
    scales = play(light, full_s=0.001, rest_s=0.001, frames=200)
    assert max(scales) == scales[-1] == MAX_SCALE
    assert ResolutionController(BUDGET, scale=3.0).scale == MAX_SCALE
    with pytest.raises(ValueError):
        ResolutionController(0.0)


def test_steps_are_small_and_slower_up_than_down():
    ctrl = ResolutionController(BUDGET)
    scales = [ctrl.scale] + play(ctrl, full_s=0.1, rest_s=0.002, frames=100)
    ctrl_up = ResolutionController(BUDGET, scale=MIN_SCALE)
    scales_up = [ctrl_up.scale] + play(ctrl_up, full_s=0.002, rest_s=0.002, frames=100)
    falls, rises = -np.diff(scales), np.diff(scales_up)
    assert falls.max() <= DOWN_STEP + 1e-12 and falls.min() >= 0.0
    assert rises.max() <= UP_STEP + 1e-12 and rises.min() >= 0.0
    assert falls.max() > rises.max()


def test_higher_load_never_a_higher_scale():
    settled = []
    for full in np.linspace(0.005, 0.08, 16):
        ctrl = ResolutionController(BUDGET)
        settled.append(play(ctrl, full_s=float(full), rest_s=0.004, frames=400)[-1])
    assert np.all(np.diff(settled) <= 1e-12)
    assert settled[0] == MAX_SCALE and settled[-1] == MIN_SCALE


@pytest.mark.parametrize(("fixed_s", "full"), [(0.0, 0.03), (0.003, 0.02)])
@pytest.mark.parametrize("start", [MAX_SCALE, MIN_SCALE])
def test_a_steady_load_settles_on_one_scale_that_fits(fixed_s, full, start):
    """A noisy but steady load (+-5 % a frame): the scale settles within the bounds on
    a frame that fits the budget, and then holds: no oscillation."""
    rest = 0.004
    ctrl = ResolutionController(BUDGET, scale=start)
    scales = play(ctrl, full_s=full, rest_s=rest, frames=600, fixed_s=fixed_s,
                  noise=0.05, seed=1)
    tail = np.array(scales[200:])
    assert np.ptp(tail) <= 0.02  # held, give or take one move on the noise
    moves = np.diff(tail)
    reversals = np.sum(np.diff(np.sign(moves[moves != 0])) != 0)
    assert reversals == 0
    s = tail[-1]
    assert MIN_SCALE < s < MAX_SCALE
    frame = fixed_s + full * s * s + rest
    assert frame <= HEADROOM * BUDGET * 1.05  # it fits ...
    # ... and no lower than the band below it asks (one up-step of slack).
    higher = fixed_s + full * (s + UP_STEP) ** 2
    assert higher >= BAND * (HEADROOM * BUDGET - rest) * 0.95


def test_a_load_that_comes_and_goes_moves_the_scale_both_ways():
    ctrl = ResolutionController(BUDGET)
    low = play(ctrl, full_s=0.06, rest_s=0.003, frames=200)[-1]
    high = play(ctrl, full_s=0.004, rest_s=0.003, frames=200)[-1]
    assert low < 0.8 and high == MAX_SCALE


def test_a_jittery_load_fits_its_slow_frames_not_only_its_mean():
    """Frames that stray +-40 % (other work sharing the cores): the scale settles where
    the slow frames fit the budget, lower than a steady load of the same mean asks."""
    rng = np.random.default_rng(3)
    fixed, full, rest = 0.003, 0.02, 0.004

    def settle(noise: float) -> tuple[float, np.ndarray]:
        ctrl = ResolutionController(BUDGET)
        frames = []
        for _ in range(800):
            s = ctrl.scale
            k = 1.0 + noise * rng.uniform(-1, 1)
            render, other = (fixed + full * s * s) * k, rest * k
            frames.append(render + other)
            ctrl.update(render, render + other)
        return ctrl.scale, np.array(frames[300:])

    steady, _ = settle(0.0)
    jittery, frames = settle(0.4)
    assert jittery < steady - 0.05
    assert np.percentile(frames, 95) <= BUDGET
