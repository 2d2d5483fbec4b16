"""Drives the kiosk's window headless (pyglet on EGL, no display) and prints what
happened as JSON; run by test_kiosk.py in a subprocess (one GL context kind per
process). `python headless_kiosk.py OUT_DIR`."""

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import pyglet

pyglet.options["headless"] = True

from pyglet.window import key, mouse  # noqa: E402

from slinky3d.viewer.kiosk.exhibit import Kiosk, setup_logging  # noqa: E402
from slinky3d.viewer.kiosk.playlist import load_playlist  # noqa: E402
from slinky3d.viewer.kiosk.state import ATTRACT, PLAY, first_valid  # noqa: E402

SIZE = (480, 320)


def frames(k, n):
    for _ in range(n):
        k.app.window.dispatch_event("on_draw")


def red_pixels(k):
    """Pixels of the plastic Slinky's red in the renderer's own frame."""
    k.app._render(k.app.shown, None)
    img = k.app.renderer.read()
    return int(((img[..., 0] > img[..., 2] + 60) & (img[..., 0] > 120)).sum())


def main(out):
    out = Path(out)
    log_path = setup_logging(out / "logs")
    (out / "broken.toml").write_text("title = 'broken'\n[slinky]\npreset = 'rubber'\n")
    (out / "playlist.toml").write_text(
        'idle = 30\nsway = 10\nscenes = ["broken.toml", '
        '{ name = "hanging-plastic", caption = "Hello museum" }]\n')
    playlist = load_playlist(out / "playlist.toml")
    first = first_valid(playlist, 0)
    k = Kiosk(playlist, first, SIZE, fullscreen=False)
    k.app.pictures = lambda: out / "pictures"
    w = k.app.window
    w._enable_event_queue = False
    k.app.views.started = time.perf_counter()
    k.app.source.start()
    res = {"first": first[0]}
    frames(k, 3)
    res["mode0"] = k.attendant.mode
    res["caption_builds"] = k.placard.builds
    res["caption_shown"] = k.placard.shown
    res["red0"] = red_pixels(k)
    # Esc, F11, P and the window's close button: nothing but a touch
    for name in ("ESCAPE", "F11", "P"):
        w.dispatch_event("on_key_press", getattr(key, name), 0)
        frames(k, 1)
    w.dispatch_event("on_close")
    frames(k, 1)
    res["open_after_esc"] = w.context is not None and not w.has_exit
    res["fullscreen"] = bool(w.fullscreen)
    res["mode1"] = k.attendant.mode
    res["pictures"] = (out / "pictures").exists()
    # a roll-back (the divergence guard's) is logged; a solver fault puts the scene back
    k.app.shown = replace(k.app.shown, rollbacks=2,
                          status="solver diverged at t = 1 s: rolled back")
    frames(k, 1)
    k.app.source.error = "solver raised at step 7: FloatingPointError: overflow"
    frames(k, 1)
    res["rollbacks"], res["faults"] = k.rollbacks, k.solver_faults
    k.app.source.drain()
    res["error_cleared"] = k.app.source.error == ""  # the Reset the kiosk sent
    frames(k, 1)
    # a lost GL context: the next frame raises, the objects are made again, play goes on
    old = k.app.renderer
    res["red_before_loss"] = red_pixels(k)
    k.simulate_context_loss()
    frames(k, 3)
    res["gl_recoveries"] = k.gl_recoveries
    res["renderer_new"] = k.app.renderer is not old
    res["red1"] = red_pixels(k)
    res["gl_error"] = k.app.ctx.error
    # the pointer shows the cursor; the chord quits
    w.dispatch_event("on_mouse_motion", 10, 10, 1, 1)
    res["cursor_first_motion"] = k.attendant.cursor_visible  # (the window opening)
    w.dispatch_event("on_mouse_motion", 30, 10, 20, 0)
    res["cursor"] = k.attendant.cursor_visible
    w.dispatch_event("on_mouse_press", 5, 5, mouse.LEFT, 0)
    w.dispatch_event("on_mouse_release", 5, 5, mouse.LEFT, 0)
    frames(k, 2)
    # the side view on, then the idle time: the loop comes back, in 3D, on the next
    # entry that loads (the broken one skipped again)
    w.dispatch_event("on_key_press", key.TAB, 0)
    frames(k, 1)
    res["side"] = k.app.ui.side_view
    k.attendant.last_input -= 1000.0
    frames(k, 2)
    res["back"] = [k.attendant.mode, k.app.ui.side_view, k.attendant.index, k.skipped,
                   k.entries_opened]
    res["frames"] = k.app.frames
    # freed memory goes back to the OS every few seconds of running, not every frame
    import slinky3d.runtime.memory as memory_module
    trims = []
    memory_module.release_free_memory = lambda: trims.append(1) or True
    k.upkeep.collect_at = float("inf")  # the scene opened above: its collection not yet due
    frames(k, 2)
    res["trims_within_the_period"] = len(trims)
    k.upkeep.trimmed_at -= memory_module.TRIM_EVERY + 1.0
    frames(k, 3)
    res["trims_after_the_period"] = len(trims)
    # a second after a scene is opened, the garbage is collected and the memory trimmed
    collections = k.upkeep.collections
    k.upkeep.collect_at = time.perf_counter() - 0.1
    frames(k, 2)
    res["collected_after_opening"] = [k.upkeep.collections - collections, len(trims)]
    import gc
    res["frozen"] = gc.get_freeze_count() > 0  # the first collection froze the survivors
    res["notified_ready"] = k.notifier.ready_sent
    w.dispatch_event("on_key_press", key.Q, key.MOD_CTRL | key.MOD_ALT | key.MOD_SHIFT)
    res["closed"] = w.context is None or bool(w.has_exit)
    res["exit_code"] = k.exit_code
    k.app.source.stop()
    res["log"] = log_path.read_text()
    res["modes"] = [ATTRACT, PLAY]
    print(json.dumps(res))


