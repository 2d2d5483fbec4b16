"""Soak: the solver thread under random play for a while, faster than real time.

Random grabs, drags, throws (a grab flung metres in a step, then let go), releases,
resets and scene changes (Load) go to a SimThread that steps flat out (realtime=False,
moved by Step(n)). Throughout: no NaN, no error from the thread, the energy bounded,
and memory flat once warm. About 10 s of play by default; SLINKY3D_SOAK_S=3600 plays for an
hour of wall time (hours of simulated play), reporting what it did.
"""

from __future__ import annotations

import gc
import math
import os
import time
import tracemalloc

import numpy as np
import pytest

from slinky3d.dynamics.solver import warm_up
from slinky3d.runtime.commands import Grab, Load, Move, Release, Reset, Step
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader

SOAK_S = float(os.environ.get("SLINKY3D_SOAK_S", "10"))  # wall seconds of play
SCENES = ("hanging-plastic", "drop-plastic", "hanging-steel")
BURST = 40  # commands between two checks


@pytest.fixture(scope="module")
def scenes():
    warm_up()
    return {name: loader.load(name) for name in SCENES}


def _burst(rng: np.random.Generator, th: SimThread, scenes: dict, counts: dict) -> None:
    """One burst of play, as a visitor would: mostly drags, some throws and resets."""
    snap = th.latest_pair()[1].slinkies[0]
    n = snap.N
    lo, hi = snap.ends.min(axis=0) - 0.3, snap.ends.max(axis=0) + 0.3
    target = rng.uniform(lo, hi)
    for _ in range(BURST):
        r = rng.random()
        if r < 0.01:
            name = SCENES[int(rng.integers(len(SCENES)))]
            cmd: object = Load(scenes[name])
            counts["load"] += 1
        elif r < 0.03:
            cmd = Reset()
            counts["reset"] += 1
        elif r < 0.15:
            target = rng.uniform(lo, hi)
            cmd = Grab(0, int(rng.integers(0, n + 1)), tuple(target))
            counts["grab"] += 1
        elif r < 0.22:
            cmd = Release(0)
            counts["release"] += 1
        elif r < 0.28:  # a throw: a fling of a metre or two, let go a few steps later
            target = target + rng.normal(0.0, 1.0, 2)
            th.send(Move(0, tuple(target)))
            th.send(Step(int(rng.integers(1, 5))))
            cmd = Release(0)
            counts["throw"] += 1
        else:  # a drag
            target = target + rng.normal(0.0, 0.01, 2)
            cmd = Move(0, tuple(target))
            counts["drag"] += 1
        th.send(cmd)
        th.send(Step(int(rng.integers(1, 30))))


def _check(th: SimThread) -> float:
    """Everything published is finite and sane; returns the largest |energy| over the
    Slinky's own scale m g 2R N (what lifting it by its length costs)."""
    assert th.alive and th.error == "", th.error
    worst = 0.0
    for snap in th.latest_pair():
        for s, spec in zip(snap.slinkies, th.scene.slinkies, strict=True):
            assert np.all(np.isfinite(s.ends)) and np.all(np.isfinite(s.theta))
            assert s.energy is not None
            e = s.energy
            parts = (e.kinetic, e.gravity, e.spring, e.damping, e.impacts)
            assert all(math.isfinite(x) for x in parts)
            assert e.kinetic >= 0.0 and e.spring >= 0.0
            p = spec.params
            worst = max(worst, abs(e.kinetic + e.spring) / (p.mass * abs(p.g) * 2 * p.R * p.N))
    return worst


def _settled(th: SimThread, scene) -> int:
    """Traced bytes in a comparable state: the first scene freshly loaded, so that the
    bounded buffers (the 10 s history of snapshots) hold the same few entries."""
    th.send(Load(scene))
    th.send(Step(10))
    assert th.drain(60)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_random_play_on_the_solver_thread(scenes):
    rng = np.random.default_rng(2026)
    counts = dict.fromkeys(("grab", "drag", "throw", "release", "reset", "load"), 0)
    th = SimThread(scenes[SCENES[0]], realtime=False)
    th.start()
    try:
        # Warm: every scene loaded once, the caches and the history full.
        for name in SCENES:
            th.send(Load(scenes[name]))
            th.send(Step(3000))
            assert th.drain(60)
        tracemalloc.start()
        base = _settled(th, scenes[SCENES[0]])
        log0, t0, sim0 = len(th.log), time.perf_counter(), 0
        worst, bursts, mid = 0.0, 0, None
        while time.perf_counter() - t0 < SOAK_S:
            steps_before = th.steps
            _burst(rng, th, scenes, counts)
            assert th.drain(60), "the thread stopped answering"
            sim0 += th.steps - steps_before
            worst = max(worst, _check(th))
            bursts += 1
            if mid is None and time.perf_counter() - t0 > SOAK_S / 3:
                mid = (_settled(th, scenes[SCENES[0]]), len(th.log))
                mid_snap = tracemalloc.take_snapshot()
        end = (_settled(th, scenes[SCENES[0]]), len(th.log))
        growth = tracemalloc.take_snapshot().compare_to(mid_snap, "lineno")[:5] if mid else []
        tracemalloc.stop()
        rollbacks = th.sim.rollbacks
    finally:
        th.stop()
    simulated = sim0 * th.sim.h
    wall = time.perf_counter() - t0
    print(f"\nsoak: {wall:.0f} s wall, {simulated:.0f} s simulated "
          f"({simulated / wall:.0f}x real time), {bursts} bursts, {counts}, "
          f"energy <= {worst:.3g} m g 2R N, roll-backs {rollbacks}, memory "
          f"{(end[0] - base) / 1e6:+.2f} MB ({end[1] - log0} log entries), from a third "
          f"on {(end[0] - mid[0]) / 1e6 if mid else math.nan:+.2f} MB "
          f"({end[1] - mid[1] if mid else 0} entries)")
    # Played: every kind of command, many times over, faster than real time.
    assert min(counts.values()) > 0 and simulated > wall
    # The energy stays bounded: the grab's force is capped (5 weights), dampers and
    # impacts take energy out, and a reset or a load starts afresh. Throws reach ~60
    # (53 simulated minutes); a blow-up goes orders of magnitude past 1000.
    assert worst < 1e3
    # Memory flat once warm: from a third of the run to its end (each measured just
    # after the same Load), growth beyond the command log (the session's record, kept
    # on purpose: ~220 bytes an entry measured) is under 0.5 MB.
    assert mid is not None
    grown, entries = end[0] - mid[0], end[1] - mid[1]
    assert grown - 300 * entries < 5e5, (grown, entries, [str(g) for g in growth])
