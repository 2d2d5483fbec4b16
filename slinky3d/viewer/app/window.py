"""The interactive app's pyglet window and its draw loop: plays a scene from the solver
thread, draws the 3D picture (gl/renderer.py) and the overlay (overlay/layer.py: HUD and
panel) at a paced frame rate, quits cleanly.

The window holds its parts and joins them: the mouse and keys (controls.py), the instant
replay (instant_replay.py), clips (film/clips.py), the 3D marks (phenomena.py) and
what the overlay shows (views.py). A key's action (keys.BINDINGS) is looked up in
one table, `actions`: action -> handler, filled by the window and its parts; the policy
it is given (policy.py; the kiosk's: kiosk/exhibit.py) turns actions off or handles
them its own way.

The UI thread never waits on the solver: it sends commands (runtime/commands.py) and
draws the newest pair of published snapshots, interpolated.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import moderngl
import numpy as np
import platformdirs
import pyglet  # its submodules (window, gl, clock, app) load on first use
from PIL import Image

from slinky3d.engines import THREE_D
from slinky3d.errors import SlinkyError
from slinky3d.runtime import commands
from slinky3d.runtime.commands import Command
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.snapshot import Snapshot, lerp
from slinky3d.runtime.source import Source
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import edit
from slinky3d.scene.loader import load, shipped
from slinky3d.scene.look import CAMERA_MODES, CameraHint, Look
from slinky3d.scene.reach import lowest, reach_of
from slinky3d.scene.spec import Scene
from slinky3d.viewer import coupling
from slinky3d.viewer.app import keys, picking
from slinky3d.viewer.app.controls import Controls
from slinky3d.viewer.app.impact_sound import ImpactSound
from slinky3d.viewer.app.instant_replay import InstantReplay
from slinky3d.viewer.app.lost_context import release_gl
from slinky3d.viewer.app.pacing import FRAME_INTERVAL, RefreshBudget, clock_base
from slinky3d.viewer.app.phenomena import Phenomena
from slinky3d.viewer.app.policy import Action, Policy
from slinky3d.viewer.app.redraw import Redraw, back_buffer_kept
from slinky3d.viewer.app.ui import UiState
from slinky3d.viewer.app.views import OverlayViews, total_energy
from slinky3d.viewer.camera import OrbitCamera, frame_snapshots
from slinky3d.viewer.director import FOLLOW, Director
from slinky3d.viewer.film.clips import Clips
from slinky3d.viewer.gl import top_view
from slinky3d.viewer.gl.dynamic_resolution import ResolutionController
from slinky3d.viewer.gl.renderer import Renderer
from slinky3d.viewer.gl.top_view import TopView
from slinky3d.viewer.jobs import HEADLESS_HINT
from slinky3d.viewer.overlay import placement
from slinky3d.viewer.overlay.cache import OverlayCache
from slinky3d.viewer.overlay.layer import Overlay, OverlayView
from slinky3d.viewer.overlay.panel import ApplyParams, ClosePanel, SaveScene, Scrub
from slinky3d.viewer.stage import stage_for

MESSAGE_S = 5.0  # wall s a message stays up
FONT_PX = 22  # the overlay's font: readable from a metre away on a laptop
MARKER_COLOUR = (1.0, 0.85, 0.3, 1.0)
BAR_PX = 1.3  # the side view's bars, pixels across
LAYOUT_PASSES = 3  # the first frame's overlay layouts before its picture (see _draw)
JUMP_S = 0.5  # simulated s between frames past which the director frames afresh
PACING = (commands.Pause, commands.Resume, commands.TogglePause, commands.Step,
          commands.TimeScale, commands.Reset)


def pictures_dir() -> Path:
    """Where P saves screenshots: the user's pictures folder."""
    return Path(platformdirs.user_pictures_dir())


