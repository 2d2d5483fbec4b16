"""The 2D overlay (imgui-bundle) over the 3D picture, in a headless pyglet window (EGL):
it draws where it should and leaves moderngl's state alone; synthetic clicks on the
panel become actions and do not reach the app; the energy bars follow the values."""

from dataclasses import replace

import numpy as np
import pytest
from shapes import hanging_snapshot

from slinky3d.runtime.snapshot import Energy
from slinky3d.scene import edit
from slinky3d.scene import loader as scene_loader
from slinky3d.viewer.overlay import hud as hud_module

pytestmark = pytest.mark.gl
W, H = 1280, 720
HELP = [("arrows / WASD", "move the held base"), ("Space", "pause"), ("G", "parameters"),
        ("H, F1", "this help"), ("Esc", "quit")]


class App:
    """The app's own handlers, pushed before the overlay: what reaches them."""

    def __init__(self):
        self.events: list[tuple] = []

    def on_mouse_press(self, x, y, button, modifiers):
        self.events.append(("press", x, y))

    def on_mouse_release(self, x, y, button, modifiers):
        self.events.append(("release", x, y))

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.events.append(("drag", x, y))

    def on_key_press(self, symbol, modifiers):
        self.events.append(("key", symbol))

    def on_text(self, text):
        self.events.append(("text", text))


