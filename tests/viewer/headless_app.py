"""Drives the app's window headless (pyglet on EGL, no display) with synthetic input and
prints what happened as JSON; run by test_app.py in a subprocess (one GL context kind
per process). `python headless_app.py drag|keys|live OUT_DIR`."""

import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyglet

pyglet.options["headless"] = True
pyglet.options["audio"] = ("silent",)  # no audio device, as on a server: the click says so

from fakesource import StillSource  # noqa: E402
from pyglet.window import key, mouse  # noqa: E402

from slinky3d.model import chain  # noqa: E402
from slinky3d.runtime import commands  # noqa: E402
from slinky3d.scene.loader import load  # noqa: E402
from slinky3d.viewer.app import instant_replay, keys, window  # noqa: E402
from slinky3d.viewer.app.window import Viewer  # noqa: E402
from slinky3d.viewer.camera import corners  # noqa: E402
from slinky3d.viewer.helix import bounds  # noqa: E402
from slinky3d.viewer.overlay.panel import OVERLAYS  # noqa: E402

SIZE = (480, 320)


def frames(v, n, wait=1 / 60):
    for _ in range(n):
        v.window.dispatch_event("on_draw")
        time.sleep(wait)


def end_pixel(v, k):
    """Window coordinates (pyglet's: y up) of end point k of Slinky 0."""
    sl = v.shown.slinkies[0]
    x, y = v.camera.project(np.r_[sl.ends[k], 0.0][None], *v.controls.window_size())[0]
    return float(x), float(v.window.height - y)


def live_viewer(sc):
    """A window on its own solver, started and stepping (a cold cache compiles first)."""
    v = Viewer(sc, sc.look, sc.camera, SIZE)
    v.window._enable_event_queue = False
    v.views.started = time.perf_counter()
    v.source.start()
    deadline = time.time() + 240
    while v.source.steps == 0 and time.time() < deadline:
        frames(v, 1)
    frames(v, 5)
    return v


def drag(out):
    sc = load("hanging-steel")
    v = live_viewer(sc)
    w, n = v.window, v.shown.slinkies[0].N
    x, y = end_pixel(v, n)
    w.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frames(v, 1)
    res = {"hover": list(v.controls.hover or ()), "start": v.shown.slinkies[0].ends[n].tolist()}
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    res["drag"] = v.controls.drag
    trail = []
    for k in range(40):  # 2/3 s to the right, 3 pixels a frame
        w.dispatch_event("on_mouse_drag", x + 3 * k, y, 3, 0, mouse.LEFT, 0)
        frames(v, 1)
        sl = v.shown.slinkies[0]
        if sl.grab is not None:
            trail.append((sl.grab.tolist(), sl.grab_point.tolist()))
    frames(v, 30)  # hold still: the point settles on the target
    sl = v.shown.slinkies[0]
    res["held"] = [sl.grab.tolist(), sl.grab_point.tolist()]
    # off the window and far away: the target stays finite, in the box
    w.dispatch_event("on_mouse_drag", 1e7, -1e7, 1e7, -1e7, mouse.LEFT, 0)
    frames(v, 3)
    res["far_target"] = v.shown.slinkies[0].grab.tolist()
    w.dispatch_event("on_mouse_release", 1e7, -1e7, mouse.LEFT, 0)
    frames(v, 5)
    res["grab_after_release"] = v.shown.slinkies[0].grab is not None
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


class Clock:
    """The window's wall clock (time.perf_counter) running `ahead` of the real one, so
    that a replay 8 times slower than life need not be waited for."""

    def __init__(self):
        self.ahead = 0.0

    def perf_counter(self):
        return time.perf_counter() + self.ahead

    def __getattr__(self, name):
        return getattr(time, name)


def overlay_text(v, n):
    """The strings the overlay (HUD, badge, ...) writes over n frames (>= REFRESH of
    wall time, so that the cached overlay is built again)."""
    from imgui_bundle import imgui

    seen = []
    text, coloured = imgui.text, imgui.text_colored

    def text_(s, *a):
        seen.append(s)
        return text(s, *a)

    def coloured_(c, s, *a):
        seen.append(s)
        return coloured(c, s, *a)

    imgui.text, imgui.text_colored = text_, coloured_
    try:
        frames(v, n)
    finally:
        imgui.text, imgui.text_colored = text, coloured
    return seen


