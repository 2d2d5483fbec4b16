"""The pyglet window, for real, under Xvfb (started here when there is no DISPLAY).

Each check runs in a subprocess: a window's GLX context and the EGL context of the
headless tests should not share a process.
"""

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.window
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def display():
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.fail("no DISPLAY and no Xvfb: apt-get install xvfb (CI's .ci/run does)")
    # -displayfd: Xvfb picks a free display number and writes it to the pipe.
    read, write = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "1024x768x24",
                             "-nolisten", "tcp"], pass_fds=(write,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    deadline = time.time() + 15
    text = b""
    while not text.endswith(b"\n"):
        if proc.poll() is not None or time.time() > deadline:
            pytest.fail("Xvfb did not start")
        if select.select([read], [], [], 0.2)[0]:
            text += os.read(read, 16)
    os.close(read)
    num = int(text)
    yield f":{num}"
    proc.terminate()
    proc.wait(timeout=5)


def run(args, display, timeout=120):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    if display is None:
        env.pop("DISPLAY", None)
    else:
        env["DISPLAY"] = display
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_run_plays_the_scene_and_quits(display, tmp_path):
    from PIL import Image

    out = tmp_path / "frame.png"
    p = run(["-m", "slinky3d", "run", "hanging-plastic", "--size", "320x240", "--frames", "20",
             "--save-frame", str(out)], display)
    assert p.returncode == 0, p.stderr
    img = np.asarray(Image.open(out))
    assert img.shape == (240, 320, 3)
    # Red plastic coils in the middle of a blue-grey background.
    red = (img[..., 0] > img[..., 2] + 60) & (img[..., 0] > 120)
    assert red.sum() > 100
    cols = np.nonzero(red.any(axis=0))[0]
    assert 60 < cols.mean() < 260


VIEWER_SCRIPT = r"""
import json, pyglet
from pyglet.window import key, mouse
from slinky3d.scene.loader import load
from slinky3d.viewer.app.window import Viewer
from slinky3d.runtime.snapshot import Snapshot

from fakesource import StillSource

sc = load("hanging-steel")
src = StillSource(sc)
v = Viewer(sc, sc.look, sc.camera, (320, 240), source=src)
w = v.window

w._enable_event_queue = False  # deliver dispatched events at once (pyglet queues them)

def send(*event):
    w.dispatch_event(*event)

out = {"caption": w.caption}
w.dispatch_event("on_draw"); w.flip()
c = v.camera
yaw, pitch, dist, target = c.yaw, c.pitch, c.distance, c.target.copy()
send("on_mouse_drag", 160, 120, 40, 0, mouse.LEFT, 0)
out["orbit_yaw"] = c.yaw - yaw
send("on_mouse_drag", 160, 120, 0, 30, mouse.LEFT, 0)
out["orbit_pitch"] = c.pitch - pitch
send("on_mouse_scroll", 160, 120, 0, 2)
out["zoom"] = v.camera.distance / dist
send("on_mouse_drag", 160, 120, 25, 0, mouse.RIGHT, 0)
out["pan"] = float(abs(v.camera.target - target).sum())
send("on_key_press", key.HOME, 0)
out["home"] = abs(v.camera.distance - dist) < 1e-9
w.set_size(400, 300)
for _ in range(20):
    w.dispatch_events()
    if tuple(w.get_framebuffer_size()) == (400, 300):
        break
w.dispatch_event("on_draw"); w.flip()
out["resized"] = list(v.renderer.size)
send("on_key_press", key.ESCAPE, 0)
out["closed"] = bool(w.has_exit) or getattr(w, "_context", None) is None
out["gl_error"] = v.ctx.error
print(json.dumps(out))
"""


def test_mouse_camera_title_and_escape(display):
    p = run(["-c", VIEWER_SCRIPT], display)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["caption"] == "slinky3d \u2014 Hanging steel Slinky"
    assert r["orbit_yaw"] != 0 and r["orbit_pitch"] != 0
    assert r["zoom"] == pytest.approx(0.81)  # two wheel notches, 10 % each
    assert r["pan"] > 0 and r["home"] and r["closed"]
    assert r["resized"] == [400, 300]
    assert r["gl_error"] == "GL_NO_ERROR"


def test_no_display_is_one_clear_line():
    p = run(["-m", "slinky3d", "run", "hanging-plastic"], None, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot open a window" in lines[0], p.stderr


def xdotool(*args, display, timeout=30):
    env = {**os.environ, "DISPLAY": display}
    return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def quit_app(proc: subprocess.Popen) -> str:
    """Wait for an app sent Escape to quit (killed if it has not in a minute); its
    stderr."""
    try:
        return proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_real_keys_drive_the_held_base_and_escape_quits(display, tmp_path):
    """Real X input (xdotool's XTEST): Right held for a while moves the held top of the
    plastic Slinky to the right; Esc quits; the session log says so."""
    from slinky3d.output import session, trajectory

    if shutil.which("xdotool") is None:
        pytest.fail("no xdotool: apt-get install xdotool (CI's .ci/run does)")
    log = tmp_path / "session.npz"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DISPLAY": display}
    proc = subprocess.Popen([sys.executable, "-m", "slinky3d", "run", "hanging-plastic",
                             "--size", "320x240", "--log-state", str(log)], env=env,
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        found = xdotool("search", "--sync", "--name", "slinky3d", display=display, timeout=60)
        wid = found.stdout.split()[0]
        time.sleep(3.0)  # the solver's process under way (it loads while the window opens)
        xdotool("windowfocus", "--sync", wid, display=display)
        xdotool("keydown", "Right", display=display)
        time.sleep(0.8)
        xdotool("keyup", "Right", display=display)
        time.sleep(0.5)
        xdotool("key", "Escape", display=display)
    finally:
        err = quit_app(proc)
    assert proc.returncode == 0, err
    logged = session.load_session(log)
    drives = [c for _, c in logged.log if type(c).__name__ == "DriveBase"]
    assert drives and drives[0].velocity[0] > 0 and drives[-1].velocity == (0.0, 0.0)
    top = trajectory.load(log).tracks[0].ends[:, 0]
    assert top[-1, 0] - top[0, 0] > 0.1  # m: 0.8 s at 0.4 m/s, less the speeding up
    assert abs(top[-1, 1] - top[0, 1]) < 0.02


def test_real_mouse_and_keys_move_the_slinky_in_3d(display, tmp_path):
    """On the 3D solver, real X input (xdotool): the camera orbited a quarter turn by a
    drag on empty sky, the bottom end (found in a screenshot of the window) dragged
    sideways on the screen: it moves along z, what was depth; then E held raises the
    held top, and [ held twists it about the vertical, anticlockwise seen from above.
    The session log says so."""
    from PIL import ImageGrab

    from slinky3d.output import session, trajectory

    if shutil.which("xdotool") is None:
        pytest.fail("no xdotool: apt-get install xdotool (CI's .ci/run does)")
    text = (ROOT / "scenes" / "hanging-plastic.toml").read_text(encoding="utf-8")
    scene = tmp_path / "plastic3d.toml"  # no floor: the 3D solver has no world contact yet
    scene.write_text('solver = "3d"\n' + text.split("[world]")[0], encoding="utf-8")
    log = tmp_path / "session.npz"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DISPLAY": display}
    proc = subprocess.Popen([sys.executable, "-m", "slinky3d", "run", str(scene),
                             "--size", "800x600", "--log-state", str(log)], env=env,
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def red_pixels(geometry):
        """The main view's red pixels (not the view from above's, in its corner)."""
        from slinky3d.viewer.gl.top_view import reserved

        x, y, w, h = geometry
        img = np.asarray(ImageGrab.grab(bbox=(x, y, x + w, y + h), xdisplay=display))[..., :3]
        r, g, b = (img[..., i].astype(int) for i in range(3))
        red = (r > b + 60) & (r > g + 60) & (r > 120)
        x0, y0, x1, y1 = reserved((w, h))
        corner = red[y0:y1, x0:x1].copy()
        red[y0:y1, x0:x1] = False
        return np.nonzero(red), corner.sum()

    try:
        found = xdotool("search", "--sync", "--name", "slinky3d", display=display, timeout=60)
        wid = found.stdout.split()[0]
        time.sleep(4.0)  # the solver's process under way (it loads while the window opens)
        xdotool("windowfocus", "--sync", wid, display=display)
        geo = dict(line.split("=") for line in xdotool(
            "getwindowgeometry", "--shell", wid, display=display).stdout.split())
        box = tuple(int(geo[k]) for k in ("X", "Y", "WIDTH", "HEIGHT"))
        xdotool("key", "n", display=display)  # the scene's caption hidden
        # A quarter turn: 262 pixels at 0.006 rad a pixel, along the sky at the top right
        # (the HUD is at the top left), away from the Slinky.
        xdotool("mousemove", "--window", wid, "500", "12", display=display)
        xdotool("mousedown", "1", display=display)
        for k in range(1, 14):
            xdotool("mousemove", "--window", wid, str(500 + 20 * k), "12", display=display)
            time.sleep(0.03)
        xdotool("mousemove", "--window", wid, "762", "12", display=display)
        time.sleep(0.1)
        xdotool("mouseup", "1", display=display)
        time.sleep(1.0)
        (rows, cols), in_corner = red_pixels(box)
        assert len(rows) > 50, "no red Slinky on the screen"
        assert in_corner > 20, "no view from above (a 3D scene opens with it)"
        low = rows.max()
        x0, y0 = int(np.median(cols[rows >= low - 3])), int(low) - 2  # the bottom end
        xdotool("mousemove", "--window", wid, str(x0), str(y0), display=display)
        time.sleep(0.3)  # hovered: the marker is on it
        xdotool("mousedown", "1", display=display)
        for k in range(1, 21):
            xdotool("mousemove", "--window", wid, str(x0 + 4 * k), str(y0), display=display)
            time.sleep(0.03)
        time.sleep(0.8)  # held there: the bottom settles on the target
        xdotool("mouseup", "1", display=display)
        time.sleep(0.3)
        xdotool("keydown", "e", display=display)
        time.sleep(1.0)
        xdotool("keyup", "e", display=display)
        time.sleep(0.4)
        xdotool("keydown", "bracketleft", display=display)
        time.sleep(1.0)
        xdotool("keyup", "bracketleft", display=display)
        time.sleep(0.4)
        xdotool("key", "Escape", display=display)
    finally:
        err = quit_app(proc)
    assert proc.returncode == 0, err
    logged = session.load_session(log)
    moves = [c.target for _, c in logged.log if type(c).__name__ == "Move"]
    assert moves and all(len(t) == 3 for t in moves)
    ends = trajectory.load(log).tracks[0].ends  # (samples, N + 1, 3)
    bottom, top = ends[:, -1], ends[:, 0]
    assert np.ptp(bottom[:, 2]) > 0.03  # m: it moved along z
    assert top[-1, 1] - top[0, 1] > 0.03  # m: E raised the held top (0.4 m/s, for 1 s)
    assert np.ptp(top[:, 0]) < 1e-6 and np.ptp(top[:, 2]) < 1e-6
    twists = [c.rate for _, c in logged.log if type(c).__name__ == "TwistBase"]
    assert twists and twists[0] > 0 and twists[-1] == 0.0
    # the top half hoop's diameter turned about the vertical (a quarter turn a second,
    # for a second): its heading seen from above, anticlockwise positive
    d = ends[:, 1] - ends[:, 0]
    heading = np.unwrap(np.arctan2(-d[:, 2], d[:, 0]))
    assert heading[-1] - heading[0] > 0.5


def test_log_state_then_replay_in_a_window(display, tmp_path):
    log = tmp_path / "s.npz"
    p = run(["-m", "slinky3d", "run", "hanging-plastic", "--size", "320x240", "--frames", "40",
             "--log-state", str(log)], display)
    assert p.returncode == 0, p.stderr
    assert f"session written to {log}" in p.stdout
    p = run(["-m", "slinky3d", "replay", str(log), "--size", "320x240", "--frames", "20"],
            display)
    assert p.returncode == 0, p.stderr


SAME_FRAME_SCRIPT = r"""
import json, sys
import numpy as np, pyglet, moderngl
from pyglet import gl
pyglet.options["shadow_window"] = False
pyglet.options["debug_gl"] = False
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load
from slinky3d.viewer.camera import frame_snapshot
from slinky3d.viewer.gl.renderer import Renderer
from slinky3d.viewer.stage import stage_for

W, H = 320, 240
config = pyglet.gl.Config(double_buffer=True, depth_size=24, major_version=3, minor_version=3,
                          forward_compatible=True)
w = pyglet.window.Window(W, H, config=config, vsync=False)
ctx = moderngl.create_context()
out = {}
for name in ("hanging-steel", "4S"):
    sc = load(name)
    sim = Simulation(sc)
    first = sim.snapshot()
    sim.step(50)
    snap = sim.snapshot()
    r = Renderer(ctx, (W, H), quality="software")
    cam = frame_snapshot(first, (W, H))
    stage = stage_for(sc.look, first)
    r.render(snap, sc.look, cam, stage)
    own = r.read()
    r.render(snap, sc.look, cam, stage, target=ctx.detect_framebuffer(0))
    buf = (gl.GLubyte * (W * H * 3))()
    gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
    gl.glReadBuffer(gl.GL_BACK)
    gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
    gl.glReadPixels(0, 0, W, H, gl.GL_RGB, gl.GL_UNSIGNED_BYTE, buf)
    win = np.frombuffer(buf, np.uint8).reshape(H, W, 3)[::-1]
    d = np.abs(own.astype(int) - win.astype(int)).max(axis=2)
    out[name] = [int((d > 2).sum()), int(d.max())]
out["gl_error"] = ctx.error
print(json.dumps(out))
"""


def test_a_window_gets_the_frame_the_renderer_draws_for_itself(display):
    """The software preset draws straight into a window (FXAA over the Slinkies' box
    only); the picture is the one it draws into its own buffer."""
    p = run(["-c", SAME_FRAME_SCRIPT], display)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["gl_error"] == "GL_NO_ERROR"
    for name in ("hanging-steel", "4S"):
        differ, _ = r[name]
        assert differ < 0.001 * 320 * 240, (name, r[name])