class Rig:
    """Window, moderngl context, 3D renderer and overlay, as the app holds them."""

    def __init__(self):
        import pyglet

        pyglet.options["headless"] = True
        pyglet.options["shadow_window"] = False
        pyglet.options["debug_gl"] = False
        import moderngl

        from slinky3d.viewer.camera import frame_snapshot
        from slinky3d.viewer.gl.renderer import Renderer
        from slinky3d.viewer.overlay.layer import Overlay
        from slinky3d.viewer.stage import stage_for

        config = pyglet.gl.Config(double_buffer=True, depth_size=24, major_version=3,
                                  minor_version=3, forward_compatible=True)
        self.window = pyglet.window.Window(width=W, height=H, config=config, visible=False)
        self.window._enable_event_queue = False  # deliver dispatched events at once
        self.ctx = moderngl.create_context()
        self.scene = scene_loader.load("hanging-plastic")
        self.snap = hanging_snapshot("plastic", stretch=0.3)
        self.look = self.scene.look
        self.stage = stage_for(self.look, self.snap)
        self.camera = frame_snapshot(self.snap, (W, H), None, self.stage)
        self.renderer = Renderer(self.ctx, (W, H), quality="software")
        self.fbo = self.ctx.framebuffer(color_attachments=[self.ctx.texture((W, H), 4)])
        self.app = App()
        self.window.push_handlers(self.app)
        self.overlay = Overlay(self.window, font_px=22)

    def scene_frame(self) -> np.ndarray:
        self.renderer.render(self.snap, self.look, self.camera, self.stage, target=self.fbo)
        return self.read()

    def read(self) -> np.ndarray:
        data = self.fbo.read(components=3, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(H, W, 3)[::-1].copy()

    def view(self, **kw):
        from slinky3d.viewer.overlay.layer import OverlayView

        d = dict(snapshot=self.snap, time_scale=1.0, fps=60.0, paused=False,
                 energy=Energy(kinetic=0.01, gravity=-0.02, spring=0.03, damping=0.004,
                               impacts=0.001),
                 energy_start=Energy(gravity=0.0), show_panel=True,
                 panel=edit.panel_values(self.scene), scene_name="hanging-plastic")
        d.update(kw)
        return OverlayView(**d)

    def frame(self, view=None):
        self.fbo.use()
        return self.overlay.frame(view or self.view())

    # Synthetic input; (x, y) in screen pixels with y down, as imgui's rectangles.
    def move(self, x, y):
        self.window.dispatch_event("on_mouse_motion", int(x), int(H - y), 0, 0)

    def click(self, x, y, view=None) -> list:
        import pyglet

        left = pyglet.window.mouse.LEFT
        actions = []
        self.move(x, y)
        actions += self.frame(view)
        self.window.dispatch_event("on_mouse_press", int(x), int(H - y), left, 0)
        actions += self.frame(view)
        self.window.dispatch_event("on_mouse_release", int(x), int(H - y), left, 0)
        actions += self.frame(view)
        return actions

    def close(self):
        self.overlay.close()
        self.renderer = None
        self.window.close()


def centre(rect):
    x0, y0, x1, y1 = rect
    return (x0 + x1) / 2, (y0 + y1) / 2


@pytest.fixture(scope="module")
def rig():
    r = Rig()
    yield r
    r.close()


@pytest.fixture(autouse=True)
def no_gl_error(rig):
    yield
    assert rig.ctx.error == "GL_NO_ERROR"


def test_overlay_draws_over_the_scene_and_leaves_the_3d_state_alone(rig):
    before = rig.scene_frame()
    for _ in range(3):  # the first frames bake the fonts
        rig.scene_frame()
        rig.frame(rig.view(energy_history=energy_rows()))
    assert rig.ctx.error == "GL_NO_ERROR"
    over = rig.read()
    after = rig.scene_frame()
    # The next 3D frame is the same picture: blending, depth, culling, viewport,
    # program and buffers are as moderngl left them.
    np.testing.assert_array_equal(after, before)
    changed = np.any(over != before, axis=2)
    inside = np.zeros_like(changed)
    for rect in (rig.overlay.hud.rect, rig.overlay.panel.rect):
        x0, y0, x1, y1 = (int(round(v)) for v in rect)
        assert x1 - x0 > 100 and y1 - y0 > 100
        inside[y0:y1, x0:x1] = True
        assert changed[y0:y1, x0:x1].mean() > 0.9  # the translucent background covers it
    assert not changed[~inside].any()  # nothing drawn elsewhere
    # The HUD sits top left, the panel top right, and the Slinky between stays visible.
    hx0, hy0, hx1, _ = rig.overlay.hud.rect
    px0, py0, px1, _ = rig.overlay.panel.rect
    assert hx0 < 20 and hy0 < 20 and px1 > W - 20 and py0 < 20 and hx1 < px0
    # Each bar in its colour: the kinetic bar green, the gravity bar blue.
    for name, (r, g, b) in dict(hud_module.BARS).items():
        rect = rig.overlay.hud.bar_rects[name]
        if rect[3] - rect[1] < 4:
            continue
        x, y = centre(rect)
        pix = over[int(y), int(x)].astype(int)
        want = np.array([r, g, b])
        # Compare hues: the brightest channel of the colour is the brightest drawn.
        if name != "total":
            assert np.argmax(pix) == np.argmax(want), (name, pix)


def energy_rows(n=600):
    t = np.linspace(0.0, 10.0, n)
    return np.column_stack([t, 0.01 * np.sin(t) ** 2, -0.02 * t / 10, 0.03 + 0 * t,
                            0.004 * t / 10, 0.001 * t / 10])


def test_clicks_on_the_panel_become_actions_and_stop_there(rig):
    from slinky3d.viewer.overlay.panel import ApplyParams

    rig.frame()
    rects = rig.overlay.panel.rects
    rig.move(*centre(rects["Moon"]))
    rig.frame()
    assert rig.overlay.wants_mouse()  # over the panel: the app must not grab or orbit
    rig.app.events.clear()
    assert rig.click(*centre(rects["Moon"])) == []  # an edit, not yet applied
    assert not any(e[0] == "press" for e in rig.app.events)  # the app never saw it
    assert any(e[0] == "release" for e in rig.app.events)  # releases always go on
    actions = rig.click(*centre(rig.overlay.panel.rects["Apply"]))
    want = replace(edit.panel_values(rig.scene), g=edit.PLANETS["Moon"])
    assert actions == [ApplyParams(want)]
    # Elsewhere the app gets the press, and the overlay does not want the mouse.
    rig.app.events.clear()
    x, y = W / 2, H - 40
    assert rig.click(x, y) == []
    assert ("press", int(x), int(H - y)) in rig.app.events
    assert not rig.overlay.wants_mouse()
    # A press that comes before any frame saw the pointer arrive (a jump from the 3D
    # view onto the panel, as xdotool does) is the panel's too.
    import pyglet

    x, y = centre(rig.overlay.panel.rects["Revert"])
    rig.app.events.clear()
    rig.move(x, y)
    rig.window.dispatch_event("on_mouse_press", int(x), int(H - y), pyglet.window.mouse.LEFT, 0)
    assert not any(e[0] == "press" for e in rig.app.events)
    rig.window.dispatch_event("on_mouse_release", int(x), int(H - y), pyglet.window.mouse.LEFT, 0)
    rig.frame()
    rig.frame()
    # The app then shows the applied values: the panel has nothing pending.
    rig.frame(rig.view(panel=want))
    assert rig.overlay.panel.edit == want


def test_text_field_takes_the_keys(rig):
    import pyglet

    rig.frame()
    path = rig.overlay.panel.path
    assert path.endswith("hanging-plastic.toml")
    x0, y0, _, y1 = rig.overlay.panel.rect
    save = rig.overlay.panel.rects["Save scene"]
    # The path field sits left of the Save button.
    rig.click(save[0] - 40, (save[1] + save[3]) / 2)
    rig.frame()
    assert rig.overlay.wants_keyboard()
    rig.app.events.clear()
    rig.window.dispatch_event("on_key_press", pyglet.window.key.G, 0)
    rig.window.dispatch_event("on_text", "g")
    rig.window.dispatch_event("on_key_release", pyglet.window.key.G, 0)
    rig.frame()
    assert not any(e[0] in ("key", "text") for e in rig.app.events)
    # Leave the field (click on the 3D view): the app has its keys again.
    rig.click(W / 2, H - 40)
    rig.frame()
    assert not rig.overlay.wants_keyboard()
    rig.app.events.clear()
    rig.window.dispatch_event("on_key_press", pyglet.window.key.G, 0)
    assert ("key", pyglet.window.key.G) in rig.app.events
    # Save scene proposes what was typed.
    from slinky3d.viewer.overlay.panel import SaveScene

    actions = rig.click(*centre(rig.overlay.panel.rects["Save scene"]))
    assert actions == [SaveScene(rig.overlay.panel.path)]
    typed = rig.overlay.panel.path  # "g" went in where the click put the text cursor
    assert len(typed) == len(path) + 1
    assert any(typed[i] == "g" and typed[:i] + typed[i + 1:] == path for i in range(len(typed)))


def test_energy_bars_follow_the_values(rig):
    bars = rig.overlay.hud
    heights = []
    for k in (0.01, 0.02, 0.04):
        rig.frame(rig.view(energy=Energy(kinetic=k, gravity=-0.03, spring=0.03)))
        rect = bars.bar_rects
        h = {n: r[3] - r[1] for n, r in rect.items()}
        heights.append(h)
        # Against one ruler the heights are in the ratio of the values.
        assert h["kinetic"] / h["spring"] == pytest.approx(k / 0.03, rel=0.02)
        # Gravity below the start is drawn down from the zero line, the others up.
        assert rect["gravity"][1] == pytest.approx(rect["spring"][3], abs=0.5)
        assert h["gravity"] == pytest.approx(h["spring"], rel=0.02)
    assert heights[0]["kinetic"] < heights[1]["kinetic"] < heights[2]["kinetic"]


def test_bar_geometry():
    spans = hud_module.bar_spans((1.0, -0.5, 0.0, 2.0), top=2.0, bottom=0.5, height=100.0)
    zero = 100.0 * 2.0 / 2.5
    assert spans[0] == pytest.approx((zero - 40.0, zero))
    assert spans[1] == pytest.approx((zero, zero + 20.0))
    assert spans[2] == pytest.approx((zero, zero))
    assert spans[3] == pytest.approx((0.0, zero))
    e, start = Energy(1.0, -3.0, 2.0, 0.5, 0.25), Energy(gravity=-1.0)
    v = hud_module.bar_values(e, start)
    assert v == (1.0, -2.0, 2.0, 0.5, 0.25, e.total + 1.0)
    assert [hud_module.scale_text(s) for s in (1, 0.5, 1 / 8, 1 / 32, 2, 4)] == [
        "1", "1/2", "1/8", "1/32", "2", "4"]


def test_hud_words_and_plot_range():
    assert [hud_module.count_text(n, "contact") for n in (0, 1, 2)] == [
        "0 contacts", "1 contact", "2 contacts"]
    assert [hud_module.asleep_text(a) for a in ([False], [True], [True, False, True])] == [
        "", "asleep", "2 of 3 asleep"]
    # A flat line above the others (a still spring's energy) lies inside the range.
    t = np.linspace(0, 1, 50)
    lo, hi = hud_module.plot_range([0 * t, 666 + 0 * t, 10 * t, np.array([np.nan])])
    assert lo < 0 < 666 < hi < 800
    lo, hi = hud_module.plot_range([-3 + 0 * t])
    assert lo < -3 < 0 < hi
    # Before the solver's first step there is no rate to show.
    assert hud_module.rate_text(True, 1.0) == "preparing"
    assert hud_module.rate_text(False, 1.5) == "real time \u00d71.50"


def test_help_notice_badge_and_scrubber(rig):
    from slinky3d.viewer.overlay.layer import ReplayView
    from slinky3d.viewer.overlay.panel import Scrub

    before = rig.scene_frame()
    replay = ReplayView(playing=True, speed=1 / 8, t=3.0, t_start=1.0, t_end=11.0)
    view = rig.view(show_hud=False, show_panel=True, show_help=True, help_lines=HELP,
                    notice="preparing the physics (first run only)", replay=replay)
    for _ in range(2):
        rig.scene_frame()
        rig.frame(view)
    over = rig.read()
    # The help and notice in the middle, the badge at the top middle.
    assert np.any(over[H // 2 - 40:H // 2 + 40, W // 2 - 100:W // 2 + 100] != before[
        H // 2 - 40:H // 2 + 40, W // 2 - 100:W // 2 + 100])
    assert np.any(over[30:80, W // 2 - 60:W // 2 + 60] != before[30:80, W // 2 - 60:W // 2 + 60])
    # A click on the scrubber asks for that time.
    x0, y0, x1, y1 = rig.overlay.panel.rects["scrub"]
    actions = rig.click(x0 + 0.75 * (x1 - x0), (y0 + y1) / 2,
                        rig.view(show_hud=False, replay=replay))
    scrubs = [a for a in actions if isinstance(a, Scrub)]
    assert scrubs and 1.0 <= scrubs[-1].t <= 11.0
    assert scrubs[-1].t == pytest.approx(1.0 + 0.75 * 10.0, abs=0.5)


def test_the_cached_overlay_looks_as_the_overlay_drawn_directly(rig):
    """overlay/cache.py draws the overlay into a transparent buffer and lays that over
    the frame: the same pixels as drawn straight over it (up to 8-bit rounding), and
    again from the buffer on a frame that does not draw the overlay."""
    from slinky3d.viewer.overlay.cache import OverlayCache

    view = rig.view(message="scene saved to somewhere")
    bare = rig.scene_frame()
    for _ in range(3):  # imgui sizes its windows over the first frames
        rig.frame(view)
    rig.scene_frame()
    rig.frame(view)
    direct = rig.read()
    cache = OverlayCache(rig.ctx, rig.overlay)
    cached = []
    for now in (0.0, 0.01):  # drawn, then only laid over (same look, within REFRESH)
        rig.scene_frame()
        cache.frame(view, rig.fbo, (W, H), now)
        cached.append(rig.read())
    covered = np.any(direct != bare, axis=2)
    assert covered.mean() > 0.1  # the HUD and the panel are there
    for image in cached:
        diff = np.abs(image.astype(int) - direct.astype(int))
        assert diff.max() <= 3 and diff.mean() < 0.05


def test_the_overlay_laid_over_only_where_the_frame_was_drawn_again(rig):
    """Partial redraw (viewer/app/redraw.py): where the frame under the overlay was drawn
    again only inside some rectangles, the cached overlay is laid over only there (not
    twice over the rest); and when it was drawn anew (new figures, into its spare
    buffer), it shows from the next frame on, the frame first restored under its old
    and new rectangles. Either way the pixels are those of the frame drawn whole with
    the overlay laid over all of it."""
    from slinky3d.viewer.overlay.cache import REFRESH, OverlayCache

    bare = rig.scene_frame()
    tex = rig.fbo.color_attachments[0]

    def scene_in(rects):  # the frame drawn again inside rects (x, y, w, h; y up)
        for x, y, w, h in rects:
            tex.write(np.ascontiguousarray(np.c_[bare[::-1][y:y + h, x:x + w],
                                                 np.full((h, w, 1), 255, np.uint8)]
                                           .reshape(h, w, 4)), viewport=(x, y, w, h))

    def view(k):
        return rig.view(fps=40.0 + k, energy=Energy(kinetic=0.01 * (k + 1), spring=0.03))

    for _ in range(3):  # imgui sizes its windows over the first frames
        rig.frame(view(0))
    cache = OverlayCache(rig.ctx, rig.overlay)
    rig.scene_frame()
    cache.frame(view(0), rig.fbo, (W, H), 0.0)
    whole = rig.read()
    box = (0, 0, W // 2, H)  # under the HUD, partly
    scene_in([box])
    cache.frame(view(0), rig.fbo, (W, H), 0.01, drawn=[box], restore=scene_in)
    assert np.array_equal(rig.read(), whole)
    cache.frame(view(0), rig.fbo, (W, H), 0.02, drawn=[], restore=scene_in)
    assert np.array_equal(rig.read(), whole)  # nothing drawn again: nothing laid over
    hud = cache.layers["hud"].draws
    cache.frame(view(1), rig.fbo, (W, H), 2 * REFRESH, drawn=[], restore=scene_in)
    assert cache.layers["hud"].draws == hud + 1  # new figures, not shown yet
    assert np.array_equal(rig.read(), whole)
    cache.frame(view(1), rig.fbo, (W, H), 2.005 * REFRESH, drawn=[], restore=scene_in)
    refreshed = rig.read()
    rig.scene_frame()
    cache.frame(view(1), rig.fbo, (W, H), 2.01 * REFRESH)  # laid over all of it
    assert np.array_equal(refreshed, rig.read()) and not np.array_equal(refreshed, whole)


def test_disjoint_rectangles_cover_the_union_once():
    from slinky3d.viewer.overlay.cache import disjoint

    rects = [(10.5, 10, 50, 40), (30, 20, 80, 90.2), (0, 85, 200, 120), (-5, -5, 3, 3)]
    count = np.zeros((100, 150), int)
    for x0, y0, x1, y1 in disjoint(rects, (150, 100)):
        count[y0:y1, x0:x1] += 1
    union = np.zeros_like(count, bool)
    for x0, y0, x1, y1 in rects:
        union[max(0, int(np.floor(y0))):int(np.ceil(y1)),
              max(0, int(np.floor(x0))):int(np.ceil(x1))] = True
    assert count.max() == 1 and np.array_equal(count == 1, union)


def test_a_refresh_waits_for_a_frame_with_room_but_not_for_long(rig):
    """A frame without room (wait=True) puts off the refresh that only the clock asks
    for, up to REFRESH_LATEST; what changes the overlay's look is drawn at once."""
    from slinky3d.viewer.overlay.cache import REFRESH, REFRESH_LATEST, OverlayCache

    def view(k=0, **kw):
        return rig.view(fps=50.0 + k, **kw)

    cache = OverlayCache(rig.ctx, rig.overlay)
    rig.scene_frame()
    cache.frame(view(), rig.fbo, (W, H), 0.0)
    hud = cache.layers["hud"]
    assert hud.draws == 1 and cache.refreshed
    t = 1.01 * REFRESH
    cache.frame(view(1), rig.fbo, (W, H), t, wait=True)
    assert hud.draws == 1 and not cache.refreshed  # due, but no room: put off
    cache.frame(view(1), rig.fbo, (W, H), t + 0.01)
    assert hud.draws == 2 and cache.refreshed  # the next frame with room draws it
    t += 0.01
    for k in range(2, 40):  # never any room: at most REFRESH_LATEST late
        t += 0.25 * REFRESH
        cache.frame(view(k), rig.fbo, (W, H), t, wait=True)
        if cache.refreshed:
            break
    late = t - (1.02 * REFRESH)  # since the last refresh
    assert hud.draws == 3 and REFRESH_LATEST <= late < REFRESH_LATEST + 0.3 * REFRESH
    cache.frame(view(k, show_help=True), rig.fbo, (W, H), t + 0.01, wait=True)
    assert cache.refreshed  # help shown: drawn at once, room or not


def test_the_refresh_budget_learns_a_frames_room():
    from slinky3d.viewer.app.pacing import RefreshBudget

    b = RefreshBudget(1 / 60)
    assert b.room(0.015)  # nothing learnt yet
    for _ in range(100):
        b.observe(0.012, 0.010, refreshed=False)  # 2 ms from the overlay to the end
        b.observe(0.015, 0.010, refreshed=True)  # a refresh adds 3 ms
    assert abs(b.tail - 0.002) < 1e-9 and abs(b.extra - 0.003) < 1e-4
    assert b.room(0.0115) and not b.room(0.0120)  # 11.5 + 2 + 3 = 16.5 < 16.67 < 17


def test_the_panel_layer_is_drawn_again_only_when_it_changes(rig):
    """The cached overlay keeps the HUD and the panel in buffers of their own: the HUD's
    is drawn at every refresh (its figures live), the panel's only when the panel looks
    different; clicks, slider drags and text still reach the panel through the cache."""
    import pyglet

    from slinky3d.viewer.overlay.cache import REFRESH, OverlayCache
    from slinky3d.viewer.overlay.panel import ApplyParams

    left = pyglet.window.mouse.LEFT
    clock = iter(np.arange(1000) * 0.01 * REFRESH)  # input, not time, draws the panel

    def view(k=0):
        return rig.view(fps=50.0 + k, energy=Energy(kinetic=0.01 * (k + 1), gravity=-0.02,
                                                    spring=0.03), energy_history=energy_rows())

    def frame(v=None):
        rig.scene_frame()
        return cache.frame(v or view(), rig.fbo, (W, H), next(clock))

    rig.move(W / 2, H - 5)  # the pointer away from the windows
    for _ in range(3):
        rig.frame(view())
    cache = OverlayCache(rig.ctx, rig.overlay)
    rig.scene_frame()
    cache.frame(view(), rig.fbo, (W, H), 0.0)
    hud, panel = cache.layers["hud"], cache.layers["panel"]
    assert (hud.draws, panel.draws) == (1, 1)
    # Refreshes with new figures (and a new PanelValues of the same values each time).
    for k in range(1, 6):
        rig.scene_frame()
        cache.frame(view(k), rig.fbo, (W, H), k * 1.01 * REFRESH)  # 1.01: past rounding
    assert (hud.draws, panel.draws) == (6, 1)
    clock = iter(5 * 1.01 * REFRESH + np.arange(1, 1000) * 0.01 * REFRESH)
    # The pointer onto a button: its highlight shows at once.
    rects = rig.overlay.panel.rects
    rig.move(*centre(rects["Moon"]))
    frame()
    assert panel.draws == 2
    frame()
    assert panel.draws == 2  # nothing new
    # A click edits, the next applies.
    for name in ("Moon", "Apply"):
        x, y = centre(rig.overlay.panel.rects[name])
        rig.move(x, y)
        actions = frame()
        rig.window.dispatch_event("on_mouse_press", int(x), int(H - y), left, 0)
        actions += frame()
        rig.window.dispatch_event("on_mouse_release", int(x), int(H - y), left, 0)
        actions += frame()
    want = replace(edit.panel_values(rig.scene), g=edit.PLANETS["Moon"])
    assert actions == [ApplyParams(want)]
    assert panel.draws > 3
    # A drag along the coils' slider changes the edited value.
    slider = rig.overlay.panel
    before = slider.edit.n_coils
    frame(rig.view(panel=want))
    frame(rig.view(panel=want))
    x0, y0, x1, y1 = rig.overlay.panel.rects["coils"]
    coils = (x0 + 0.3 * (x1 - x0), (y0 + y1) / 2)
    rig.move(*coils)
    frame()
    rig.window.dispatch_event("on_mouse_press", int(coils[0]), int(H - coils[1]), left, 0)
    frame()
    for dx in range(10, 70, 10):
        rig.window.dispatch_event("on_mouse_drag", int(coils[0] + dx), int(H - coils[1]),
                                  10, 0, left, 0)
        rig.window.dispatch_event("on_mouse_motion", int(coils[0] + dx), int(H - coils[1]),
                                  10, 0)
        frame()
    rig.window.dispatch_event("on_mouse_release", int(coils[0] + 60), int(H - coils[1]),
                              left, 0)
    frame()
    assert slider.edit.n_coils > before
    # Typing into the path field.
    save = rig.overlay.panel.rects["Save scene"]
    x, y = save[0] - 40, (save[1] + save[3]) / 2
    rig.move(x, y)
    frame()
    rig.window.dispatch_event("on_mouse_press", int(x), int(H - y), left, 0)
    frame()
    rig.window.dispatch_event("on_mouse_release", int(x), int(H - y), left, 0)
    frame()
    path = rig.overlay.panel.path
    drawn = panel.draws
    rig.window.dispatch_event("on_text", "q")
    frame()
    assert len(rig.overlay.panel.path) == len(path) + 1 and panel.draws > drawn
    # The scrubber asks for a time.
    from slinky3d.viewer.overlay.layer import ReplayView
    from slinky3d.viewer.overlay.panel import Scrub

    replay = ReplayView(playing=False, speed=1 / 8, t=3.0, t_start=1.0, t_end=11.0)
    frame(rig.view(panel=want, replay=replay))
    x0, y0, x1, y1 = rig.overlay.panel.rects["scrub"]
    x, y = x0 + 0.25 * (x1 - x0), (y0 + y1) / 2
    rig.move(x, y)
    actions = frame(rig.view(panel=want, replay=replay))
    rig.window.dispatch_event("on_mouse_press", int(x), int(H - y), left, 0)
    actions += frame(rig.view(panel=want, replay=replay))
    rig.window.dispatch_event("on_mouse_release", int(x), int(H - y), left, 0)
    actions += frame(rig.view(panel=want, replay=replay))
    scrubs = [a for a in actions if isinstance(a, Scrub)]
    assert scrubs and scrubs[-1].t == pytest.approx(1.0 + 0.25 * 10.0, abs=0.5)
    # Off the panel again: the field lets go; then refreshes leave the panel's buffer be.
    rig.click(W / 2, H - 5)
    rig.move(W / 2, H - 5)
    v = rig.view(panel=want)
    for k in range(3):
        rig.scene_frame()
        cache.frame(v, rig.fbo, (W, H), 100.0 + k * REFRESH)
    drawn = panel.draws
    for k in range(3, 8):
        rig.scene_frame()
        cache.frame(v, rig.fbo, (W, H), 100.0 + k * REFRESH)
    assert panel.draws == drawn and hud.draws > 6
    # Live play: the scrubber follows the newest time, and the panel looks the same.
    for k in range(10):
        t1 = 9.0 + 0.5 * k
        live = ReplayView(playing=False, speed=1 / 8, t=t1, t_start=max(0.0, t1 - 10.0),
                          t_end=t1)
        rig.scene_frame()
        cache.frame(rig.view(panel=want, replay=live), rig.fbo, (W, H), 200.0 + k * REFRESH)
        if k == 2:  # the panel has grown to take the scrubber (auto-resized)
            drawn = panel.draws
    assert panel.draws == drawn



def test_caption_at_the_bottom_centre_and_the_hover_mark(rig):
    from slinky3d.viewer.overlay.hud import hover_marks

    sc = scene_loader.load("levitation")
    view = rig.view(scene=sc, show_panel=False)
    rig.frame(view)
    rig.frame(view)  # imgui sizes a new window in its first frame
    caption = rig.overlay.hud.caption
    x0, y0, x1, y1 = caption.rect
    assert x1 > x0 and y1 > y0
    assert (x0 + x1) / 2 == pytest.approx(W / 2, abs=1)
    assert H / 2 < y0 and y1 <= H
    assert rig.overlay.hud.hover == hover_marks(sc) != []
    caption.toggle(sc)
    rig.frame(view)
    assert caption.rect == (0.0, 0.0, 0.0, 0.0)


def test_timeline_window_and_the_overlays_section(rig):
    """The contact timeline draws its closed joints and front at the bottom left; the
    panel's "Overlays" checkboxes become SetOverlay actions; the click, without an audio
    device, is greyed out."""
    from slinky3d.runtime.snapshot import Snapshot
    from slinky3d.viewer.overlay import timeline
    from slinky3d.viewer.overlay.panel import PhenomenaView, SetOverlay

    sl = rig.snap.slinkies[0]
    n = sl.N
    snaps = []
    for k in range(60):  # a stack growing down from the top, one joint per snapshot
        c = np.zeros(n, bool)
        c[1:min(k + 2, n)] = True
        snaps.append(Snapshot(t=0.01 * k, slinkies=(replace(sl, contact=c),)))
    tl = timeline.build(snaps, 0, t_end=0.6, seconds=1.0)
    view = rig.view(show_hud=False, show_panel=True, phenomena=PhenomenaView(
        on=frozenset({"timeline"}), sound_unavailable="no audio device", timelines=(tl,)))
    bare = rig.scene_frame()
    for _ in range(2):
        rig.scene_frame()
        rig.frame(view)
    img = rig.read().astype(int)
    corner = (slice(H // 2, H), slice(0, W // 2))
    changed = np.any(img != bare, axis=2)[corner]
    assert changed.mean() > 0.05  # the window is there, bottom left
    pixels = img[corner][changed]

    def near(colour):
        return np.sum(np.abs(pixels - np.array(colour[:3]) * 255).max(axis=1) < 40)

    assert near(timeline.CLOSED_COLOUR) > 200 and near(timeline.FRONT_COLOUR) > 20
    # the panel's section: a click on "contact timeline" turns it off
    x0, y0, x1, y1 = rig.overlay.panel.rects["timeline"]
    actions = rig.click(x0 + 8, (y0 + y1) / 2, view)
    assert SetOverlay("timeline", False) in actions
    x0, y0, x1, y1 = rig.overlay.panel.rects["sound"]
    actions = rig.click(x0 + 8, (y0 + y1) / 2, view)
    assert not [a for a in actions if isinstance(a, SetOverlay)]  # greyed out
