"""The app's window under synthetic input (pyglet headless on EGL: no display needed):
the mouse grabs, drags and releases an end, and every key does what keys.py says."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from slinky3d.viewer import keys

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gl


def drive(what, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    env.pop("DISPLAY", None)
    p = subprocess.run([sys.executable, str(Path(__file__).with_name("headless_app.py")), what,
                        str(tmp_path)], env=env, capture_output=True, text=True, timeout=300,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_mouse_grabs_drags_and_releases_an_end(tmp_path):
    r = drive("drag", tmp_path)
    n = r["hover"][1]
    assert r["hover"][0] == 0 and n > 100  # the bottom end of the steel Slinky is marked
    assert r["drag"] == "grab"
    assert r["log"][0] == "Grab" and r["log"][-1] == "Release"
    assert set(r["log"][1:-1]) == {"Move"}
    # the grabbed point follows the cursor: 40 frames of 3 pixels to the right
    trail = np.array([g for g, _ in r["trail"]]), np.array([p for _, p in r["trail"]])
    assert trail[0][-1, 0] - trail[0][0, 0] > 0.3  # the target moved right ...
    assert trail[1][-1, 0] - trail[1][0, 0] > 0.25  # ... and the point with it
    target, point = map(np.array, r["held"])
    assert np.linalg.norm(point - target) < 0.05  # held still, it settles on the target
    # off the window, the target stays finite, in the scene's box
    lo, hi = map(np.array, r["box"])
    far = np.array(r["far_target"])
    assert np.all(np.isfinite(far)) and np.all(far >= lo - 1e-12) and np.all(far <= hi + 1e-12)
    assert not r["grab_after_release"]
    # the logged commands, replayed offline, hold the point where the drag held it
    target_r, point_r = map(np.array, r["replayed"])
    assert np.allclose(target_r, target)
    assert np.linalg.norm(point_r - target_r) < 0.05
    assert r["gl_error"] == "GL_NO_ERROR"


def test_every_key_does_what_it_says(tmp_path):
    r = drive("keys", tmp_path)
    for b in keys.BINDINGS:
        for name in b.keys:
            tag = f"{b.action}:{name}"
            got = r.get(tag)
            if b.action in keys.DIRECTIONS:
                dx, dy = keys.DIRECTIONS[b.action]
                slow, fast = (f"DriveBase(slinky=0, velocity=({dx * v!r}, {dy * v!r}))"
                              for v in (keys.DRIVE_SPEED, keys.DRIVE_FAST))
                assert got == [slow, fast, slow, "DriveBase(slinky=0, velocity=(0.0, 0.0))"], tag
            elif b.action == "let_go":
                assert got == ["LetGo(slinky=0)", "TakeHold(slinky=0, point=0)"]
            elif b.action == "pause":
                assert got == ["TogglePause()"]
            elif b.action == "step":
                assert got == ["Step(n=1)"]
            elif b.action == "slower":
                assert got == ["TimeScale(scale=0.5)", 1]
            elif b.action == "faster":
                assert got == [f"TimeScale(scale={keys.TIME_SCALES[-2]!r})",
                               len(keys.TIME_SCALES) - 2]
            elif b.action == "reset":
                assert got == ["Reset()"]
            elif b.action == "scene":
                stem = r["scenes"][int(name[1:]) - 1]
                text = (ROOT / "scenes" / f"{stem}.toml").read_text(encoding="utf-8")
                assert got == [tomllib.loads(text)["title"], "Load"], tag
            elif b.action == "side_view":
                assert got == [True, True]  # side view, orthographic
            elif b.action in ("panel", "help", "fullscreen", "camera"):
                assert got == [True], tag
            elif b.action == "caption":
                assert got == [False, True], tag
            elif b.action == "replay":
                assert got == ["Pause()", True]
            elif b.action == "screenshot":
                assert got[0].startswith("screenshot saved to ") and got[0].endswith(".png")
            elif b.action in ("clip", "keep"):
                # the stand-in source logs no session (the clips themselves: test_clips)
                assert got == ["clips film the live solver only"], tag
            elif b.action == "overlay" and got[0] == "sound":
                # no audio device here: the click stays off and says why
                assert got[1:] == [False, "click on impacts unavailable: no audio device",
                                   False]
            elif b.action == "overlay":
                assert got[1] is True and got[3] is False, tag  # on, and off again
            elif b.action == "quit":
                assert r["closed"]
            else:
                pytest.fail(f"no check for {tag}")
    assert r["pictures"]
    assert r["notice"] == "preparing the physics (first run only)" and r["no_notice"] == ""
    assert r["set_overlay"] == ["front", False]
    load, g, mass_ratio, shown = r["apply"]
    assert load == "Load" and g == 1.62 and mass_ratio == pytest.approx(1.5) and shown
    message, g_back, same_shape = r["saved"]
    assert message.startswith("scene saved to ") and g_back == 1.62 and same_shape
