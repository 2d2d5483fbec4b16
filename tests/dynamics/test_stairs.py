"""The stairs scenes: a Slinky bent over the top step walks down by itself, flip after
flip, without going into the steps."""

import numpy as np
import pytest

from slinky3d.errors import SceneError
from slinky3d.model import chain
from slinky3d.output.walk import measure
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load
from slinky3d.scene.world import distance


def walk(name, seconds, overrides=()):
    scene = load(name, overrides)
    sim = Simulation(scene)
    s = sim.slinkies[0]
    t, a, b, deepest = [], [], [], 0.0
    per = round(0.01 / sim.h)
    while sim.t < seconds - 1e-9:
        sim.step(per)
        E = chain.end_points(s.q, s.p.R)
        f = np.linspace(0.0, 1.0, 6)[:, None, None]
        bars = (E[:-1][None] * (1 - f) + E[1:][None] * f).reshape(-1, 2)
        deepest = min(deepest, float(distance(scene.world, bars).min()))
        t.append(sim.t)
        a.append(E[0])
        b.append(E[-1])
    w = measure(scene.world.stairs, np.array(t), np.array(a), np.array(b), margin=s.p.R)
    return w, deepest, sim


def test_the_plastic_slinky_walks_down_four_steps_flip_after_flip():
    w, deepest, sim = walk("stairs", 2.0)
    assert w.start in (0, 1)  # its ends start on the top step and the next
    assert w.steps >= 4
    assert w.flips >= 3  # the ends took turns: a walk, not a fall
    assert deepest > -1e-3  # nothing more than 1 mm into a step
    assert not sim.rollbacks


def test_the_bent_over_start_stands_on_the_two_top_steps_at_any_step_size():
    for h, d in ((0.10, 0.08), (0.14, 0.085), (0.18, 0.11)):
        scene = load("stairs", [f"world.stairs.height={h}", f"world.stairs.depth={d}"])
        sp = scene.slinkies[0]
        E = chain.end_points(sp.q0, sp.params.R)
        st = scene.world.stairs
        assert st.step_at(*E[0], 1e-9) == 0 and st.step_at(*E[-1], 1e-9) == 1
        assert distance(scene.world, E).min() > -1e-9
        assert sp.q0[3 + 1:].min() >= sp.params.theta_min - 1e-12


@pytest.mark.parametrize("override, words", [
    ("world.stairs.depth=0.05", "too shallow"),
    ("world.stairs.height=1.5", "too high"),
    ("world.stairs.landing=0.03", "top step"),
])
def test_steps_that_do_not_fit_the_bent_over_start_are_one_line_errors(override, words):
    with pytest.raises(SceneError) as e:
        load("stairs", [override])
    assert words in str(e.value) and "\n" not in str(e.value)
