"""The 2D layer over the 3D view: HUD, energy bars and plot, parameter panel, help,
notices and the replay badge (Dear ImGui and ImPlot through imgui-bundle).

Immediate mode, one way: the app fills an `OverlayView` each frame and calls
`Overlay.frame(view)` after drawing the 3D scene; the overlay draws and returns the
`Action`s the user asked for (a parameter change, save, scrub), which the app carries
out. The overlay never talks to the solver.

Input: `Overlay(window)` pushes its handlers on the window's event stack, above the
app's handlers pushed before it (pyglet calls the last pushed first). Every event
goes to Dear ImGui; then a mouse press, drag or wheel over a panel, and a key press
or text while a text field or slider is active, stop there (EVENT_HANDLED); all else
goes on to the app: pointer motion, mouse and key releases (so that a drag or a held
key the app saw start always ends in the app), resizes. Handlers the app pushes after
the overlay see events first and must ask `wants_mouse()` / `wants_keyboard()`.

GL: the overlay draws with PyOpenGL on the window's context into the framebuffer
bound when `frame` is called, then restores the state it changed (blend, depth,
cull, scissor, viewport, program, textures, vertex array, buffers), so moderngl's
next frame finds what it left. In a headless pyglet window PyOpenGL must use EGL: the
overlay chooses EGL for PyOpenGL itself (for this process only) unless OpenGL was
imported before it.

Use (the window's side):

    ctx = moderngl.create_context()          # the window's context, current
    ...push the app's handlers...
    overlay = Overlay(window, font_px=22)    # then the overlay's, above them
    # each on_draw:
    renderer.render(snap, look, camera, stage, target=screen)
    screen.use()                             # the overlay draws into the bound buffer
    for action in overlay.frame(view):       # panel.ApplyParams, SaveScene, Scrub, ClosePanel
        ...                                  # in order (Save after an Apply it needs)
    # on close, context still current, before window.close():
    overlay.close()
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import imgui_bundle
import pyglet  # its submodules load on first use
from imgui_bundle import imgui, implot

from slinky3d.runtime.snapshot import Energy, Snapshot
from slinky3d.scene.edit import PanelValues
from slinky3d.viewer.overlay import placement, timeline
from slinky3d.viewer.overlay.hud import WINDOW as HUD
from slinky3d.viewer.overlay.hud import Hud, scale_text
from slinky3d.viewer.overlay.input import OverlayInput
from slinky3d.viewer.overlay.panel import Action, Panel

FONT = "Roboto/Roboto-Regular.ttf"  # in imgui-bundle's fonts; its default font is 13 px
NOTICE_SIZE = 1.6  # the centre notice and the replay badge, in font sizes
# The overlay's layers, bottom to top (overlay/cache.py caches each apart): the HUD, whose
# figures change ten times a second, and the rest (the panel, popups, help, notice,
# badge), which changes only when something is done to it.
LAYERS = ("hud", "panel")


@dataclass(frozen=True)
class ReplayView:
    """Instant replay: where the replay or scrubber stands in the buffered history."""

    playing: bool  # the I replay is running (badge shown)
    speed: float  # e.g. 1/8
    t: float  # simulated time shown, s
    t_start: float  # oldest buffered time, s
    t_end: float  # newest buffered time, s


@dataclass
class OverlayView:
    """Everything the overlay shows in one frame."""

    snapshot: Snapshot  # the one drawn this frame
    time_scale: float
    fps: float
    paused: bool
    energy: Energy | None  # summed over the Slinkies
    # (t, kinetic, gravity, spring, damping, impacts) rows of the last ~10 s
    energy_history: Any = None
    show_hud: bool = True
    show_panel: bool = False
    show_help: bool = False
    help_lines: list[tuple[str, str]] = field(default_factory=list)  # (keys, what)
    notice: str = ""  # e.g. "preparing the physics (first run only)"
    preparing: bool = False  # the solver has not stepped yet: no real-time factor to show
    message: str = ""  # transient line, e.g. "screenshot saved to ..."
    panel: PanelValues | None = None
    replay: ReplayView | None = None
    side_view: bool = False
    scene_name: str = ""  # names the file "Save scene" proposes
    # The account at t = 0 of this run: the gravity bar is drawn relative to it. None:
    # the first account the overlay saw since the simulated time last went back.
    energy_start: Energy | None = None
    scene: Any = None  # the scene shown (the HUD's caption, levitation mark, sweep plot)
    # The overlays' toggles and the contact timeline (panel.PhenomenaView).
    phenomena: Any = None
    # The scale the 3D picture is drawn at (dynamic resolution); None: always full.
    render_scale: float | None = None
    # Each Slinky's box on screen, as fractions of the picture (placement.subject): the
    # HUD and the caption keep off them.
    subject: tuple[tuple[float, float, float, float], ...] = ()


class Overlay:
    """Draws an `OverlayView` over the current framebuffer of a pyglet window."""

    def __init__(self, window: Any, font_px: int = 22):
        self.window = window
        self.font_px = font_px
        imgui, implot, backend = _modules()
        self._imgui, self._implot = imgui, implot
        self._ctx = imgui.create_context()
        imgui.set_current_context(self._ctx)
        self._plot_ctx = implot.create_context()
        implot.set_current_context(self._plot_ctx)
        io = imgui.get_io()
        io.set_ini_filename(None)  # no imgui.ini in the user's working directory
        # Thick lines from geometry, not from the font texture: then the texture can be
        # sampled at its nearest texel (glyphs are drawn pixel for pixel), which costs a
        # software renderer a quarter less per pixel than bilinear sampling.
        io.fonts.flags |= imgui.ImFontAtlasFlags_.no_baked_lines
        path = font_path()
        if path:
            io.fonts.add_font_from_file_ttf(path, float(font_px))
        style = imgui.get_style()
        style.font_size_base = float(font_px)
        style.scale_all_sizes(font_px / 16.0)
        style.window_rounding = 0.3 * font_px
        # The plot draws on the HUD's own background: each layer of translucent pixels
        # costs a software renderer (llvmpipe) about as much as the rest of a frame's.
        plot_style = implot.get_style()
        for c in (implot.Col_.frame_bg, implot.Col_.plot_bg):
            plot_style.set_color_(c, (0.0, 0.0, 0.0, 0.0))
        self._backend = backend(window)
        self._input = OverlayInput(self._backend, io, self._over_panel)
        self.rects: list[tuple[float, float, float, float]] = []  # see frame()
        # The same by layer (LAYERS), see build().
        self.layer_rects: dict[str, list[tuple[float, float, float, float]]] = {}
        self._data: Any = None  # the draw data build() made
        window.push_handlers(self._input)
        self.hud = Hud(font_px)
        self.panel = Panel(font_px)
        self._panel_shown = False
        self.reserved: list[tuple[float, float, float, float]] = []  # see build()
        self._closed = False

    def wants_mouse(self) -> bool:
        """True while the pointer is over a panel (the app must not grab or orbit)."""
        return bool(self._io().want_capture_mouse)

    def wants_keyboard(self) -> bool:
        """True while a text field has focus (the app's keys must not fire)."""
        return bool(self._io().want_capture_keyboard)

    @property
    def inputs(self) -> int:
        """How many events the overlay has taken that may change what it shows (a press,
        a key, the pointer over the panel): a cached overlay is stale when this grows."""
        return self._input.count

    def frame(self, view: OverlayView, premultiplied: bool = False) -> list[Action]:
        """Draw one frame's overlay into the bound framebuffer; returns what the user
        asked for, in the order to carry it out.

        premultiplied: into a transparent buffer, to be laid over frames later
        (overlay/cache.py): colours come out premultiplied by their alpha, and the alpha
        is the overlay's coverage. `rects` then holds the screen rectangles it drew in
        (framebuffer pixels, x0, y0, x1, y1 with y up)."""
        actions = self.build(view)
        self.render(None, premultiplied)
        return actions

    def build(self, view: OverlayView) -> list[Action]:
        """One frame of imgui (input taken, every window submitted), not yet drawn: then
        `render` draws all of it or one of LAYERS, `signature` tells what a layer shows
        and `layer_rects` where. Returns the user's requests, as `frame`."""
        imgui, implot = self._imgui, self._implot
        imgui.set_current_context(self._ctx)
        implot.set_current_context(self._plot_ctx)
        self._backend.process_inputs()
        imgui.new_frame()
        actions: list[Action] = []
        if view.show_hud:
            self.hud.draw(view, imgui, implot)
        if view.phenomena is not None and view.phenomena.timelines:
            io = imgui.get_io()
            hud = self.hud
            timeline.draw(list(view.phenomena.timelines), self.font_px, imgui, implot,
                          placement.scaled(view.subject,
                                           (io.display_size.x, io.display_size.y)),
                          [hud.rect, hud.caption.rect] if view.show_hud else [])
        if view.show_panel:
            actions = self.panel.draw(view, imgui)
        self._panel_shown = view.show_panel
        # What the director keeps the Slinkies out of (pixels, y down): the HUD, its
        # caption while it shows, and the panel. (They move out of the Slinkies' way too:
        # overlay/placement.py; the timeline only moves.)
        shown = [self.hud.rect, self.hud.caption.rect] if view.show_hud else []
        self.reserved = [r for r in shown + [self.panel.rect] * view.show_panel
                         if r[2] > r[0] and r[3] > r[1]]
        if view.replay is not None and view.replay.playing:
            self._badge(f"replay \u00d7{scale_text(view.replay.speed)}")
        if view.notice:
            self._notice(view.notice)
        if view.show_help and view.help_lines:
            self._help(view.help_lines)
        imgui.render()
        data = imgui.get_draw_data()
        # Once per frame, whichever layers get drawn: the backend's render asks again.
        data.scale_clip_rects(imgui.get_io().display_framebuffer_scale)
        self._data = data
        boxes = _rects(imgui, data)
        self.rects = [r for _, r in boxes]
        self.layer_rects = {name: [r for layer, r in boxes if layer == name]
                            for name in LAYERS}
        return actions

    def render(self, layer: str | None = None, premultiplied: bool = False) -> None:
        """Draw the frame `build` made (layer None: all of it; else only the draw lists of
        that one of LAYERS) into the bound framebuffer; `premultiplied` as in `frame`."""
        lists = [d for d in self._data.cmd_lists
                 if layer is None or _layer(d._owner_name) == layer]
        self._backend.render(_DrawLists(lists), premultiplied)

    def signature(self, layer: str) -> tuple:
        """What the frame `build` made draws in `layer`: its vertices, indices, clip
        rectangles and textures, and its windows' boxes. Equal signatures, equal pixels."""
        out: list = [tuple(self.layer_rects[layer])]
        for d in self._data.cmd_lists:
            if _layer(d._owner_name) != layer:
                continue
            out.append(ctypes.string_at(d.vtx_buffer.data_address(),
                                        d.vtx_buffer.size() * imgui.VERTEX_SIZE))
            out.append(ctypes.string_at(d.idx_buffer.data_address(),
                                        d.idx_buffer.size() * imgui.INDEX_SIZE))
            out.extend((tuple(c.clip_rect), c.tex_ref.get_tex_id(), c.elem_count,
                        c.idx_offset, c.vtx_offset) for c in d.cmd_buffer)
        return tuple(out)

    def close(self) -> None:
        """Free the overlay's GL objects (call while the window's context is current,
        before the window closes) and stop taking the window's events."""
        if self._closed:
            return
        self._closed = True
        try:
            self.window.remove_handlers(self._input)
        except Exception:  # noqa: BLE001, S110 - a closed window has no handlers left
            pass
        imgui, implot = self._imgui, self._implot
        imgui.set_current_context(self._ctx)
        self._backend.shutdown()
        implot.destroy_context(self._plot_ctx)
        imgui.destroy_context(self._ctx)

    # -- parts ---------------------------------------------------------------------
    def _over_panel(self, x: float, y: float) -> bool:
        """Whether screen point (x, y), y down, is on the panel as last drawn."""
        x0, y0, x1, y1 = self.panel.rect
        return self._panel_shown and x0 <= x < x1 and y0 <= y < y1

    def _io(self) -> Any:
        self._imgui.set_current_context(self._ctx)
        return self._imgui.get_io()

    def _centre_window(self, name: str, y: float, alpha: float) -> None:
        imgui = self._imgui
        io = imgui.get_io()
        imgui.set_next_window_pos((io.display_size.x / 2, io.display_size.y * y),
                                  imgui.Cond_.always, (0.5, 0.5))
        imgui.set_next_window_bg_alpha(alpha)
        imgui.begin(name, None, _PASSIVE | imgui.WindowFlags_.always_auto_resize)
        # Above the panel, which comes to the front when clicked; without taking focus.
        imgui.internal.bring_window_to_display_front(imgui.internal.get_current_window())

    def _notice(self, text: str) -> None:
        imgui = self._imgui
        self._centre_window("##notice", 0.5, 0.7)
        imgui.push_font(None, NOTICE_SIZE * self.font_px)
        imgui.text(text)
        imgui.pop_font()
        imgui.end()

    def _badge(self, text: str) -> None:
        imgui = self._imgui
        self._centre_window("##badge", 0.08, 0.6)
        imgui.push_font(None, NOTICE_SIZE * self.font_px)
        imgui.text_colored((1.0, 0.85, 0.3, 1.0), text)
        imgui.pop_font()
        imgui.end()

    def _help(self, lines: list[tuple[str, str]]) -> None:
        imgui = self._imgui
        # Smaller type when the table would not fit the window's height.
        row = imgui.get_text_line_height() + 2 * imgui.get_style().cell_padding.y
        fit = 0.92 * imgui.get_io().display_size.y / ((len(lines) + 2.5) * row)
        imgui.push_font(None, self.font_px * min(1.0, fit))
        self._centre_window("##help", 0.5, 0.85)
        imgui.text_colored((1.0, 0.85, 0.4, 1.0), "Keys")
        imgui.separator()
        if imgui.begin_table("##keys", 2, imgui.TableFlags_.sizing_fixed_fit):
            for keys, what in lines:
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text_colored((0.6, 0.85, 1.0, 1.0), keys)
                imgui.table_next_column()
                imgui.text(what)
            imgui.end_table()
        imgui.end()
        imgui.pop_font()


def _passive_flags() -> int:
    f = imgui.WindowFlags_
    return int(f.no_decoration | f.no_saved_settings | f.no_inputs | f.no_focus_on_appearing
               | f.no_nav | f.no_move)


_PASSIVE = 0  # set by _modules(): windows that show and never take input


def font_path() -> str | None:
    p = os.path.join(os.path.dirname(imgui_bundle.__file__), "assets", "fonts", FONT)
    return p if os.path.isfile(p) else None


def _modules() -> tuple[Any, Any, Any]:
    """imgui, implot and the backend's renderer class, imported for this window system."""
    global _PASSIVE
    if "OpenGL" not in sys.modules:
        before = os.environ.get("PYOPENGL_PLATFORM")
        if pyglet.options["headless"]:
            # PyOpenGL finds the current context through the platform's API: EGL here.
            os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
        try:
            import OpenGL  # type: ignore[import-untyped]  # PyOpenGL ships no types

            # The backend's ~20 GL calls a frame would each be followed by glGetError;
            # the tests check that the overlay leaves no GL error instead.
            OpenGL.ERROR_CHECKING = False
            import OpenGL.GL  # type: ignore[import-untyped]  # the platform is chosen here
        finally:
            # Only for this process: a child process (a real window) must not inherit it.
            if before is None:
                os.environ.pop("PYOPENGL_PLATFORM", None)
    # The backends import PyOpenGL: after its platform is chosen above.
    from imgui_bundle.python_backends.pyglet_backend import (  # type: ignore[attr-defined]
        PygletProgrammablePipelineRenderer,  # imgui-bundle's types miss its Python backends
    )

    class Backend(PygletProgrammablePipelineRenderer):
        """The pure-Python pyglet backend, but timed by its own clock: the stock one
        calls pyglet.clock.tick(), which would run the app's scheduled functions."""

        _last: float | None = None

        def __init__(self, window: Any):
            super().__init__(window, attach_callbacks=False)
            self._window = window  # the stock class keeps it only when attaching

        def _update_texture(self, tex: Any) -> None:
            created = tex.status == imgui.ImTextureStatus.want_create
            super()._update_texture(tex)
            if created:
                from OpenGL import GL as gl

                last = gl.glGetIntegerv(gl.GL_TEXTURE_BINDING_2D)
                gl.glBindTexture(gl.GL_TEXTURE_2D, tex.tex_id)
                gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MIN_FILTER, gl.GL_NEAREST)
                gl.glTexParameteri(gl.GL_TEXTURE_2D, gl.GL_TEXTURE_MAG_FILTER, gl.GL_NEAREST)
                gl.glBindTexture(gl.GL_TEXTURE_2D, last)

        def render(self, draw_data: Any, premultiplied: bool = False) -> None:
            if not premultiplied:
                super().render(draw_data)
                return
            # The stock renderer blends alpha as it blends colour: into a transparent
            # buffer that would square each layer's alpha. Its module's GL, seen
            # through a proxy for this call: alpha accumulates as coverage.
            from imgui_bundle.python_backends import opengl_backend_programmable as module

            stock = module.gl
            module.gl = _CoverageGL(stock)
            try:
                super().render(draw_data)
            finally:
                module.gl = stock

        def process_inputs(self) -> None:
            now = time.perf_counter()
            dt = now - self._last if self._last is not None else 1 / 60
            self.io.delta_time = max(dt, 1e-4)
            self._last = now

    _PASSIVE = _passive_flags()
    return imgui, implot, Backend


