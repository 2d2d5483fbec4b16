"""The kiosk: its logic as a state machine without a window (attract loop, play, idle
timeout, the replay after a drop, the exit chord), skipping scenes that do not load, and
its window run headless through a simulated GL context loss."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slinky3d.errors import SceneError
from slinky3d.viewer.kiosk.playlist import Entry, Playlist, from_dict
from slinky3d.viewer.kiosk.state import (
    ATTRACT,
    CURSOR_HIDE_S,
    PLAY,
    REPLAY_LEAD,
    Attendant,
    EndReplay,
    Open,
    Play,
    PutBack,
    Quit,
    ReplayDrop,
    ScriptedDrop,
    check_playlist,
    first_valid,
)

ROOT = Path(__file__).resolve().parents[2]
CHORD = frozenset({"ctrl", "alt", "shift"})


def playlist(**kw) -> Playlist:
    doc = {"scenes": ["a", {"name": "b", "seconds": 5, "let_go": 2}, "c"], "idle": 45,
           "seconds": 20, **kw}
    return from_dict(doc, "test.toml")


class Run:
    """An Attendant fed frames of a still scene (anchored end held unless `held`)."""

    def __init__(self, pl=None):
        self.a = Attendant(pl or playlist(), 0.0)
        self.now, self.t, self.held, self.replay = 0.0, 0.0, [True], False

    def frames(self, seconds, dt=0.1, sim=True):
        events = []
        for _ in range(round(seconds / dt)):
            self.now += dt
            if sim and not self.replay:
                self.t += dt
            events += self.a.tick(self.now, self.t, self.held, self.replay)
            for e in events:
                if isinstance(e, ReplayDrop):
                    self.replay = True
                if isinstance(e, Open):
                    self.a.opened_entry(e.index, self.now)
                    self.t = 0.0
        return events


def test_attract_loop_moves_on_after_each_entrys_seconds():
    r = Run()
    assert r.a.mode == ATTRACT
    assert not any(isinstance(e, Open) for e in r.frames(19.5))
    assert r.frames(1.0) == [Open(1)]  # the playlist's 20 s
    assert r.a.index == 1
    events = r.frames(5.0)  # entry b: its own 5 s, and its let-go at 2 s
    assert events.count(ScriptedDrop()) == 1 and events[-1] == Open(2)
    r.frames(20.0)
    assert r.a.index == 0  # round the list


def test_a_touch_hands_over_and_idle_time_brings_the_loop_back():
    r = Run()
    r.frames(3.0)
    assert r.a.touch(r.now, pointer=True) == [Play()]
    assert r.a.mode == PLAY and r.a.cursor_visible
    assert r.a.touch(r.now) == []  # already playing
    events = r.frames(30.0)
    assert not any(isinstance(e, Open) for e in events)  # 45 s of idle, not 20
    assert not r.a.cursor_visible  # hidden again CURSOR_HIDE_S after the last move
    r.a.key("L", frozenset(), r.now)  # a key is a touch too: the idle clock restarts
    assert not any(isinstance(e, Open) for e in r.frames(44.0))
    assert r.frames(1.5) == [Open(1)]  # idle: the loop comes back, on the next entry
    assert r.a.mode == ATTRACT and r.a.index == 1


def test_cursor_hides_a_while_after_the_pointer_stops():
    r = Run()
    r.a.touch(r.now, pointer=True)
    r.frames(CURSOR_HIDE_S - 0.5)
    assert r.a.cursor_visible
    r.frames(1.0)
    assert not r.a.cursor_visible


def test_a_drop_is_replayed_in_slow_motion_then_the_loop_moves_on():
    pl = playlist(replay_after=0.8)
    r = Run(pl)
    r.frames(2.0)
    drop_t = r.t
    r.held = [False]  # the anchored end let go (LetGo or a scheduled release)
    events = r.frames(0.7)
    assert not any(isinstance(e, ReplayDrop) for e in events)  # the collapse first
    events = r.frames(0.2)
    (rep,) = [e for e in events if isinstance(e, ReplayDrop)]
    assert rep.t0 == pytest.approx(drop_t + 0.1 - REPLAY_LEAD)  # the frame it was seen
    assert rep.t1 == pytest.approx(drop_t + 0.1 + 0.8)
    assert r.a.drops == 1 and r.a.replays == 1
    assert r.frames(3.0) == []  # the replay shows: nothing else happens
    r.replay = False  # it ended by itself
    assert r.frames(0.1) == [Open(1)]  # its point made, the loop moves on


def test_a_drop_in_play_is_replayed_then_the_scene_is_put_back():
    r = Run()
    r.a.touch(r.now)
    r.frames(1.0)
    r.held = [False]
    events = r.frames(1.0)
    assert sum(isinstance(e, ReplayDrop) for e in events) == 1
    r.replay = False
    assert r.frames(0.1) == [PutBack()]


def test_a_touch_ends_a_replay_and_no_drop_without_a_held_end_let_go():
    r = Run()
    r.a.touch(r.now)
    r.held = [False]  # a scene whose anchored end is free from the start: no drop
    r.frames(0.1)
    r.held = [True]
    r.frames(0.5)
    r.held = [False]
    r.frames(1.5)
    assert r.replay and r.a.replaying
    assert r.a.touch(r.now) == [EndReplay()]
    assert not r.a.replaying


def test_a_reset_is_not_a_drop():
    r = Run()
    r.frames(1.0)
    r.t = 0.0  # the time went back (Reset, a new scene) while the end is let go
    r.held = [False]
    assert not any(isinstance(e, ReplayDrop) for e in r.frames(2.0))
    assert r.a.drops == 0


def test_replays_can_be_turned_off():
    r = Run(playlist(replay=False))
    r.frames(1.0)
    r.held = [False]
    assert not any(isinstance(e, ReplayDrop) for e in r.frames(3.0))
    assert r.a.drops == 1


def test_only_the_chord_quits():
    a = Attendant(playlist(), 0.0)
    assert a.key("ESCAPE", frozenset(), 1.0) == [Play()]  # a touch, nothing more
    assert a.key("F11", frozenset(), 1.0) == []
    assert a.key("Q", frozenset({"ctrl", "alt"}), 1.0) == []  # Shift missing
    assert a.key("Q", CHORD | {"super"}, 1.0) == []  # one more than the chord
    assert a.key("Q", CHORD, 1.0) == [Quit()]
    custom = Attendant(playlist(exit="super+ctrl+F12"), 0.0)
    assert custom.key("F12", frozenset({"ctrl", "super"}), 1.0) == [Quit()]


def _loader(bad):
    def load(pl, entry):
        if entry.name in bad:
            raise SceneError(entry.name + ".toml", "slinky.preset", "unknown value 'rubber'")
        return entry.name  # stands for the Scene
    return load


def test_a_scene_that_no_longer_loads_is_skipped_and_logged(caplog):
    pl = playlist()
    with caplog.at_level(logging.WARNING, logger="slinky3d.kiosk"):
        assert first_valid(pl, 1, _loader({"b"})) == (2, "c")
    assert "playlist entry 2 (b) skipped: b.toml: slinky.preset: unknown value" in caplog.text
    assert first_valid(pl, 2, _loader({"c"})) == (0, "a")  # round the list
    assert first_valid(pl, 0, _loader({"a", "b", "c"})) is None
    assert check_playlist(pl, _loader({"a"})) == 2


def test_a_playlist_with_no_scene_that_loads_is_one_error():
    pl = Playlist((Entry("x"), Entry("y")), path="p.toml")
    with pytest.raises(Exception, match=r"^p.toml: no scene of the playlist loads "
                                        r"\(the first: x.toml: slinky.preset"):
        check_playlist(pl, _loader({"x", "y"}))


@pytest.mark.gl
def test_kiosk_window_plays_survives_a_lost_context_and_quits_on_the_chord(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    env.pop("DISPLAY", None)
    env.pop("NOTIFY_SOCKET", None)
    p = subprocess.run([sys.executable, str(Path(__file__).with_name("headless_kiosk.py")),
                        str(tmp_path)], env=env, capture_output=True, text=True, timeout=300,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["first"] == 1  # the broken scene skipped ...
    assert "playlist entry 1 (broken.toml) skipped" in r["log"]  # ... and why, logged
    assert "unknown value 'rubber'" in r["log"]
    assert r["mode0"] == "attract" and r["caption_shown"]
    assert r["red0"] > 100  # the plastic Slinky drawn
    assert r["open_after_esc"] and not r["pictures"]  # Esc, close, P: nothing
    assert r["mode1"] == "play"
    assert r["rollbacks"] == 2 and "rolled back (hanging-plastic)" in r["log"]
    assert r["faults"] == 1 and r["error_cleared"] and "scene put back" in r["log"]
    assert r["gl_recoveries"] == 1 and r["renderer_new"]
    # drawn again after the loss (play mode's framing: the HUD's room, not attract's)
    assert r["red_before_loss"] > 100
    assert r["red1"] == pytest.approx(r["red_before_loss"], rel=0.2)
    assert r["gl_error"] == "GL_NO_ERROR"
    assert "GL objects recreated" in r["log"]
    assert not r["cursor_first_motion"] and r["cursor"] and r["notified_ready"]
    assert r["side"] and r["back"] == ["attract", False, 1, 1, 1]
    assert r["trims_within_the_period"] == 0 and r["trims_after_the_period"] == 1
    assert r["collected_after_opening"] == [1, 2] and r["frozen"]
    assert r["closed"] and r["exit_code"] == 0
    assert "exit chord" in r["log"]