class Viewer:
    """One window showing one scene (and the scenes the user opens from it)."""

    def __init__(self, scene: Scene, look: Look, hint: CameraHint, size: tuple[int, int],
                 quality: str = "auto", max_frames: int = 0, save_frame: Path | None = None,
                 source: Source | None = None, live: bool = True,
                 policy: Policy | None = None, dynamic_resolution: bool = True):
        # No hidden extra context; and no GL error checks after pyglet's own calls, which
        # would trip over the state moderngl leaves.
        pyglet.options["shadow_window"] = False
        pyglet.options["debug_gl"] = False
        try:
            # pyglet.gl.Config is the platform's concrete class at run time.
            config = pyglet.gl.Config(  # type: ignore[abstract]
                double_buffer=True, depth_size=24, major_version=3, minor_version=3,
                forward_compatible=True)
            self.window = pyglet.window.Window(width=size[0], height=size[1],
                                               caption=_title(scene), resizable=True,
                                               config=config, vsync=False)
        except Exception as e:  # noqa: BLE001 - no display, no GL 3.3: one clear line
            raise SlinkyError(f"cannot open a window ({type(e).__name__}: {e}); "
                              f"{HEADLESS_HINT}") from None
        self.policy = policy or Policy()
        self.quality = quality
        self.ctx = moderngl.create_context()
        self.max_frames, self.save_frame = max_frames, save_frame
        self.frames = 0
        self.last_frame: np.ndarray | None = None
        self.live = live  # False: a logged session plays; the hand does nothing
        self.source: Source = source or SimThread(scene)  # the UI never waits for it
        fb = self.window.get_framebuffer_size()
        self.renderer = Renderer(self.ctx, fb, quality=quality)
        self.top_view = TopView(self.ctx, quality)  # its renderer made when first shown
        # The 3D picture's scale, moved toward the frame budget (None: always full).
        self.resolution = ResolutionController(FRAME_INTERVAL) if dynamic_resolution else None
        self._render_s: float | None = None  # the last frame's 3D picture, wall s
        self._overlay_at: float | None = None  # s into the last frame its overlay began
        self.budget = RefreshBudget(FRAME_INTERVAL)
        self._screen, self._screen_size = self.ctx.screen, tuple(fb)
        # What each frame draws again (a kept back buffer: only what changed).
        self.redraw = Redraw(back_buffer_kept(self.window, self._screen))
        self.pictures = pictures_dir
        self._due = 0.0  # perf_counter s the next frame is due (run, _pace)
        self._message_until = 0.0
        # the parts
        self.ui = UiState()
        self.instant_replay = InstantReplay(self.source, self.send, self.say)
        self.clips = Clips(self.source, lambda: self.scene, self.say, keys.CLIP_KEEP, live)
        self.phenomena = Phenomena(self.source, lambda: self.scene, lambda: self.stage,
                                   self.say, ImpactSound())
        self.views = OverlayViews(self.source, self.instant_replay, self.ui, live)
        self.camera: OrbitCamera
        self._camera_3d: OrbitCamera  # the 3D camera while the side view shows
        self.director: Director  # moves the 3D camera (viewer/director.py) ...
        self.camera_held = False  # ... unless the mouse has taken it, until C
        self._directed: tuple[float, float] | None = None  # (snapshot t, wall s) last directed
        pair = self.source.latest_pair()
        self._stale: tuple | None = None  # the pair published before a Load
        self._set_scene(scene, look, hint, pair[1] if pair and pair[1] is not None else None)
        self.shown = self._last[1]  # the snapshot drawn last
        self.controls = Controls(self)
        self.actions: dict[str, Action] = self._actions()
        w = self.window
        w.push_handlers(on_draw=self.on_draw, on_resize=self.on_resize,
                        on_close=self.on_close, **self.controls.handlers())
        # After the app's handlers: pyglet calls the overlay's first, and what its panel
        # takes (a click on a slider, a key in a field) stops there.
        self._make_overlay()
        self.policy.bind(self)

    def _make_overlay(self) -> None:
        self.overlay = Overlay(self.window, FONT_PX)
        self.overlay.hud.caption.enabled = self.policy.hud_caption
        self._overlay_cache = OverlayCache(self.ctx, self.overlay)

    # -- the key actions -----------------------------------------------------------
    def _actions(self) -> dict[str, Action]:
        """action (keys.BINDINGS) -> handler: the window's, its parts', the policy's."""
        table: dict[str, Action] = {
            "pause": lambda i: self.pause(), "step": lambda i: self.step(),
            "slower": lambda i: self.set_scale(self.ui.scale_index + 1),
            "faster": lambda i: self.set_scale(self.ui.scale_index - 1),
            "reset": lambda i: self.reset(), "scene": self.open_shipped,
            "side_view": lambda i: self.toggle_side_view(),
            "top_view": lambda i: self._flip("top_view"),
            "panel": lambda i: self._flip("show_panel"),
            "help": lambda i: self._flip("show_help"),
            "screenshot": lambda i: self.screenshot(),
            "fullscreen": lambda i: self.window.set_fullscreen(not self.window.fullscreen),
            "caption": lambda i: self.toggle_caption(),
            "camera": lambda i: self.frame_camera(), "quit": lambda i: self.quit(),
            "camera_mode": lambda i: self.next_camera_mode(),
            **self.controls.actions(), **self.instant_replay.actions(),
            **self.clips.actions(), **self.phenomena.actions()}
        table.update(self.policy.actions())
        for action in self.policy.off:
            table[action] = _nothing
        missing = ({b.action for b in keys.BINDINGS} - set(table) - set(keys.DIRECTIONS)
                   - set(keys.TWISTS))
        if missing:  # a binding added to keys.py without its handler
            raise RuntimeError(f"key actions without a handler: {sorted(missing)}")
        return table

    def press(self, action: str, modifiers: int = 0, index: int = 0) -> None:
        """Do what a key's action says (keys.BINDINGS); `index`: which of its keys."""
        if action in keys.DIRECTIONS:
            self.controls.drive_key(action, modifiers)
        elif action in keys.TWISTS:
            self.controls.twist_key(action, modifiers)
        else:
            self.actions[action](index)

    def _flip(self, name: str) -> None:
        setattr(self.ui, name, not getattr(self.ui, name))
        self.redraw.invalidate()  # a corner or view gone: the next frame is drawn whole

    def pause(self) -> None:
        if self.instant_replay.in_past:
            self.instant_replay.leave_past()
            self.send(commands.Resume())
        else:
            self.send(commands.TogglePause())

    def step(self) -> None:
        self.instant_replay.leave_past()
        self.send(commands.Step(1))

    def set_scale(self, index: int) -> None:
        self.ui.scale_index = min(max(index, 0), len(keys.TIME_SCALES) - 1)
        scale = keys.TIME_SCALES[self.ui.scale_index]
        self.send(commands.TimeScale(scale))
        self.say(f"time scale {_fraction(scale)}")

    def reset(self) -> None:
        self.instant_replay.leave_past()
        self.controls.drop_hand()
        self.send(commands.Reset())

    def open_shipped(self, index: int) -> None:
        """Keys 1-9: the shipped scenes in the order of their names."""
        paths = sorted(shipped(), key=lambda p: p.stem)
        if index >= len(paths):
            return
        self.open_scene(load(paths[index]))
        self.say(f"{index + 1}: {paths[index].stem}")

    def toggle_side_view(self) -> None:
        if self.ui.side_view:
            self.camera, self.ui.side_view = self._camera_3d, False
            return
        self._camera_3d = self.camera
        self.camera = replace(self._frame(self.window.get_framebuffer_size()), yaw=0.0,
                              pitch=0.0, ortho=True)
        self.ui.side_view = True

    def toggle_caption(self) -> None:
        self.overlay.hud.caption.toggle(self.scene)

    def frame_camera(self) -> None:
        """The scene's framing again (the side view's, in the side view); in 3D the
        director has the camera again."""
        if self.ui.side_view:
            cam = self._frame(self.window.get_framebuffer_size())
            self.camera = replace(cam, yaw=0.0, pitch=0.0, ortho=True)
            return
        self.camera_held = False
        self._fit_director(self.window.get_framebuffer_size())
        self.camera = self.director.start(self.shown)
        self._directed = None

    def _fit_director(self, size: tuple[int, int]) -> None:
        """The director framing for a window of `size` (the fixed camera made again)."""
        d = self.director
        if abs(d.aspect - size[0] / max(size[1], 1)) > 1e-9:
            d.base = self._frame(size)
            d.resize(size)

    def next_camera_mode(self) -> None:
        """The director's next mode (fixed, follow, cinematic), from where the camera is."""
        d = self.director
        mode = CAMERA_MODES[(CAMERA_MODES.index(d.mode) + 1) % len(CAMERA_MODES)]
        d.set_mode(mode, self._camera_3d if self.ui.side_view else self.camera)
        self.camera_held = False
        self.say(f"camera: {mode}")

    def screenshot(self) -> None:
        folder = self.pictures()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / time.strftime("slinky3d-%Y%m%d-%H%M%S.png")
        n = 1
        while path.exists():
            n += 1
            path = folder / time.strftime(f"slinky3d-%Y%m%d-%H%M%S-{n}.png")
        Image.fromarray(self.grab_frame()).save(path)
        self.say(f"screenshot saved to {path}")

    # -- scene ---------------------------------------------------------------------
    def _set_scene(self, scene: Scene, look: Look | None = None,
                   hint: CameraHint | None = None, first: Snapshot | None = None) -> None:
        """Take a scene's look, floor and framing (at start and when one is opened)."""
        self.scene = scene
        self.look = look or scene.look
        self.hint = hint or scene.camera
        if first is None:
            first = Simulation(scene).snapshot()
        self._last = (first, first)
        self.views.energy_start = total_energy(first)  # the gravity bar is relative to it
        self._display_t: float | None = None
        self._display_wall = 0.0
        reach, fall = reach_of(scene)
        self.stage = stage_for(self.look, first, lowest(reach, fall))
        # The fixed camera shows the start and where a held Slinky will swing down to.
        self._frame = lambda s: frame_snapshots((first,), s, self.hint, self.stage, reach)
        size = self.window.get_framebuffer_size()
        self.director = Director(self.hint.mode or FOLLOW, self._frame(size), size,
                                 self.stage.floor_y if self.look.floor else None)
        self.camera = self.director.start(first)
        self._camera_3d = self.camera
        self.camera_held, self._directed = False, None
        self.box = picking.scene_box(first, max(1.0, self.stage.size))
        self.ui.top_view = self.three_d  # a scene in 3D opens with the view from above
        self.window.set_caption(_title(scene))

    def open_scene(self, scene: Scene) -> None:
        """Replace the running scene (keys 1-9, the panel): the solver loads it."""
        if not self.live:
            self.say("replaying a session: open scenes in `slinky3d run`")
            return
        self.send(commands.Load(scene))
        self._stale = self.source.latest_pair()
        self.instant_replay.leave_past()
        self.controls.drop_hand()
        self.controls.hands.clear()
        side = self.ui.side_view
        self.ui.side_view = False
        self._set_scene(scene)
        if side:
            self.toggle_side_view()

    def send(self, cmd: Command) -> None:
        """A command to the solver; playing a logged session, only pacing ones (the
        session's own commands move the Slinky)."""
        if self.live or isinstance(cmd, PACING):
            self.source.send(cmd)

    def say(self, text: str) -> None:
        self.ui.message, self._message_until = text, time.perf_counter() + MESSAGE_S

    @property
    def three_d(self) -> bool:
        """Whether the scene runs on the 3D solver: the hand then moves in 3D (a drag at
        the grabbed point's depth, the drive keys along the ground)."""
        return self.scene.solver == THREE_D

    def can_grab(self) -> bool:
        """Whether the hand may take hold: live play, neither replaying nor scrubbing."""
        return self.live and not self.instant_replay.in_past

    # -- the overlay ---------------------------------------------------------------
    def do_action(self, action: object) -> None:
        """Carry out an action the overlay's panel returned."""
        if not self.policy.allows(action) or self.phenomena.action(action):
            return
        if isinstance(action, ApplyParams):
            self.open_scene(edit.with_values(self.scene, action.values))
            if self.live:
                self.say("new parameters: static shape solved, restarted")
        elif isinstance(action, SaveScene):
            path = edit.save(self.scene, action.path)
            self.say(f"scene saved to {path}")
        elif isinstance(action, Scrub):
            self.instant_replay.scrub(action.t)
        elif isinstance(action, ClosePanel):
            self.ui.show_panel = False

    def overlay_view(self, snap: Snapshot, now: float | None = None) -> OverlayView:
        now = time.perf_counter() if now is None else now
        view = self.views.view(self.scene, snap, now)
        view.phenomena = self.phenomena.view(snap, now)
        view.help_lines = self.policy.help_lines(view.help_lines)
        w, h = self._screen_size
        subject = placement.subject(snap, self.camera, w / max(h, 1))
        if self.ui.top_view and not self.ui.side_view and w and h:
            # the view from above's corner: the caption keeps out of it as of the Slinky
            x0, y0, x1, y1 = top_view.reserved((w, h))
            subject.append((x0 / w, y0 / h, x1 / w, y1 / h))
        view.subject = tuple(subject)
        if self.resolution is not None:  # the scale the last picture was drawn at
            view.render_scale = self.renderer.inner[0] / max(self.renderer.size[0], 1)
        return view

    # -- drawing -------------------------------------------------------------------
    def on_draw(self) -> None:
        now = time.perf_counter()
        try:
            self.policy.before_frame(now)
            if self.window.context is None:  # closed before the frame
                return
            self._draw(now)
        except Exception as e:
            if not self.policy.frame_failed(e):
                raise
            return
        self.policy.after_frame(now)

    def _draw(self, now: float) -> None:
        size = tuple(self.window.get_framebuffer_size())
        if 0 in size:
            return  # minimised
        if size != self._screen_size:
            # The window's framebuffer object carries its size: detect it again.
            self.ctx.viewport = (0, 0, *size)
            self._screen = self.ctx.detect_framebuffer(0)
            self._screen_size = size
            self.renderer.resize(size)
            self.redraw.invalidate()
        self.views.frame_walls.append(now)
        self.controls.flush_drag()
        snap = self._snapshot_now(now)
        self.shown = snap
        self.phenomena.observe(snap, now)
        self.controls.update_hover()
        self.clips.poll()
        if self.frames == 0:
            # The overlay's boxes have their sizes once imgui has laid them out, and they
            # and the director's room depend on each other: the first picture waits for
            # them to settle (each pass frames afresh).
            for _ in range(LAYOUT_PASSES):
                self._direct(snap, now, size)
                self.overlay.build(self.overlay_view(snap, now))
                self._directed = None
        self._direct(snap, now, size)
        start = time.perf_counter()
        top = self.ui.top_view and not self.ui.side_view
        redraw = None if self.policy.draws_over else self.redraw.rects()
        self._render(snap, self._screen, self.render_scale, redraw)
        corner = []
        if top:  # laid over whatever the main picture drew there, every frame
            x, y, cw, ch = self.top_view.draw(
                snap, self.look, self.stage, self.camera.yaw, self._screen, size,
                fresh=self.frames % top_view.EVERY == 0)
            corner = [(x, y, cw, ch)]
        if self.resolution is not None:
            # A software rasterizer draws at the next flush: finish, so that the time
            # measured is the picture's, not only the calls'.
            self.ctx.finish()
            self._render_s = time.perf_counter() - start
        r = self.renderer
        # Where this frame drew again (None: everywhere), for the overlay to lay over.
        drawn = [*redraw, *r.composed, *corner] if redraw is not None and r.partial else None
        self._overlay_at = time.perf_counter() - now
        self._overlay(snap, now, drawn, wait=not self.budget.room(self._overlay_at))
        # The corner is not among the boxes: it is laid again each frame while shown,
        # and turning it off (_flip) draws the next frame whole.
        self.redraw.drawn(r.composed)
        self.frames += 1
        if self.max_frames and self.frames >= self.max_frames:
            # The same frame again into the renderer's own buffer: reading the window's
            # back buffer through moderngl is an error on the default framebuffer.
            self._render(snap, None)
            self.last_frame = self.renderer.read()
            # Not from inside the draw: pyglet is iterating over its windows.
            pyglet.clock.schedule_once(lambda dt: self.quit(), 0.0)

    def _direct(self, snap: Snapshot, now: float, size: tuple[int, int]) -> None:
        """The director's camera for this frame: it follows the simulated time shown, or
        the wall clock times the time scale where that is more (paused, it still
        settles). It holds while the mouse holds the camera or a Slinky, and in the side
        view; a jump back in time (a reset, the instant replay) frames afresh."""
        last, self._directed = self._directed, (snap.t, now)
        if self.camera_held or self.ui.side_view or self.controls.drag == "grab":
            return
        d = self.director
        self._fit_director(size)
        d.room = self._room(snap)
        if last is None or snap.t < last[0] or snap.t - last[0] > JUMP_S:
            self.camera = d.start(snap)
            return
        wall = now - last[1]
        self.camera = d.step(snap, max(snap.t - last[0],
                                       wall * keys.TIME_SCALES[self.ui.scale_index]), wall)

    def _room(self, snap: Snapshot) -> tuple[float, float, float, float]:
        """The part of the picture the director frames the Slinkies in: out of the way of
        the HUD and the panel as last drawn (overlay/placement.room)."""
        w, h = self.window.get_size()
        boxes = placement.subject(snap, self.camera, w / h) if w and h else []
        if not boxes:
            return (0.0, 0.0, 1.0, 1.0)
        x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
        x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
        reserved = list(self.overlay.reserved)
        if self.ui.top_view and not self.ui.side_view:
            reserved.append(top_view.reserved((w, h)))
        obstacles = [(a / w, b / h, c / w, d / h) for a, b, c, d in reserved]
        return placement.room(obstacles, (x1 - x0, y1 - y0))

    @property
    def render_scale(self) -> float:
        """The scale the window's 3D picture is drawn at now (dynamic resolution)."""
        return 1.0 if self.resolution is None else self.resolution.scale

    def _render(self, snap: Snapshot, target, scale: float = 1.0,
                redraw: list[tuple[int, int, int, int]] | None = None) -> None:
        """The 3D picture; below full scale only on screen (what is kept, screenshots
        and clips, is drawn at full scale); `redraw` as Renderer.render's."""
        self.renderer.render(snap, self.look, self.camera, self.stage, target=target,
                             extra=self._extra(snap), helices=not self.ui.side_view,
                             tints=self.phenomena.tints(snap),
                             marks=self.phenomena.marks(snap), scale=scale,
                             slowmo=1.0 / self._time_scale(), redraw=redraw)

    def _time_scale(self) -> float:
        """Simulated seconds shown per wall second now (the replay's or the chosen)."""
        if self.instant_replay.replay is not None:
            return keys.REPLAY_SPEED
        return keys.TIME_SCALES[self.ui.scale_index]

    def _extra(self, snap: Snapshot) -> np.ndarray | None:
        """This frame's hand props: the hover marker, the side view's bars."""
        parts = []
        if self.ui.side_view:
            h = self.renderer.size[1]
            radius = 0.5 * BAR_PX * 2 * self.camera.half_height() / max(h, 1)
            for sl in snap.slinkies:
                colour = self.look.colour if self.look.material_for(sl.preset) == "plastic" \
                    else (0.3, 0.32, 0.36)
                parts.append(coupling.bars(sl, radius, (*colour, 0.2)))
        hover = self.controls.hover
        if hover is not None and self.controls.drag is None:
            i, k = hover
            if i < len(snap.slinkies) and k <= snap.slinkies[i].N:
                sl = snap.slinkies[i]
                parts.append(coupling.marker(sl.ends[k], 0.35 * sl.R, MARKER_COLOUR))
        return np.concatenate(parts) if parts else None

    def _snapshot_now(self, now: float) -> Snapshot:
        """What to show: the replay or scrubbed past, else the newest pair interpolated."""
        past = self.instant_replay.past_snapshot(now)
        if past is not None:
            return past
        pair = self.source.latest_pair()
        if pair is not self._stale and pair and pair[0] is not None and pair[1] is not None:
            if len(pair[1].slinkies) == len(self.scene.slinkies):
                self._last, self._stale = pair, None
        prev, cur = self._last
        return lerp(prev, cur, self._display_time(prev, cur, now))

    def _display_time(self, prev: Snapshot, cur: Snapshot, now: float) -> float:
        """The time shown: it runs with the wall clock times the time scale, within the
        newest pair (so that frames interpolate); held at its ends when the solver is
        ahead or behind, paused or reset."""
        t = self._display_t
        if t is None:
            t = prev.t
        else:
            t += (now - self._display_wall) * keys.TIME_SCALES[self.ui.scale_index]
        t = min(max(t, prev.t), cur.t)
        self._display_t, self._display_wall = t, now
        return t

    def _overlay(self, snap: Snapshot, now: float,
                 drawn: list[tuple[int, int, int, int]] | None = None,
                 wait: bool = False) -> None:
        """The 2D layer over the frame: everywhere, or only inside `drawn` (x, y, w, h),
        where the frame drew again (and where the overlay itself changed); `wait`: its
        refresh by the clock waits for a frame with room for it."""
        if self.ui.message and now > self._message_until:
            self.ui.message = ""
        view = self.overlay_view(snap, now)
        for action in self._overlay_cache.frame(view, self._screen, self._screen_size, now,
                                                drawn, self.renderer.restore, wait):
            self.do_action(action)
        self.policy.after_overlay(self._screen, self._screen_size, now)

    def on_resize(self, width: int, height: int):
        return pyglet.event.EVENT_HANDLED  # on_draw follows the framebuffer's size

    def grab_frame(self) -> np.ndarray:
        """The window as shown (3D, overlay and what the policy lays over it: the
        kiosk's placard), (h, w, 3) uint8, top row 0: drawn again now into the back
        buffer and read from it."""
        gl = pyglet.gl
        self.window.switch_to()
        self._render(self.shown, self._screen)
        if self.ui.top_view and not self.ui.side_view:
            self.top_view.draw(self.shown, self.look, self.stage, self.camera.yaw,
                               self._screen, self._screen_size)
        self._screen.use()
        self.overlay.frame(self.overlay_view(self.shown))
        self.policy.after_overlay(self._screen, self._screen_size, time.perf_counter())
        self.redraw.invalidate()  # the back buffer now holds this full-scale frame
        w, h = self._screen_size
        buf = (gl.GLubyte * (w * h * 3))()
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
        gl.glReadBuffer(gl.GL_BACK)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        gl.glReadPixels(0, 0, w, h, gl.GL_RGB, gl.GL_UNSIGNED_BYTE, buf)
        return np.frombuffer(buf, np.uint8).reshape(h, w, 3)[::-1].copy()

    def gl_objects(self) -> tuple[Any, ...]:
        """The objects that hold the window's GL objects (released on a lost context)."""
        return self.renderer, self._overlay_cache, self.top_view

    def recreate_gl(self) -> None:
        """New GL objects on the window's context (a lost one): moderngl's context, the
        renderer, the overlay (imgui's GL objects) and its cache; then the policy's."""
        self.window.switch_to()
        for obj in self.gl_objects():
            release_gl(obj)
        try:
            self.overlay.close()
        except Exception:  # noqa: BLE001, S110 - its GL objects may be gone with the context
            pass
        # A new moderngl context on the window's GL context (create_context would hand
        # back the old one, its default).
        moderngl.init_context()
        self.ctx = moderngl.get_context()
        fb = tuple(self.window.get_framebuffer_size())
        self.renderer = Renderer(self.ctx, fb, quality=self.quality)
        self.top_view = TopView(self.ctx, self.quality)
        self._screen, self._screen_size = self.ctx.screen, fb
        self.redraw.invalidate()
        self._make_overlay()
        self.policy.gl_recreated()

    def quit(self) -> None:
        """Stop the solver thread and a clip being made, free the overlay (the context
        still current), close."""
        self.clips.close()
        self.source.stop()
        if self.window.context is not None:
            self.window.switch_to()
            self.overlay.close()
            self.window.close()

    def on_close(self):
        if self.policy.close_requested():
            self.quit()
        return pyglet.event.EVENT_HANDLED

    # -- loop ----------------------------------------------------------------------
    def _pace(self, dt: float) -> None:
        """Draw a frame, then ask for the next on a fixed grid of FRAME_INTERVAL: a late
        wake-up (the OS, the solver thread holding the GIL) shortens the next wait
        instead of lengthening every period, as rescheduling from the wake-up would.
        What the frame's drawing does not catch (the buffer swap: a lost context raises
        there too) goes to the policy as a failed frame."""
        if self.window.context is None:  # closed
            return
        start = time.perf_counter()
        self._render_s = self._overlay_at = None
        try:
            self.window.draw(dt)
        except Exception as e:
            if not self.policy.frame_failed(e):
                raise
            if self.window.context is not None:
                pyglet.clock.schedule_once(self._pace, FRAME_INTERVAL)
            return
        now = time.perf_counter()
        if self.resolution is not None and self._render_s is not None:
            self.resolution.update(self._render_s, now - start)
        if self._overlay_at is not None:
            self.budget.observe(now - start, self._overlay_at, self._overlay_cache.refreshed)
        self._due = max(self._due + FRAME_INTERVAL, now)
        clock = pyglet.clock.get_default()
        pyglet.clock.schedule_once(self._pace, self._due - clock_base(clock))

    def run(self) -> int:
        """Play until the window closes; 0 on a normal quit."""
        self.views.started = time.perf_counter()
        self.source.start()
        self._due = time.perf_counter()
        pyglet.clock.schedule_once(self._pace, 0.0)
        try:
            pyglet.app.run(None)  # frames paced by _pace
        finally:
            self.source.stop()
        if self.save_frame is not None and self.last_frame is not None:
            Image.fromarray(self.last_frame).save(self.save_frame)
        return 0


def _nothing(index: int) -> None:
    """An action a policy turned off."""


def _fraction(scale: float) -> str:
    return "1" if scale >= 1 else f"1/{round(1 / scale)}"


def _title(scene: Scene) -> str:
    return f"slinky3d \u2014 {scene.title}"
