"""The history ring: bounded, spaced, interpolated, thread-safe, reset by time going back."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from slinky3d.runtime.history import ENERGY_COLUMNS, History
from slinky3d.runtime.snapshot import Energy, SlinkySnapshot, Snapshot


def snap(t: float, n: int = 4) -> Snapshot:
    """A Slinky whose end points move at 1 m/s in x and whose energy is 2 t J kinetic."""
    ends = np.zeros((n + 1, 2))
    ends[:, 0] = t
    ends[:, 1] = -np.arange(n + 1.0)
    s = SlinkySnapshot(ends=ends, theta=np.full(n, t), contact=np.zeros(n, bool), R=0.1,
                       pitch=0.01, theta_min=0.1,
                       energy=Energy(kinetic=2 * t, gravity=-1.0, damping=t),
                       impact_age=np.full(n, math.inf))
    return Snapshot(t=t, slinkies=(s, s))


def test_keeps_the_last_seconds_spaced_and_bounded():
    h = History(seconds=1.0, period=0.01)
    for k in range(1000):  # 4 s at 4 ms steps
        h.add(snap(k * 0.004))
    t0, t1 = h.span()
    assert t1 == pytest.approx(999 * 0.004)
    assert t1 - t0 <= 1.0 and t1 - t0 > 1.0 - 0.02
    ts = np.array([s.t for s in h.snapshots()])
    assert np.all(np.diff(ts)[:-1] >= 0.01 * (1 - 1e-9))  # spaced, but for the newest
    assert len(h) <= math.ceil(1.0 / 0.01) + 3


def test_at_interpolates_and_clamps():
    h = History(seconds=10.0, period=0.01)
    for k in range(100):
        h.add(snap(k * 0.02))
    s = h.at(0.515)
    assert s.t == pytest.approx(0.515)
    assert s.slinkies[0].ends[0, 0] == pytest.approx(0.515)  # linear motion: exact
    assert s.slinkies[0].energy.kinetic == pytest.approx(2 * 0.515)
    assert h.at(-5.0).t == 0.0 and h.at(99.0).t == pytest.approx(99 * 0.02)
    assert h.at(math.nan).t == 0.0


def test_energy_rows():
    h = History(seconds=10.0, period=0.01)
    for k in range(11):
        h.add(snap(k * 0.01))
    rows = h.energy_rows()
    assert rows.shape == (11, len(ENERGY_COLUMNS))
    assert np.allclose(rows[:, 1], 2 * 2 * rows[:, 0])  # two Slinkies summed
    one = h.energy_rows(slinky=1)
    assert np.allclose(one[:, 1], 2 * one[:, 0]) and np.allclose(one[:, 2], -1.0)
    assert np.allclose(one[:, 4], one[:, 0])


def test_time_going_back_starts_afresh_and_empty_reads():
    h = History()
    assert math.isnan(h.span()[0]) and h.energy_rows().shape == (0, 6)
    with pytest.raises(LookupError):
        h.at(0.0)
    for k in range(10):
        h.add(snap(k * 0.01))
    h.add(snap(0.0))  # a reset
    assert len(h) == 1 and h.span() == (0.0, 0.0)
    with pytest.raises(ValueError):
        History(seconds=0.0)


def test_reads_while_written():
    h = History(seconds=0.5, period=0.001)
    stop = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            while not stop.is_set():
                t0, t1 = h.span()
                if not math.isnan(t0):
                    s = h.at(0.5 * (t0 + t1))
                    assert t0 - 1e-12 <= s.t <= h.span()[1] + 1e-12
                h.energy_rows()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    r = threading.Thread(target=read)
    r.start()
    for k in range(5000):
        h.add(snap(k * 0.0005))
    stop.set()
    r.join()
    assert not errors


def test_the_solver_thread_records_its_history():
    from runs import drive

    from slinky3d.dynamics.solver import warm_up
    from slinky3d.runtime.commands import Reset
    from slinky3d.runtime.thread import SimThread
    from slinky3d.scene import loader

    warm_up()
    th = SimThread(loader.load("drop-plastic"), realtime=False)
    th.start()
    try:
        drive(th, [], 150)  # 0.6 s at 4 ms
        t0, t1 = th.history.span()
        assert t0 == 0.0 and t1 == pytest.approx(0.6)
        ts = np.array([s.t for s in th.history.snapshots()])
        assert np.diff(ts).max() <= 2 * th.sim.h + 1e-12  # >= 120 Hz of simulated time
        rows = th.history.energy_rows()
        assert rows[-1, 5] > 0.0  # impacts since the drop
        assert th.history.at(0.3).t == pytest.approx(0.3)
        th.send(Reset())
        assert th.drain()
        assert th.history.span() == (0.0, 0.0)
    finally:
        th.stop()