def com_velocity(s):
    """The centre of mass velocity of a solver's Slinky, world m/s (its bars weigh alike)."""
    return s._world(chain.centre_velocities(s.q, s.qd, s.p.R).mean(axis=0)).tolist()


def live(out):
    """The steel Slinky played live: the instant replay (after more than its 5 s of
    history), a throw (the top taken by the mouse, the hand let go, a fast drag to the
    right, let go), then a divergence-guard roll-back."""
    clock = Clock()
    window.time = instant_replay.time = clock
    sc = load("hanging-steel")
    v = Viewer(sc, sc.look, sc.camera, SIZE)
    w = v.window
    w._enable_event_queue = False
    v.views.started = time.perf_counter()
    src = v.source
    src.start()
    deadline = time.time() + 240
    while src.steps == 0 and time.time() < deadline:
        frames(v, 1)
    frames(v, 5)
    res = {"h": sc.dt}

    def press(name):
        w.dispatch_event("on_key_press", getattr(key, name), 0)
        w.dispatch_event("on_key_release", getattr(key, name), 0)

    # -- the instant replay; the history filled flat out (hanging at rest, it is cheap)
    v.send(commands.Step(round(6.0 / sc.dt)))
    res["drained"] = [src.drain(60)]
    v.send(commands.Resume())
    frames(v, 3)
    res["drained"].append(src.drain())
    span = src.history.span()
    press("I")
    rep = v.instant_replay.replay
    res["drained"].append(src.drain())
    out_ = {"t0": rep.t0, "t1": rep.t1, "span": list(span), "wall0": rep.wall0,
            "paused": src.paused}
    samples = []  # (wall clock of the frame, simulated time shown, replay texts)
    for skip in (0.0, 0.5, 4.0, 8.0, 16.0):
        clock.ahead += skip
        text = overlay_text(v, 1)
        samples.append((v.views.frame_walls[-1], v.shown.t,
                        [t for t in text if t.startswith("replay")]))
    out_["samples"] = samples
    clock.ahead += 8 * (rep.t1 - rep.t0)  # past its end: live play again
    frames(v, 1)
    out_["ended"] = v.instant_replay.replay is None
    res["drained"].append(src.drain())
    out_["paused_after"] = src.paused
    steps, t = src.steps, v.shown.t
    text = overlay_text(v, 15)
    out_["badge_after"] = [t for t in text if t.startswith("replay")]
    out_["steps_after"] = src.steps - steps
    out_["t_after"] = [t, v.shown.t]
    res["replay"] = out_
    # -- the throw (whatever the replay left: each part is checked on its own), on the
    # step grid: the solver paused and stepped a fixed simulated time after each mouse
    # event, so that the flick is as fast (2 m/s) on a loaded machine as on an idle one.
    # Left to itself, the real-time thread takes as many steps between two events as
    # the machine allows: a flick of 3 m/s or more lags the soft grab, and one that
    # swings the bottom within a centimetre of the floor is stepped by the world
    # scheme, whose first-order error (1.5 %) is not the free flight's checked here.
    v.send(commands.Pause())
    res["drained"].append(src.drain())

    def frame_steps(seconds):
        v.send(commands.Step(round(seconds / sc.dt)))
        res["drained"].append(src.drain(60))
        frames(v, 1)

    x, y = end_pixel(v, 0)
    w.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frames(v, 1)
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    press("L")
    frame_steps(1.0)  # hanging from the mouse
    for k in range(1, 9):
        w.dispatch_event("on_mouse_drag", x + 20 * k, y, 20, 0, mouse.LEFT, 0)
        frames(v, 1, 0)  # the drag's Move goes with the next frame (Controls.flush_drag)
        frame_steps(1 / 24)
    w.dispatch_event("on_mouse_release", x + 20 * k, y, mouse.LEFT, 0)
    frame_steps(5 / 60)
    log = src.log
    names = [type(c).__name__ for _, c in log]
    grab = names.index("Grab")
    r = names.index("Release")
    res["throw_log"] = [n for n in names[grab:] if n != "Step"]
    res["moves"] = [(s, list(c.target)) for s, c in log[grab:] if isinstance(c, commands.Move)]
    # the logged run, offline (bit-identical to the thread's): the centre of mass's
    # velocity just before the release, and at each step of the first 0.05 s after it
    step = log[r][0]
    before = commands.replay(sc, log[:r], step)
    after = commands.replay(sc, log, step)
    s = after.slinkies[0]
    res["mass"], res["g"] = s.p.m * s.p.N, s.p.g
    res["free_after"] = bool(s.free and s.grabbed is None and not s.far_held(s.t))
    res["v_before"] = com_velocity(before.slinkies[0])
    vs = [com_velocity(s)]
    for _ in range(round(0.05 / sc.dt)):
        after.step(1)
        vs.append(com_velocity(s))
    res["v_after"] = vs
    res["rollbacks_after_throw"] = after.rollbacks
    # -- a divergence-guard roll-back: the state poisoned while paused, then played on
    v.send(commands.Pause())
    res["drained"].append(src.drain())
    steps, drawn, t_poked = src.steps, v.frames, src.sim.t
    src.sim.slinkies[0].qd[10] = math.nan
    v.send(commands.Resume())
    frames(v, 10)
    text = overlay_text(v, 10)
    res["rollback"] = {"rollbacks": v.shown.rollbacks, "status": v.shown.status,
                       "hud": [t for t in text if "rolled back" in t],
                       "steps": src.steps - steps, "frames": v.frames - drawn,
                       "t_poked": t_poked, "t_shown": v.shown.t, "error": src.error,
                       "paused": src.paused,
                       "finite": bool(np.all(np.isfinite(src.sim.slinkies[0].qd)))}
    # -- the drop, followed: the scene put back, let go (L), 2 s stepped frame by frame;
    # where the window shows the Slinky's box, as fractions of its width and height
    press("R")
    v.send(commands.Pause())
    res["drained"].append(src.drain())
    frame_steps(0.1)
    press("L")
    boxes = []
    for _ in range(60):
        frame_steps(1 / 30)
        px = v.camera.project(corners(*bounds(v.shown, pad=0.0)), *v.controls.window_size())
        boxes.append([*(px.min(axis=0) / SIZE), *(px.max(axis=0) / SIZE)])
    res["drop"] = {"boxes": boxes, "low": float(bounds(v.shown, pad=0.0)[0][1]),
                   "floor": v.stage.floor_y, "held": v.camera_held}
    src.stop()
    res["gl_error"] = v.ctx.error
    print(json.dumps(res))


