"""Drives the app's window headless (pyglet on EGL, no display) with synthetic input and
prints what happened as JSON; run by test_app.py in a subprocess (one GL context kind
per process). `python headless_app.py drag|keys OUT_DIR`."""

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyglet

pyglet.options["headless"] = True
pyglet.options["audio"] = ("silent",)  # no audio device, as on a server: the click says so

from pyglet.window import key, mouse  # noqa: E402

from slinky3d.runtime import commands  # noqa: E402
from slinky3d.runtime.simulation import Simulation  # noqa: E402
from slinky3d.scene.loader import load  # noqa: E402
from slinky3d.viewer import keys  # noqa: E402
from slinky3d.viewer.phenomena_overlays import OVERLAYS  # noqa: E402
from slinky3d.viewer.window import Viewer  # noqa: E402

SIZE = (480, 320)


def frames(v, n, wait=1 / 60):
    for _ in range(n):
        v.window.dispatch_event("on_draw")
        time.sleep(wait)


def end_pixel(v, k):
    """Window coordinates (pyglet's: y up) of end point k of Slinky 0."""
    sl = v._shown.slinkies[0]
    x, y = v.camera.project(np.r_[sl.ends[k], 0.0][None], *v._window_size())[0]
    return float(x), float(v.window.height - y)


def drag(out):
    sc = load("hanging-steel")
    v = Viewer(sc, sc.look, sc.camera, SIZE)
    v.window._enable_event_queue = False
    v._started = time.perf_counter()
    v.source.start()
    deadline = time.time() + 240
    while v.source.steps == 0 and time.time() < deadline:  # a cold cache: kernels compile
        frames(v, 1)
    frames(v, 5)
    w, n = v.window, v._shown.slinkies[0].N
    x, y = end_pixel(v, n)
    w.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frames(v, 1)
    res = {"hover": list(v.hover or ()), "start": v._shown.slinkies[0].ends[n].tolist()}
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    res["drag"] = v.drag
    trail = []
    for k in range(40):  # 2/3 s to the right, 3 pixels a frame
        w.dispatch_event("on_mouse_drag", x + 3 * k, y, 3, 0, mouse.LEFT, 0)
        frames(v, 1)
        sl = v._shown.slinkies[0]
        if sl.grab is not None:
            trail.append((sl.grab.tolist(), sl.grab_point.tolist()))
    frames(v, 30)  # hold still: the point settles on the target
    sl = v._shown.slinkies[0]
    res["held"] = [sl.grab.tolist(), sl.grab_point.tolist()]
    # off the window and far away: the target stays finite, in the box
    w.dispatch_event("on_mouse_drag", 1e7, -1e7, 1e7, -1e7, mouse.LEFT, 0)
    frames(v, 3)
    res["far_target"] = v._shown.slinkies[0].grab.tolist()
    w.dispatch_event("on_mouse_release", 1e7, -1e7, mouse.LEFT, 0)
    frames(v, 5)
    res["grab_after_release"] = v._shown.slinkies[0].grab is not None
    v.source.stop()
    log = v.source.log
    res["log"] = [type(c).__name__ for _, c in log]
    # the logged run, replayed offline, holds the point where the drag held it
    far_step = [s for s, c in log if isinstance(c, commands.Move)][-1]  # the off-window one
    sim = commands.replay(sc, log, far_step - 1)
    g = sim.slinkies[0]
    res["replayed"] = [g.target.tolist(), g.ends()[n].tolist()]
    res["trail"] = trail
    res["box"] = [b.tolist() for b in v.box]
    res["gl_error"] = v.ctx.error
    print(json.dumps(res))


class Recorder:
    """A source that records what it is sent and never moves."""

    def __init__(self, snap):
        self.snap, self.sent, self.paused, self.steps = snap, [], False, 1
        self.history = History(snap)

    def start(self):
        pass

    def stop(self):
        pass

    def send(self, cmd):
        self.sent.append(cmd)
        if isinstance(cmd, commands.Load):
            self.snap = Simulation(cmd.scene).snapshot()

    def latest_pair(self):
        return self.snap, self.snap


class History:
    def __init__(self, snap):
        self.snap = snap

    def span(self):
        return 0.0, 10.0

    def at(self, t):
        return replace(self.snap, t=t)

    def energy_rows(self):
        return np.zeros((0, 6))


