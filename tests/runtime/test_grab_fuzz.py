"""Thousands of random grab / drag / fling / release commands never break the solver.

The command script is a pure function of the seed (it does not look at the state),
so a failure is reproduced by `replay(scene, script(scene, seed, n), step)`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from runs import drive

from slinky3d.dynamics.couplings import grab_defaults
from slinky3d.dynamics.solver import warm_up
from slinky3d.runtime.commands import (
    Grab,
    LogEntry,
    Move,
    Release,
    Reset,
    Step,
    advance,
    apply,
    replay,
)
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader

NCMD = 2500


def script(sc, seed: int, ncmd: int) -> list[LogEntry]:
    """(step, command) pairs 1-3 steps apart: grabs of random end points, drags,
    flings of metres per step, targets 1 km away, releases, re-grabs, bad input."""
    rng = np.random.default_rng(seed)
    spec = sc.slinkies[0]
    n = spec.params.N
    E = Simulation(sc).slinkies[0].ends()
    lo, hi = E.min(axis=0) - 0.3, E.max(axis=0) + 0.3
    out: list[LogEntry] = []
    step, grabbed = 0, False
    target = np.zeros(2)
    for _ in range(ncmd):
        r = rng.random()
        near = rng.uniform(lo, hi)
        if r < 0.01:
            cmd = Reset()
            grabbed = False
        elif r < 0.03:
            bad = [(math.nan, 0.0), (0.0, math.inf), (1e300, 0.0), "x"]
            opts = [Grab(0, n + 1 + int(rng.integers(5))), Grab(1, 0), Release(7),
                    Grab(0, -1), Move(0, bad[int(rng.integers(4))]),
                    Grab(0, 0, bad[int(rng.integers(3))])]
            cmd = opts[int(rng.integers(len(opts)))]
        elif not grabbed or r < 0.15:
            k = int(rng.integers(0, n + 1))
            target = near
            cmd = Grab(0, k, tuple(target) if rng.random() < 0.5 else None)
            grabbed = True
        elif r < 0.27:
            cmd, grabbed = Release(0), False
        elif r < 0.33:
            target = rng.uniform(-1e3, 1e3, 2)
            cmd = Move(0, tuple(target))
        elif r < 0.40:
            target = near
            cmd = Move(0, tuple(target))
        elif r < 0.60:
            target = target + rng.normal(0.0, 1.0, 2)  # a fling: metres in one step
            cmd = Move(0, tuple(target))
        else:
            target = target + rng.normal(0.0, 0.02, 2)
            cmd = Move(0, tuple(target))
        out.append((step, cmd))
        step += int(rng.integers(1, 4))
    return out


def run_checked(sc, log: list[LogEntry]) -> dict:
    """Apply the script step by step with the thread's code path; check everything."""
    sim = Simulation(sc)
    cap = grab_defaults(sc.slinkies[0])[3]
    p = sim.slinkies[0].p
    scale = p.mass * p.g * 2 * p.R * p.N  # the guard's energy scale
    e_prev = sim.slinkies[0].energy()
    worst_gain, refused = 0.0, 0
    excess, worst_excess = 0.0, 0.0  # energy gained beyond the grab's work, summed
    bounds = []
    k = 0
    for j, (step, cmd) in enumerate(log):
        s = sim.slinkies[0]
        while k < step:
            g = s.grabbed
            before = s.ends()[g].copy() if g is not None else None
            n, err = advance(sim, 1)
            assert not err, f"solver raised at step {k + 1} (command {j}): {err}"
            k += 1
            assert np.all(np.isfinite(s.q)) and np.all(np.isfinite(s.qd)), f"step {k}"
            e = s.energy()
            assert math.isfinite(e)
            # Work of a force capped at `cap` over the step is at most cap * path.
            work = cap * float(np.linalg.norm(s.ends()[g] - before)) if g is not None else 0.0
            worst_gain = max(worst_gain, e - e_prev - work)
            excess += e - e_prev - work
            worst_excess = max(worst_excess, excess)
            e_prev = e
        sim, msg = apply(sim, cmd)
        refused += bool(msg)
        if isinstance(cmd, Reset):
            excess = 0.0
        e_prev = sim.slinkies[0].energy()  # Reset changes the energy, legitimately
        snap = sim.snapshot()
        ends = snap.slinkies[0].ends
        assert ends.shape == (p.N + 1, 2) and np.all(np.isfinite(ends)), f"command {j}"
        bounds.append(float(np.abs(s.qd).max()))
    return {"sim": sim, "worst_gain": worst_gain / scale, "refused": refused,
            "worst_excess": worst_excess / scale,
            "max_qd": max(bounds), "scale": scale}


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    warm_up()


@pytest.mark.parametrize("name, ncmd", [("hanging-plastic", NCMD), ("hanging-steel", NCMD),
                                        ("drop-plastic", NCMD // 2)])
def test_random_grabs_never_break(name, ncmd):
    """drop-plastic: a free Slinky (let go at 0.2 s), grabbed and flung about."""
    sc = loader.load(name)
    log = script(sc, seed=7, ncmd=ncmd)
    assert sum(isinstance(c, Grab) for _, c in log) > ncmd // 8
    far = [c for _, c in log if isinstance(c, Move) and not isinstance(c.target, str)
           and np.all(np.isfinite(c.target)) and max(map(abs, c.target)) > 100]
    assert len(far) > ncmd // 50
    r = run_checked(sc, log)
    sim = r["sim"]
    assert r["refused"] > 10  # the bad commands were refused, not applied
    # The guard never had to step in, so nothing diverged.
    assert sim.rollbacks == 0, sim.status
    assert r["max_qd"] < 1e4
    # No step gains more energy than the capped grab force can put in (1% of the
    # guard's scale m g 2R N for integration error).
    assert r["worst_gain"] < 1e-2, r["worst_gain"]
    # ... nor all the steps since the last reset together: the energy stays bounded
    # by what the capped force can put in
    assert r["worst_excess"] < 2e-2, r["worst_excess"]


def test_random_grabs_through_the_thread():
    """The same kind of script sent to the thread (deterministically, by Step(n)):
    it never reports an error and ends in the state of the offline run."""
    sc = loader.load("hanging-plastic")
    log = script(sc, seed=11, ncmd=600)
    nsteps = log[-1][0] + 5
    th = SimThread(sc, realtime=False)
    th.start()
    try:
        drive(th, log, nsteps, timeout=60)
        assert th.alive and th.error == "" and th.steps == nsteps
        for snap in th.latest_pair():
            assert np.all(np.isfinite(snap.slinkies[0].ends))
    finally:
        th.stop()
    assert th.sim.state_hash() == replay(sc, log, nsteps).state_hash()
    assert th.sim.state_hash() == run_checked(sc, log + [(nsteps, Step())])["sim"].state_hash()


def test_script_is_a_function_of_the_seed():
    sc = loader.load("hanging-plastic")
    a, b = script(sc, 3, 200), script(sc, 3, 200)
    assert [s for s, _ in a] == [s for s, _ in b]
    assert repr(a) == repr(b)
    assert repr(script(sc, 4, 200)) != repr(a)
