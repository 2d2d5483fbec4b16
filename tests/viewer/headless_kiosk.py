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


if __name__ == "__main__":
    main(sys.argv[1])
