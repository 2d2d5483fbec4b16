"""The solver in its own process: the same run as the thread's, its history and log
relayed, a final session when it stops, and a clear error when the process dies."""

from __future__ import annotations

import os
import signal
import time

import pytest
from runs import drive

from slinky3d.errors import SlinkyError
from slinky3d.output.session import load_session, save_session
from slinky3d.runtime.commands import Grab, Move, Release, Reset, Step, replay
from slinky3d.runtime.process import SOLVER_NICE, YIELD_NICE, SimProcess
from slinky3d.runtime.session import Session, SessionPlayer
from slinky3d.runtime.source import Source
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader

SCRIPT = [(0, Grab(0, 75, (0.05, -0.1))), (40, Move(0, (0.3, 0.1))), (90, Release(0)),
          (130, Grab(0, 30)), (131, Move(0, (-0.2, -0.3))), (160, Reset())]
NSTEPS = 200


@pytest.fixture(scope="module")
def plastic():
    return loader.load("hanging-plastic")


@pytest.fixture(scope="module")
def driven(plastic):
    """A process driven through SCRIPT step by step, then stopped."""
    p = SimProcess(SimThread, plastic, None, False)
    assert isinstance(p, Source)
    first = p.latest_pair()
    p.start()
    drive(p, SCRIPT, NSTEPS, timeout=120)
    seen = dict(steps=p.steps, paused=p.paused, pair=p.latest_pair(), alive=p.alive,
                history=p.history.snapshots(), log=list(p.log))
    p.stop()
    yield p, first, seen
    p.stop()


def test_a_process_run_is_the_threads(plastic, driven):
    p, first, seen = driven
    assert first[0].t == first[1].t == 0.0  # a picture before the child has started
    assert seen["alive"] and seen["steps"] == NSTEPS and seen["paused"]
    want = replay(plastic, SCRIPT, NSTEPS)
    final = p.session()
    assert not p.alive and final.nsteps == NSTEPS
    assert final.final_hash == want.state_hash()
    assert [(s, c) for s, c in final.log if not isinstance(c, Step)] == SCRIPT
    assert list(p.log) == list(final.log) == seen["log"]


def test_the_snapshots_and_history_come_across(plastic, driven):
    _, _, seen = driven
    th = SimThread(plastic, realtime=False)
    th.start()
    try:
        drive(th, SCRIPT, NSTEPS)
        prev, cur = th.latest_pair()
        assert [s.t for s in seen["pair"]] == [prev.t, cur.t]
        assert (seen["pair"][1].slinkies[0].ends == cur.slinkies[0].ends).all()
        assert [s.t for s in seen["history"]] == [s.t for s in th.history.snapshots()]
    finally:
        th.stop()


def test_a_session_saved_from_the_process_replays(plastic, tmp_path):
    p = SimProcess(SimThread, plastic, None, False)
    p.start()
    try:
        drive(p, SCRIPT[:3], 120, timeout=120)
        path = save_session(tmp_path / "s.npz", p)  # paused first, as a thread is
    finally:
        p.stop()
    s = load_session(path)
    assert s.nsteps == 120
    assert replay(plastic, s.log, s.nsteps).state_hash() == s.final_hash


def test_a_session_player_runs_in_the_process(plastic):
    session = Session(scene=plastic, log=tuple(SCRIPT[:2]), nsteps=60,
                      final_hash=replay(plastic, SCRIPT[:2], 60).state_hash())
    p = SimProcess(SessionPlayer, session, False)
    p.start()
    try:
        p.send(Step(100))
        assert p.drain(120)
        assert p.steps == 60 and "bit-identical" in p.status
    finally:
        p.stop()


def test_a_dead_process_is_an_error_not_a_hang(plastic):
    p = SimProcess(SimThread, plastic, None, False)
    p.start()
    assert p.drain(120)
    pid = p.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not p.error and time.monotonic() < deadline:
        time.sleep(0.02)
    assert p.error.startswith("the solver process ended unexpectedly")
    assert "\n" not in p.error and p.paused
    p.send(Step(10))  # taken, and nothing happens
    assert not p.drain(1.0)
    with pytest.raises(SlinkyError):
        p.session()
    t0 = time.monotonic()
    p.stop()
    assert time.monotonic() - t0 < 5.0 and not p.alive


def test_never_started_stops_at_once(plastic):
    p = SimProcess(SimThread, plastic)
    p.stop()
    p.start()  # after stop it stays stopped
    assert not p.alive
    assert p.session().nsteps == 0 and p.log == ()


YIELD_SCRIPT = """
import os, threading, time
from slinky3d.runtime import process

before = os.getpriority(os.PRIO_PROCESS, 0)
p = process.SimProcess.__new__(process.SimProcess)  # only the yielding state
p._yield, p.yielded, p._behind_since = True, False, None
p._yield_when_behind(True)
p._yield_when_behind(False)  # caught up: the clock starts again
p._yield_when_behind(True)
kept_up = (p.yielded, os.getpriority(os.PRIO_PROCESS, 0))
time.sleep(process.YIELD_AFTER * 1.05)
p._yield_when_behind(True)
after = os.getpriority(os.PRIO_PROCESS, 0)
later = []
t = threading.Thread(target=lambda: later.append(os.getpriority(os.PRIO_PROCESS, 0)))
t.start(); t.join()
print(before, *kept_up, p.yielded, after, later[0])
"""


def test_the_app_yields_the_cpu_only_to_a_solver_behind():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", YIELD_SCRIPT], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    before, kept_yielded, kept_nice, yielded, after, thread_later = out
    assert kept_yielded == "False" and int(kept_nice) == int(before)
    want = min(int(before) + YIELD_NICE, 19)
    assert yielded == "True" and int(after) == want and int(thread_later) == want


@pytest.mark.parametrize("app", [True, False])
def test_the_apps_solver_runs_nicer_than_its_window(plastic, app):
    """The app's solver process (yield_to_solver) runs SOLVER_NICE nicer than the window,
    every thread of it; other users' (a recording, the tests) as nice as they are."""
    p = SimProcess(SimThread, plastic, None, False, yield_to_solver=app)
    try:
        p.start()
        deadline = time.time() + 120
        while p.steps == 0 and time.time() < deadline:  # past its start-up
            p.send(Step(1))
            time.sleep(0.05)
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        want = min(mine + SOLVER_NICE, 19) if app else mine
        tids = [int(t) for t in os.listdir(f"/proc/{p.pid}/task")]
        assert [os.getpriority(os.PRIO_PROCESS, t) for t in tids] == [want] * len(tids)
    finally:
        p.stop()


ORPHAN_SCRIPT = """
import sys, time
from slinky3d.runtime.process import SimProcess
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader
p = SimProcess(SimThread, loader.load("hanging-plastic"), None, True)
p.start()
print(p.pid, flush=True)
time.sleep(600)
"""


def test_the_solver_process_ends_when_its_parent_is_killed():
    """A window killed (or crashed) cannot stop its solver's process: the child sees it
    has lost its parent and ends, instead of stepping on for ever."""
    import subprocess
    import sys

    parent = subprocess.Popen([sys.executable, "-c", ORPHAN_SCRIPT], stdout=subprocess.PIPE,
                              text=True)
    try:
        child = int(parent.stdout.readline())
        assert os.path.exists(f"/proc/{child}")
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.time() + 10
        while time.time() < deadline and _running(child):
            time.sleep(0.1)
        assert not _running(child)
    finally:
        if parent.poll() is None:
            parent.kill()


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for its (new) parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