def caption(out):
    """The shipped playlist's first entry (the hanging plastic Slinky) in a 1280x720
    window: hanging, then let go by the loop and falling until the replay. Per frame the
    placard shows: the share of the Slinky's pixels (the 3D frame less the same frame
    without helices) under its box; the window as shown while it hangs (OUT_DIR/kiosk.png,
    the picture of docs/kiosk.md)."""
    import numpy as np
    from PIL import Image

    playlist = load_playlist(None)
    first = first_valid(playlist, 0)
    k = Kiosk(playlist, first, (1280, 720), fullscreen=False)
    w = k.app.window
    w._enable_event_queue = False
    k.app.views.started = time.perf_counter()
    k.app.source.start()
    deadline = time.time() + 240
    while k.app.source.steps == 0 and time.time() < deadline:  # a cold cache: compiling
        frames(k, 1)
    res = {"hidden": [], "spots": [], "t": []}

    def measure():
        frames(k, 1)
        if not k.placard.shown or k.app.instant_replay.replay is not None:
            return
        app, r = k.app, k.app.renderer
        r.render(app.shown, app.look, app.camera, app.stage)
        with_ = r.read().astype(int)
        r.render(app.shown, app.look, app.camera, app.stage, helices=False)
        mask = np.abs(with_ - r.read()).max(axis=2) > 24
        x0, y0, x1, y1 = (int(round(c)) for c in k.placard.rect)
        res["hidden"].append(float(mask[y0:y1, x0:x1].sum() / max(mask.sum(), 1)))
        res["spots"].append(k.placard.spot)
        res["t"].append(app.shown.t)

    k.attendant.opened = time.perf_counter() + 1e3  # the loop waits: no let go, no next
    end = time.time() + 3.0  # the Slinky hangs a while: the HUD's plot has a history
    while time.time() < end:
        frames(k, 1)
    Image.fromarray(k.app.grab_frame()).save(Path(out) / "kiosk.png")
    for _ in range(3):
        measure()
    res["held"] = k.app.shown.slinkies[0].anchor_held
    k.attendant.opened = time.perf_counter() - playlist.entries[0].let_go  # let go now
    end = time.time() + 3.0
    while time.time() < end and k.app.instant_replay.replay is None:
        measure()
    res["let_go"] = not k.app.shown.slinkies[0].anchor_held or \
        k.app.instant_replay.replay is not None
    k.app.source.stop()
    print(json.dumps(res))


if __name__ == "__main__":
    {"main": main, "caption": caption}[sys.argv[2] if len(sys.argv) > 2 else "main"](
        sys.argv[1])