class _CoverageGL:
    """PyOpenGL's GL with glBlendFunc blending alpha as coverage (one, one - src alpha)."""

    def __init__(self, gl: Any):
        self._gl = gl

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gl, name)

    def glBlendFunc(self, src: int, dst: int) -> None:  # noqa: N802 - GL's name
        self._gl.glBlendFuncSeparate(src, dst, self._gl.GL_ONE, dst)


def _layer(name: str) -> str:
    """The layer of a window or draw list, by its (owner window's) name: the HUD, its
    children and the background list under everything, all else above."""
    hud = name == HUD or name.startswith(HUD + "/") or name == "##Background"
    return LAYERS[0] if hud else LAYERS[1]


class _DrawLists:
    """Some of a frame's draw lists, as the backend's render reads an ImDrawData (its
    clip rectangles already scaled by `Overlay.build`)."""

    def __init__(self, lists: list):
        self.cmd_lists = lists

    def scale_clip_rects(self, scale: Any) -> None:
        pass


def _rects(imgui: Any, data: Any) -> list[tuple[str, tuple[float, float, float, float]]]:
    """The boxes of the imgui windows drawn this frame with their layers (children lie
    in their parent's box; popups need not; boxes may overlap): framebuffer pixels
    (x0, y0, x1, y1), y up."""
    sx, sy = data.framebuffer_scale.x, data.framebuffer_scale.y
    h = data.display_size.y * sy
    child = imgui.WindowFlags_.child_window
    out = []
    for w in imgui.get_current_context().windows:
        if not w.active or w.hidden or (w.parent_window is not None and w.flags & child):
            continue
        x0, y0 = w.pos.x * sx, w.pos.y * sy
        x1, y1 = x0 + w.size.x * sx, y0 + w.size.y * sy
        if x1 > x0 and y1 > y0:
            out.append((_layer(w.name), (x0, h - y1, x1, h - y0)))
    return out