def keys_(out):
    sc = load("hanging-plastic")
    src = StillSource(sc)
    v = Viewer(sc, sc.look, sc.camera, SIZE, source=src)
    v.pictures = lambda: Path(out) / "pictures"
    w = v.window
    w._enable_event_queue = False
    frames(v, 2, 0)
    res = {"actions": sorted(v.actions)}

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
            elif b.action in keys.TWISTS:  # the planar solver: nothing sent, one line said
                v.ui.message = ""
                res[tag] = press(name) + [repr(c) for c in _release(w, src, name)] + \
                    [v.ui.message]
            elif b.action == "let_go":
                first = press(name)
                src.snap = replace(src.snap, slinkies=tuple(
                    replace(sl, anchor_held=False) for sl in src.snap.slinkies))
                frames(v, 1, 0)
                res[tag] = first + press(name)
            elif b.action in ("slower", "faster"):
                v.set_scale(0 if b.action == "slower" else len(keys.TIME_SCALES) - 1)
                res[tag] = press(name) + [v.ui.scale_index]
            elif b.action == "scene":
                sent = [c.split("(")[0] for c in press(name)]
                res[tag] = [v.scene.title, *sent]
            elif b.action == "side_view":
                res[tag] = press(name) + [v.ui.side_view, v.camera.ortho]
                press(name)
            elif b.action == "top_view":  # the corner shown (a frame around it), hidden
                from slinky3d.viewer.gl import top_view

                x, y, cw, ch = top_view.corner_rect(tuple(w.get_framebuffer_size()))
                shown = v.overlay.hud.caption.visible(v.scene)
                if shown:  # over the corner in this small window
                    v.toggle_caption()
                got = press(name) + [v.ui.top_view]
                after = v.grab_frame()
                hgt = after.shape[0]
                edge = after[hgt - 1 - (y + ch // 2), x + cw]  # the frame's right side
                want = np.round(255 * np.array(top_view.FRAME_COLOUR[:3]))
                # the corner holds the top view's own picture (its right part: the HUD
                # lies over the rest in this small window)
                corner = after[hgt - y - ch:hgt - y, x + cw - 32:x + cw].astype(int)
                own = v.top_view.renderer.read()[:, cw - 32:].astype(int)
                diff = np.abs(corner - own).max()
                got += [bool(np.all(np.abs(edge - want) <= 8)), bool(diff <= 8)]
                res[tag] = got + press(name) + [v.ui.top_view]
                if shown:
                    v.toggle_caption()
            elif b.action in ("panel", "help"):
                attr = "show_" + b.action
                res[tag] = press(name) + [getattr(v.ui, attr)]
                press(name)
            elif b.action == "caption":  # up since the scene opened: hide, show
                shown = v.overlay.hud.caption.visible
                res[tag] = press(name) + [shown(v.scene)]
                res[tag] += press(name) + [shown(v.scene)]
            elif b.action == "replay":
                res[tag] = press(name) + [v.instant_replay.replay is not None]
                press(name)
            elif b.action == "screenshot":
                # the window at half scale (dynamic resolution); the picture kept full
                v.resolution.scale, scales, render = 0.5, [], v.renderer.render

                def logged(*a, scale=1.0, scales=scales, render=render, **k):
                    scales.append(scale)
                    render(*a, scale=scale, **k)

                v.renderer.render = logged
                res[tag] = press(name) + [v.ui.message]
                res["hud_scale"] = v.overlay_view(v.shown).render_scale
                v.renderer.render, v.resolution.scale = render, 1.0
                res["screenshot_scales"] = scales
            elif b.action in ("clip", "keep"):
                res[tag] = press(name) + [v.ui.message]
            elif b.action == "fullscreen":
                was = w.fullscreen
                res[tag] = press(name) + [w.fullscreen != was]
                press(name)
            elif b.action == "camera":
                # a zoom takes the camera; C gives it back to the director, which frames
                # afresh (where the overlay lets it: not the camera before the zoom,
                # which may have been gliding to a new room)
                w.dispatch_event("on_mouse_scroll", 10, 10, 0, 3)
                zoomed = v.camera.distance
                got = press(name)
                framed = v.director.start(v.shown).distance
                res[tag] = got + [abs(v.camera.distance - framed) < 1e-12
                                  and abs(zoomed - framed) > 1e-6 and not v.camera_held]
            elif b.action == "camera_mode":  # through every mode and back
                res[tag] = []
                for _ in range(3):
                    press(name)
                    res[tag].append([v.director.mode, v.ui.message])
                # a drag takes the camera from the director; C gives it back
                w.dispatch_event("on_mouse_drag", 10, 10, 30, 0, mouse.LEFT, 0)
                held = v.camera_held
                press("C")
                res[tag].append([held, v.camera_held])
            elif b.action == "overlay":
                on = OVERLAYS[b.keys.index(name)][0]
                res[tag] = press(name) + [on, on in v.phenomena.on, v.ui.message]
                press(name)
                res[tag].append(on in v.phenomena.on)
            elif b.action == "quit":
                continue  # last, below
            else:
                res[tag] = press(name)
    # the first run's notice: up while the solver has taken no step yet
    src.steps, v.views.started = 0, time.perf_counter() - 1.0
    view = v.overlay_view(v.shown)
    res["notice"], res["preparing"] = view.notice, [view.preparing]
    src.steps = 1
    view = v.overlay_view(v.shown)
    res["no_notice"] = view.notice
    res["preparing"].append(view.preparing)
    # the panel's overlay toggle reaches the overlays, and the view shows them on
    from slinky3d.viewer.overlay.panel import SetOverlay

    v.do_action(SetOverlay("front", True))
    res["set_overlay"] = sorted(v.overlay_view(v.shown).phenomena.on)
    v.do_action(SetOverlay("front", False))
    res["set_overlay"].append("front" in v.phenomena.on)
    # the panel: a change restarts with the new parameter; a save loads back the same
    from slinky3d.scene import edit
    from slinky3d.viewer.overlay.panel import ApplyParams, SaveScene

    vals = edit.panel_values(v.scene)
    v.do_action(ApplyParams(replace(vals, g=edit.PLANETS["Moon"], mass=1.5 * vals.mass)))
    cmd = src.sent[-1]
    res["apply"] = [type(cmd).__name__, cmd.scene.slinkies[0].params.g,
                    cmd.scene.slinkies[0].params.mass / vals.mass, v.scene is cmd.scene]
    v.do_action(SaveScene(str(Path(out) / "saved.toml")))
    back = load(Path(out) / "saved.toml")
    res["saved"] = [v.ui.message, back.slinkies[0].params.g,
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


def hashes(out):
    """Every shipped scene played HASH_SECONDS in the window, drawn every frame with every
    phenomenon shown, the solver stepped a fixed number of steps a frame: its state hash
    (the test holds it against the solver's alone)."""
    from slinky3d.runtime.thread import SimThread
    from slinky3d.scene.loader import shipped

    res = {}
    paths = sorted(shipped())
    first = load(paths[0])
    src = SimThread(first, realtime=False)  # moves only by Step: no clock
    v = Viewer(first, first.look, first.camera, SIZE, source=src)
    v.window._enable_event_queue = False
    for name, _ in OVERLAYS:
        if name != "sound":
            v.phenomena.set(name, True)
    src.start()
    for path in paths:
        sc = load(path)
        v.open_scene(sc)  # the solver loads it: a fresh simulation of the scene
        assert src.drain(300)
        n = round(HASH_SECONDS / src.sim.h)
        per = max(1, n // HASH_FRAMES)
        done = 0
        while done < n:
            k = min(per, n - done)
            v.send(commands.Step(k))
            assert src.drain(300)
            done += k
            frames(v, 1, 0)
        res[path.stem] = [done, src.sim.state_hash()]
    v.quit()
    print(json.dumps(res))


HASH_SECONDS = 2.0
HASH_FRAMES = 20


def caption(out):
    """hanging-steel in a 960x540 window with its caption up: hanging, then let go (L)
    and landed on the floor. Per frame: the share of the Slinky's pixels (the 3D frame
    less the same frame without helices) under the caption's box and the HUD's; the
    window as shown at the start and at the end (PNGs in OUT_DIR)."""
    from PIL import Image

    from slinky3d.runtime.thread import SimThread

    sc = load("hanging-steel")
    src = SimThread(sc, realtime=False)  # moves only by Step: no clock
    v = Viewer(sc, sc.look, sc.camera, (960, 540), source=src)
    w = v.window
    w._enable_event_queue = False
    src.start()
    res = {"caption": [], "hud": [], "t": []}

    def measure():
        frames(v, 1, 0)
        v.overlay.frame(v.overlay_view(v.shown))  # the caption's box for this snapshot
        r = v.renderer
        r.render(v.shown, v.look, v.camera, v.stage)
        with_ = r.read().astype(int)
        r.render(v.shown, v.look, v.camera, v.stage, helices=False)
        mask = np.abs(with_ - r.read()).max(axis=2) > 24
        for name, rect in (("caption", v.overlay.hud.caption.rect),
                           ("hud", v.overlay.hud.rect)):
            x0, y0, x1, y1 = (int(round(c)) for c in rect)
            hidden = mask[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)].sum()
            res[name].append(float(hidden / max(mask.sum(), 1)))
        res["t"].append(v.shown.t)
        res.setdefault("shown", []).append(v.overlay.hud.caption.rect[2] > 0)

    for _ in range(3):
        v.send(commands.Step(5))
        assert src.drain(300)
        measure()
    Image.fromarray(v.grab_frame()).save(Path(out) / "hanging.png")
    w.dispatch_event("on_key_press", key.L, 0)
    w.dispatch_event("on_key_release", key.L, 0)
    for _ in range(12):  # 1.2 s: the fall and the landing
        v.send(commands.Step(round(0.1 / src.sim.h)))
        assert src.drain(300)
        measure()
    Image.fromarray(v.grab_frame()).save(Path(out) / "landed.png")
    res["free"] = not v.shown.slinkies[0].anchor_held
    res["bottom"] = float(v.shown.slinkies[0].ends[:, 1].min())
    v.quit()
    print(json.dumps(res))


def hand3d(out):
    """The hanging steel Slinky on the 3D solver: the camera turned a quarter turn, the
    bottom end dragged sideways on the screen; then the held top driven by E and Q."""
    from slinky3d.engines import THREE_D
    from slinky3d.scene.world import World
    from slinky3d.viewer.helix import ends3

    # no floor: the 3D solver has no world contact yet
    sc = replace(load("hanging-steel"), solver=THREE_D, world=World())
    v = live_viewer(sc)
    w, n = v.window, v.shown.slinkies[0].N
    v.camera = replace(v.camera, yaw=v.camera.yaw + math.pi / 2)  # a quarter turn
    v.camera_held = True
    end = ends3(v.shown.slinkies[0])[n]
    x, y = v.camera.project(end[None], *v.controls.window_size())[0]
    y = w.height - y  # pyglet's y is up
    w.dispatch_event("on_mouse_motion", x, y, 0, 0)
    frames(v, 1)
    res = {"hover": list(v.controls.hover or ()), "start": end.tolist()}
    w.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    for k in range(1, 31):  # half a second to the right on the screen, 3 pixels a frame
        w.dispatch_event("on_mouse_drag", x + 3 * k, y, 3, 0, mouse.LEFT, 0)
        frames(v, 1)
    res["target"] = v.shown.slinkies[0].grab.tolist()
    frames(v, 20)
    res["point"] = ends3(v.shown.slinkies[0])[n].tolist()
    # Shift+drag up the screen: away from the camera
    before = np.array(v.shown.slinkies[0].grab)
    for k in range(1, 11):
        w.dispatch_event("on_mouse_drag", x + 90, y + 3 * k, 0, 3, mouse.LEFT, key.MOD_SHIFT)
        frames(v, 1)
    res["shifted"] = (np.array(v.shown.slinkies[0].grab) - before).tolist()
    res["back"] = v.camera.basis()[2].tolist()
    w.dispatch_event("on_mouse_release", x + 90, y + 30, mouse.LEFT, 0)
    frames(v, 2)
    moves = [c.target for _, c in v.source.log if isinstance(c, commands.Move)]
    res["moves"] = [list(t) for t in moves]
    # E raises the held top, Q lowers it, W takes it away from the viewer
    drives = {}
    for name in ("E", "Q", "W"):
        before = len(v.source.log)
        w.dispatch_event("on_key_press", getattr(key, name), 0)
        frames(v, 1)
        w.dispatch_event("on_key_release", getattr(key, name), 0)
        frames(v, 1)
        drives[name] = [list(c.velocity) for _, c in v.source.log[before:]
                        if isinstance(c, commands.DriveBase)]
    res["drives"], res["yaw"] = drives, v.camera.yaw
    # [ twists the held top anticlockwise seen from above, Shift faster, ] the other way
    twists = {}
    for name, mods in (("BRACKETLEFT", 0), ("BRACKETLEFT", key.MOD_SHIFT),
                       ("BRACKETRIGHT", 0)):
        before = len(v.source.log)
        w.dispatch_event("on_key_press", getattr(key, name), mods)
        frames(v, 1)
        w.dispatch_event("on_key_release", getattr(key, name), mods)
        frames(v, 1)
        twists[f"{name}:{mods}"] = [c.rate for _, c in v.source.log[before:]
                                    if isinstance(c, commands.TwistBase)]
    res["twists"] = twists
    v.quit()
    print(json.dumps(res))


if __name__ == "__main__":
    {"drag": drag, "keys": keys_, "live": live, "hashes": hashes,
     "caption": caption, "hand3d": hand3d}[sys.argv[1]](sys.argv[2])
