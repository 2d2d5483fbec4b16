"""Session logs: saved with their trajectory, loaded back, replayed bit for bit offline
and in real time; broken files and files of another version refused in one line."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from runs import drive

from slinky3d.dynamics.solver import warm_up
from slinky3d.errors import SlinkyError
from slinky3d.output import trajectory
from slinky3d.output.recording import record
from slinky3d.output.session import SESSION_KEY, load_session, save_session
from slinky3d.runtime.commands import (
    DriveBase,
    Grab,
    LetGo,
    Load,
    Move,
    Release,
    Reset,
    Step,
    TakeHold,
    TimeScale,
    replay,
)
from slinky3d.runtime.session import SessionPlayer, command_from_json, command_json
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader

SCRIPT = [(0, Grab(0, 75, (0.05, -0.1))), (20, Move(0, (0.3, 0.1))), (40, Release(0)),
          (41, TimeScale(0.5)), (50, DriveBase(0, (0.2, 0.0))), (80, LetGo(0)),
          (120, TakeHold(0, 75)), (150, Reset()), (151, Grab(0, 30))]
NSTEPS = 200


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    warm_up()


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A thread's session (with overrides), saved."""
    sc = loader.load("hanging-plastic", ["slinky.C_D=1e-3"])
    th = SimThread(sc, realtime=False)
    th.start()
    try:
        drive(th, SCRIPT, NSTEPS)
        live = th.sim.state_hash()
        path = save_session(tmp_path_factory.mktemp("s") / "run.npz", th)
    finally:
        th.stop()
    return path, live, sc


def test_commands_round_trip_through_json():
    sc = loader.load("hanging-plastic")
    for _, cmd in [*SCRIPT, (0, Step(3)), (0, Load(sc))]:
        back = command_from_json(json.loads(json.dumps(command_json(cmd))), "x")
        if isinstance(cmd, Load):
            assert isinstance(back, Load) and back.scene.raw == sc.raw
        else:
            assert back == cmd


def test_saved_session_replays_to_its_final_hash(saved):
    path, live, sc = saved
    s = load_session(path)
    assert s.nsteps >= NSTEPS and s.final_hash == live
    assert s.scene.slinkies[0].params.C_D == 1e-3  # the overrides travel with it
    assert replay(s.scene, s.log, s.nsteps, s.h).state_hash() == s.final_hash
    # it is a trajectory file too, with simulate's keys
    tr = trajectory.load(path)
    assert tr.t[0] == 0.0 and np.all(np.diff(tr.t) > 0)
    assert tr.tracks[0].ends.shape == (tr.t.shape[0], 76, 3)
    ref, _ = record(sc, 0.0)
    assert set(ref) <= set(np.load(path).files)


def test_player_plays_it_bit_identically(saved):
    path, live, _ = saved
    s = load_session(path)
    player = SessionPlayer(s, realtime=False)
    player.start()
    try:
        player.send(Grab(0, 3))  # the viewer cannot change a replay
        player.send(Step(s.nsteps + 50))
        assert player.drain(60)
        assert player.finished and player.steps == s.nsteps
        assert player.sim.state_hash() == live
        assert "bit-identical" in player.status
        assert len(player.history) > 0
        player.send(Reset())  # starts over
        player.send(Step(10))
        assert player.drain(60)
        assert player.steps == 10 and not player.finished
    finally:
        player.stop()


def test_bad_files_are_refused_in_one_line(saved, tmp_path):
    path, _, sc = saved
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    d = json.loads(str(data[SESSION_KEY]))

    def variant(name, **change):
        e = dict(d, **change)
        p = tmp_path / name
        np.savez(p, **{**data, SESSION_KEY: np.str_(json.dumps(e))})
        return p

    cases = [variant("v.npz", version="0.0.1"), variant("f.npz", format=99),
             variant("n.npz", nsteps=-3), variant("l.npz", log=[[5, {"type": "Fly"}]]),
             variant("o.npz", log=[[5, {"type": "Reset"}], [2, {"type": "Reset"}]]),
             variant("s.npz", scene={"toml": "[slinky]\npreset = 'rubber'\n"})]
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    cases.append(tmp_path / "junk.npz")
    cases.append(tmp_path / "missing.npz")
    rec = tmp_path / "rec.npz"
    trajectory.save(rec, record(sc, 0.0)[0], {})
    cases.append(rec)
    for p in cases:
        with pytest.raises(SlinkyError) as e:
            load_session(p)
        assert "\n" not in str(e.value) and str(p) in str(e.value), p


def test_player_in_real_time(saved):
    """Paced by the clock (at 4x), it reaches the end, pauses and says it matched."""
    path, live, _ = saved
    player = SessionPlayer(load_session(path))
    player.send(TimeScale(4.0))
    player.start()
    try:
        deadline = time.perf_counter() + 20.0
        while not player.finished and time.perf_counter() < deadline:
            time.sleep(0.02)
            a, b = player.latest_pair()
            assert a.t <= b.t
        assert player.finished and player.paused and player.sim.state_hash() == live
    finally:
        player.stop()
    assert not player.alive