def keys_(out):
    sc = load("hanging-plastic")
    src = Recorder(Simulation(sc).snapshot())
    v = Viewer(sc, sc.look, sc.camera, SIZE, source=src)
    v.pictures = lambda: Path(out) / "pictures"
    w = v.window
    w._enable_event_queue = False
    frames(v, 2, 0)
    res = {}

    def press(name, mods=0, release=False):
        sym = getattr(key, name)
        before = len(src.sent)
        w.dispatch_event("on_key_press", sym, mods)
        if release:
            w.dispatch_event("on_key_release", sym, mods)
        frames(v, 1, 0)
        return [repr(c) for c in src.sent[before:]]

    for b in keys.BINDINGS:
        for name in b.keys:
            tag = f"{b.action}:{name}"
            if b.action in keys.DIRECTIONS:
                # press, Shift down (fast), Shift up (slow again), release (stop)
                res[tag] = press(name) + press("LSHIFT", key.MOD_SHIFT) + \
                    [repr(c) for c in _release(w, src, "LSHIFT")] + \
                    [repr(c) for c in _release(w, src, name)]
            elif b.action == "let_go":
                first = press(name)
                src.snap = replace(src.snap, slinkies=tuple(
                    replace(sl, anchor_held=False) for sl in src.snap.slinkies))
                frames(v, 1, 0)
                res[tag] = first + press(name)
            elif b.action in ("slower", "faster"):
                v._set_scale(0 if b.action == "slower" else len(keys.TIME_SCALES) - 1)
                res[tag] = press(name) + [v.scale_index]
            elif b.action == "scene":
                sent = [c.split("(")[0] for c in press(name)]
                res[tag] = [v.scene.title, *sent]
            elif b.action == "side_view":
                res[tag] = press(name) + [v.side_view, v.camera.ortho]
                press(name)
            elif b.action in ("panel", "help"):
                attr = "show_" + b.action
                res[tag] = press(name) + [getattr(v, attr)]
                press(name)
            elif b.action == "caption":  # up since the scene opened: hide, show
                shown = v.overlay.hud.caption.visible
                res[tag] = press(name) + [shown(v.scene)]
                res[tag] += press(name) + [shown(v.scene)]
            elif b.action == "replay":
                res[tag] = press(name) + [v.replay is not None]
                press(name)
            elif b.action in ("screenshot", "clip", "keep"):
                res[tag] = press(name) + [v.message]
            elif b.action == "fullscreen":
                was = w.fullscreen
                res[tag] = press(name) + [w.fullscreen != was]
                press(name)
            elif b.action == "camera":
                d = v.camera.distance
                w.dispatch_event("on_mouse_scroll", 10, 10, 0, 3)
                res[tag] = press(name) + [abs(v.camera.distance - d) < 1e-12]
            elif b.action == "overlay":
                on = OVERLAYS[b.keys.index(name)][0]
                res[tag] = press(name) + [on, on in v.overlays, v.message]
                press(name)
                res[tag].append(on in v.overlays)
            elif b.action == "quit":
                continue  # last, below
            else:
                res[tag] = press(name)
    # the first run's notice: up while the solver has taken no step yet
    src.steps, v._started = 0, time.perf_counter() - 1.0
    res["notice"] = v.overlay_view(v._shown).notice
    src.steps = 1
    res["no_notice"] = v.overlay_view(v._shown).notice
    # the panel's overlay toggle reaches the overlays, and the view shows them on
    from slinky3d.viewer.phenomena_overlays import SetOverlay

    v.do_action(SetOverlay("front", True))
    res["set_overlay"] = sorted(v.overlay_view(v._shown).phenomena.on)
    v.do_action(SetOverlay("front", False))
    res["set_overlay"].append("front" in v.overlays)
    # the panel: a change restarts with the new parameter; a save loads back the same
    from slinky3d.scene import edit
    from slinky3d.viewer.panel import ApplyParams, SaveScene

    vals = edit.panel_values(v.scene)
    v.do_action(ApplyParams(replace(vals, g=edit.PLANETS["Moon"], mass=1.5 * vals.mass)))
    cmd = src.sent[-1]
    res["apply"] = [type(cmd).__name__, cmd.scene.slinkies[0].params.g,
                    cmd.scene.slinkies[0].params.mass / vals.mass, v.scene is cmd.scene]
    v.do_action(SaveScene(str(Path(out) / "saved.toml")))
    back = load(Path(out) / "saved.toml")
    res["saved"] = [v.message, back.slinkies[0].params.g,
                    bool(np.array_equal(back.slinkies[0].q0, v.scene.slinkies[0].q0))]
    res["scenes"] = sorted(p.stem for p in __import__("slinky3d.scene.loader",
                                                      fromlist=["shipped"]).shipped())
    res["pictures"] = sorted(p.name for p in (Path(out) / "pictures").glob("*.png"))
    w.dispatch_event("on_key_press", key.ESCAPE, 0)
    res["closed"] = bool(w.has_exit) or getattr(w, "_context", None) is None
    print(json.dumps(res))


def _release(w, src, name):
    before = len(src.sent)
    w.dispatch_event("on_key_release", getattr(key, name), 0)
    return src.sent[before:]


if __name__ == "__main__":
    {"drag": drag, "keys": keys_}[sys.argv[1]](sys.argv[2])
