"""The moderngl renderer: snapshots in, lit and shadowed frames out (window or headless).

Per frame: a shadow pass (depth from the key light, fitted to the casters); the
backdrop (background gradient and unshadowed floor, re-drawn only when the camera or
look changes, else copied); the Slinkies (instanced half hoops) and holders/stairs;
the floor rectangle that can hold a shadow; then anti-aliasing (MSAA resolve on a GPU,
FXAA over the objects on a software rasterizer).

Dynamic resolution (`scale` < 1, chosen by gl/dynamic_resolution.py): the same passes
draw into smaller targets, and the picture is stretched (bilinear) over the box on
screen that holds the objects and the shadowed floor; the rest of the output is the
backdrop, cached at full size and copied. On a software rasterizer a sampled pass
costs about as much per pixel as the scene, so stretching only that box is what makes
a lower scale pay.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import moderngl
import numpy as np
from pyrr import matrix44

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import Look
from slinky3d.viewer import coupling, helix, props
from slinky3d.viewer.camera import OrbitCamera, corners
from slinky3d.viewer.colour import LIGHT_DIR, floor_colours, lin
from slinky3d.viewer.gl.context import release_dropped, set_common, set_uniform, track_dropped
from slinky3d.viewer.gl.helices import Helices
from slinky3d.viewer.gl.programs import program
from slinky3d.viewer.gl.quality import Quality, choose_quality
from slinky3d.viewer.rects import Rect, outside, overlap, pieces
from slinky3d.viewer.stage import Stage, stage_for

HOLDER_COLOUR = (0.30, 0.31, 0.33, 1.0)  # rgb + gloss
SKIN_COLOUR = (0.72, 0.50, 0.38, 0.15)
SPRING_COLOUR = (1.0, 0.78, 0.15, 0.6)  # the grab coupling's coil
DAMPER_COLOUR = (0.22, 0.24, 0.28, 0.8)  # and its damper
COUPLING_SIZE = 2.5  # the coupling's size in Slinky radii: readable a few metres away
SCALE_STEP = 1 / 32  # dynamic resolution's scales are multiples: a new size is new targets
# Below this scale FXAA is left out: the stretch's bilinear filter smooths the edges
# as much (side by side at 0.5 the two pictures look alike), and on a software
# rasterizer FXAA cost 0.6-0.8 ms of a frame's 9 (docs/rendering.md).
FXAA_MIN_SCALE = 0.75


@dataclass
class Targets:
    """The offscreen buffers of one drawing size: the multisampled scene (MSAA), the
    cached backdrop, the scene as a texture, and the anti-aliased output."""

    size: tuple[int, int]
    msaa: moderngl.Framebuffer | None
    backdrop: moderngl.Framebuffer
    backdrop_c: moderngl.Framebuffer  # its colour only
    scene_tex: moderngl.Texture
    scene: moderngl.Framebuffer
    # Colour-only views for copies out: a window's depth buffer has its own format,
    # and blitting depth between different formats is an error.
    scene_c: moderngl.Framebuffer
    msaa_c: moderngl.Framebuffer | None
    out_tex: moderngl.Texture
    out: moderngl.Framebuffer
    backdrop_key: tuple | None = None  # what the backdrop was last drawn for

    @classmethod
    def make(cls, ctx: moderngl.Context, q: Quality, size: tuple[int, int]) -> Targets:
        def target(samples: int) -> moderngl.Framebuffer:
            return ctx.framebuffer(ctx.renderbuffer(size, 4, samples=samples),
                                   ctx.depth_renderbuffer(size, samples=samples))

        def texture() -> moderngl.Texture:
            tex = ctx.texture(size, 4)
            tex.filter = (moderngl.LINEAR, moderngl.LINEAR)  # FXAA's and the upscale's taps
            tex.repeat_x = tex.repeat_y = False
            return tex

        msaa = target(q.samples) if q.samples else None
        backdrop = target(q.samples)
        scene_tex = texture()
        out_tex = texture() if q.fxaa else scene_tex
        scene = ctx.framebuffer(scene_tex, ctx.depth_renderbuffer(size))
        return cls(size, msaa, backdrop, ctx.framebuffer(backdrop.color_attachments[0]),
                   scene_tex, scene, ctx.framebuffer(scene_tex),
                   ctx.framebuffer(msaa.color_attachments[0]) if msaa else None, out_tex,
                   ctx.framebuffer(out_tex) if q.fxaa else scene)


class Renderer:
    """Draws snapshots into its own framebuffer (`read()`) or a given one (a window's)."""

    def __init__(self, ctx: moderngl.Context, size: tuple[int, int] = (1280, 720),
                 quality: str = "auto", extrusion: str = "gpu"):
        self.ctx = ctx
        track_dropped(ctx)  # each frame releases what was dropped since the last
        self.released = 0  # dropped GL objects released, over the renderer's life
        self.quality: Quality = choose_quality(ctx, quality)
        q = self.quality
        d = {"SHADOW_TAPS": str(q.shadow_taps)}
        ds = d if q.self_shadow else {"SHADOW_TAPS": "0"}
        p = self.progs = {
            "helix_steel": program(ctx, "helix.glsl", {**ds, "STEEL": ""}),
            "helix_plastic": program(ctx, "helix.glsl", {**ds, "PLASTIC": ""}),
            "helix_depth": program(ctx, "helix.glsl", {"DEPTH_ONLY": ""}),
            # Holders and stairs always receive shadows: a Slinky on stairs must cast one.
            "mesh": program(ctx, "mesh.glsl", d),
            "mesh_depth": program(ctx, "mesh.glsl", {"DEPTH_ONLY": ""}),
            "floor": program(ctx, "floor.glsl", d),
            "floor_shadow": program(ctx, "floor.glsl", {**d, "SHADOWED": ""}),
            "background": program(ctx, "background.glsl"),
            "fxaa": program(ctx, "fxaa.glsl"),
            "upscale": program(ctx, "upscale.glsl"),
        }
        if extrusion == "numpy":
            for m in ("steel", "plastic"):
                p["np_" + m] = program(ctx, "helix.glsl", {**ds, "PRECOMPUTED": "",
                                                           m.upper(): ""})
        # extrusion: "gpu" (instanced) or "numpy" (the benchmark's comparison)
        self.helices = Helices(ctx, q, p, extrusion)
        self.last_triangles = {"main": 0, "shadow": 0}
        quad = ctx.buffer(np.array([0, 0, 1, 0, 0, 1, 1, 1], "f4").tobytes())
        self._floor_vaos = {k: ctx.vertex_array(p[k], [(quad, "2f", "in_xz")])
                            for k in ("floor", "floor_shadow")}
        self._bg_vao = ctx.vertex_array(p["background"], [])
        self._fxaa_vao = ctx.vertex_array(p["fxaa"], [])
        self._upscale_vao = ctx.vertex_array(p["upscale"], [])
        self._mesh_buf = ctx.buffer(reserve=4096, dynamic=True)
        s = q.shadow_size
        self.shadow_tex = ctx.depth_texture((s, s))
        self.shadow_tex.compare_func = "<="
        self.shadow_tex.filter = (moderngl.LINEAR, moderngl.LINEAR)  # 2x2 PCF for free
        self.shadow_tex.repeat_x = self.shadow_tex.repeat_y = False
        self._shadow_fbo = ctx.framebuffer(depth_attachment=self.shadow_tex)
        self._mesh_vaos: dict[str, moderngl.VertexArray] = {}
        self._decor_key: tuple | None = None  # what the props were last built for
        self._decor_mesh = np.zeros((0, 10), "f4")
        self.profile: dict[str, list[float]] | None = None  # {} to time each pass
        self._helices = True  # this frame draws the helices
        self._t = 0.0  # process time of the last profiling tick
        self.size = (0, 0)
        self.inner = (0, 0)  # the size the last frame was drawn at (scale < 1: smaller)
        self._small: Targets | None = None  # targets of the last scale below 1
        self._composed: moderngl.Framebuffer | None = None  # a scaled frame without target
        self.composed: list[tuple[int, int, int, int]] = []  # boxes stretched last frame
        # Whether the last frame drew into its target only where `redraw` and `composed`
        # say (render's `redraw`), and what restore() draws again from.
        self.partial = False
        self._last_compose: tuple[Targets, moderngl.Framebuffer] | None = None
        self._camera_key: tuple | None = None  # the backdrop's key in the last frame
        self._moving = False  # whether it changed since the frame before
        self.resize(size)

    # -- targets -------------------------------------------------------------------
    def resize(self, size: tuple[int, int]) -> None:
        if tuple(size) == self.size:
            return
        self.size = (int(size[0]), int(size[1]))
        self._full = Targets.make(self.ctx, self.quality, self.size)
        self._small = self._composed = None
        self._result = self._full.out  # what read() reads

    def _targets(self, size: tuple[int, int]) -> Targets:
        """The targets to draw a frame of `size` into (the full size's, or a scale's)."""
        if size == self.size:
            return self._full
        if self._small is None or self._small.size != size:
            self._small = Targets.make(self.ctx, self.quality, size)
        return self._small

    # -- drawing -------------------------------------------------------------------
    def render(self, snap: Snapshot, look: Look, cam: OrbitCamera, stage: Stage | None = None,
               target: moderngl.Framebuffer | None = None, extra: np.ndarray | None = None,
               helices: bool = True, tints: Sequence[np.ndarray | None] | None = None,
               marks: np.ndarray | None = None, scale: float = 1.0,
               slowmo: float = 1.0, redraw: Sequence[Rect] | None = None) -> None:
        """Draw one frame into `target` (same size) or this renderer's own buffer.

        `stage` (floor height and extent) should stay the same through a run; None
        derives it from this snapshot. `extra`: more mesh triangles ((n, 10), as
        `props`) for this frame only (the hover marker, the side view's bars);
        helices=False leaves the coils out (the side view draws bars instead).
        `tints`: per Slinky, None or (N, 4) per half hoop: a display colour and how much
        of it replaces the material's colour (0..1), e.g. viewer/marks/stretch.py's.
        `marks`: mesh triangles like `extra` drawn in the main pass only: they cast no
        shadow and leave the shadow's fit alone (a parabola down to the floor would
        widen it, and the shadowed floor with it).
        `scale` (dynamic resolution, 0.5 <= scale <= 1, in steps of SCALE_STEP): the 3D
        picture is drawn at that fraction of the size in each direction and stretched to
        the full size. Pictures that are kept (screenshots, films) are drawn at 1, the
        default.
        `slowmo`: seconds of the picture per simulated second (a film's slow motion, the
        app's time scale), so that the coils' impact flash lasts as long on screen at
        any speed (helix.impact_flash).
        `redraw` (with a `target` that still holds the last frame, scale < 1): the boxes
        on screen (x, y, w, h) where the last frame drew over the backdrop. The backdrop
        is copied only there, then this frame's boxes (`composed`) are stretched as
        usual; the rest of the target keeps its pixels, which are the same. `partial`
        says whether the frame was drawn so (at full scale it is drawn whole).
        """
        ctx, q = self.ctx, self.quality
        full = self.size
        scale = min(max(round(scale / SCALE_STEP) * SCALE_STEP, 0.5), 1.0)
        w, h = self.inner = (max(round(full[0] * scale), 1), max(round(full[1] * scale), 1))
        t = self._targets(self.inner)
        scaled = t is not self._full
        self.released += release_dropped(ctx)
        self._tick(None)
        self.last_triangles = {"main": 0, "shadow": 0}
        stage = stage or stage_for(look, snap)
        key = _backdrop_key(look, cam, stage)
        self._moving, self._camera_key = key != self._camera_key, key
        self.partial, self._last_compose = False, None
        boxes = self._decor(snap, look, stage.floor_y)
        if extra is not None and len(extra):
            boxes = np.concatenate([boxes, extra.astype("f4", copy=False)])
        self._helices = helices
        lo, hi = helix.bounds(snap, pad=0.02)
        slinky_box = (lo.copy(), hi.copy())
        if len(boxes):
            lo = np.minimum(lo, boxes[:, :3].min(axis=0))
            hi = np.maximum(hi, boxes[:, :3].max(axis=0))
        shadow_rect = self._shadow_rect(lo, hi, stage)
        light_vp, texel_m, depth_range = self._light(lo, hi, stage.floor_y, shadow_rect)
        view_proj = cam.view_proj(full[0] / full[1])
        common = {
            "eye": tuple(float(v) for v in cam.eye()), "light_dir": tuple(LIGHT_DIR),
            "bg_top_lin": lin(look.background_top), "bg_bottom_lin": lin(look.background_bottom),
            "floor_lin": lin(look.floor_colour), "light_vp": light_vp,
            "shadow_texel": 1.0 / q.shadow_size, "shadow_offset": 1.5 * texel_m,
            "shadow_bias": 2.0 * texel_m / depth_range, "shadow_map": 0,
            "pixel_size": 2.0 * np.tan(np.radians(cam.fov_deg) / 2) / h,
            "fade": max(3.0 * stage.size, 2.5 * cam.distance),
        }
        if helices:
            self.helices.upload(snap, common["eye"], slowmo, tints)
        self._tick("prepare")
        ctx.enable_only(moderngl.DEPTH_TEST)
        ctx.depth_func = "<"
        # Shadow pass (ribbons are single-sided: no culling).
        self._shadow_fbo.use()
        ctx.viewport = (0, 0, q.shadow_size, q.shadow_size)
        self._shadow_fbo.clear(depth=1.0)
        self._draw_objects(snap, look, boxes, light_vp, common, depth=True)
        self._tick("shadow")
        # Backdrop, then objects front to back, then the floor they may shadow. With FXAA
        # into a window, straight into it: one full-frame copy less (on a software
        # rasterizer, a copy costs as much as drawing the Slinky), and FXAA copies only
        # the Slinkies' box out. The backdrop's depth is not needed there: nothing is
        # drawn under the floor, and the shadowed floor is depth-tested after the objects.
        direct = q.fxaa and t.msaa is None and target is not None and not scaled
        fbo: moderngl.Framebuffer = target if direct and target else (t.msaa or t.scene)
        self._draw_backdrop(t, look, cam, stage, view_proj, common)
        if direct:
            ctx.copy_framebuffer(fbo, t.backdrop_c)
            fbo.color_mask = (False, False, False, False)
            fbo.clear(depth=1.0)
            fbo.color_mask = (True, True, True, True)
        else:
            ctx.copy_framebuffer(fbo, t.backdrop)
        self._tick("backdrop")
        fbo.use()
        ctx.viewport = (0, 0, w, h)
        self.shadow_tex.use(0)
        ctx.enable(moderngl.CULL_FACE)
        if marks is not None and len(marks):
            boxes = np.concatenate([boxes, marks.astype("f4", copy=False)])
            lo = np.minimum(lo, marks[:, :3].min(axis=0))
            hi = np.maximum(hi, marks[:, :3].max(axis=0))
        self._draw_objects(snap, look, boxes, view_proj, common, depth=False)
        self._tick("objects")
        ctx.disable(moderngl.CULL_FACE)
        if look.floor:
            self._draw_floor("floor_shadow", shadow_rect, stage.floor_y, look, stage,
                             view_proj, common, h)
        self._tick("floor")
        # Anti-aliasing and output.
        out = t.out if scaled else target or t.out
        if t.msaa_c is not None:  # MSAA
            # Resolve into our own buffer (same format), then copy out like the rest:
            # a resolving blit into a window of another format is an error.
            ctx.copy_framebuffer(t.scene, t.msaa_c)
        if q.fxaa and (not scaled or scale >= FXAA_MIN_SCALE):
            # Only the Slinkies need it (the floor grid and horizon are smooth, and the
            # holders and stairs are large boxes with few edges): copy the frame, then
            # smooth just the box on screen that holds the Slinkies.
            rect = _screen_rect(cam, *slinky_box, w, h)
            if direct:
                # The box and the pixels FXAA reads around it (a blit obeys the scissor).
                x, y, rw, rh = rect
                ctx.scissor = (max(x - 4, 0), max(y - 4, 0), rw + 8, rh + 8)
                ctx.copy_framebuffer(t.scene_c, out)
            else:
                ctx.copy_framebuffer(out, t.scene_c)
            out.use()
            ctx.viewport = (0, 0, w, h)
            ctx.scissor = rect
            ctx.disable(moderngl.DEPTH_TEST)
            t.scene_tex.use(1)
            fx = self.progs["fxaa"]
            set_uniform(fx, "image", 1)
            set_uniform(fx, "texel", (1.0 / w, 1.0 / h))
            self._fxaa_vao.render(moderngl.TRIANGLES, vertices=3)
            ctx.scissor = None
        elif out is not t.scene:
            ctx.copy_framebuffer(out, t.scene_c)
        self._tick("antialias")
        if scaled:
            # Everything drawn over the backdrop lies in the objects' box (holders,
            # marks, the hand's props) and the floor rectangle their shadow may fall on.
            x0, z0, x1, z1 = shadow_rect
            floor = (np.array([x0, stage.floor_y, z0]), np.array([x1, stage.floor_y, z1]))
            rects = [_screen_rect(cam, lo, hi, *full)]
            if look.floor:
                rects.append(_screen_rect(cam, *floor, *full))
            self._compose(t, target, rects, look, cam, stage, view_proj, common,
                          redraw if target is not None else None)
            self._tick("upscale")
        else:
            self._result, self.composed = t.out, []

    def _compose(self, t: Targets, target: moderngl.Framebuffer | None, rects, look: Look,
                 cam: OrbitCamera, stage: Stage, view_proj, common,
                 redraw: Sequence[Rect] | None) -> None:
        """A frame drawn at a lower scale, at full size: the full-size backdrop copied
        (everywhere, or only inside `redraw`), then the small picture stretched over the
        boxes on screen (x, y, w, h) that hold what was drawn over its own backdrop.
        While the camera moves the full-size backdrop would be drawn afresh every frame,
        which costs more than stretching the whole small picture: that is done instead."""
        ctx = self.ctx
        if target is None:
            if self._composed is None:
                self._composed = ctx.framebuffer(ctx.renderbuffer(self.size, 4))
            target = self._result = self._composed
        if self._moving:
            rects = [(0, 0, *self.size)]
        else:
            self._draw_backdrop(self._full, look, cam, stage, view_proj, common)
            # On a software rasterizer a copy into a window is a textured draw (the
            # window's rows run the other way): a copy of the whole frame costs about as
            # much as the 3D picture at half scale. So only where the last frame's boxes
            # were and this frame's are not (which the stretch covers) is copied.
            whole = [(0, 0, *self.size)]
            self._copy_backdrop(target, whole if redraw is None else
                                [p for i, r in enumerate(redraw)
                                 for p in outside(r, [*rects, *redraw[:i]])])
        self.composed = rects
        self.partial = redraw is not None
        self._last_compose = (t, target)
        self._stretch(t, target, pieces(rects))

    def _copy_backdrop(self, target: moderngl.Framebuffer, rects) -> None:
        """The full-size backdrop copied into `rects` (x, y, w, h) of `target`."""
        for rect in rects:
            self.ctx.scissor = rect  # a blit obeys the scissor
            self.ctx.copy_framebuffer(target, self._full.backdrop_c)
        self.ctx.scissor = None

    def _stretch(self, t: Targets, target: moderngl.Framebuffer, rects) -> None:
        """The small picture stretched over `rects` (x, y, w, h) of the full-size target."""
        ctx = self.ctx
        target.use()
        ctx.viewport = (0, 0, *self.size)
        ctx.disable(moderngl.DEPTH_TEST)
        t.out_tex.use(1)
        up = self.progs["upscale"]
        set_uniform(up, "image", 1)
        set_uniform(up, "texel", (1.0 / self.size[0], 1.0 / self.size[1]))
        for rect in rects:
            ctx.scissor = rect
            self._upscale_vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.scissor = None

    def lay_into(self, target: moderngl.Framebuffer, origin: tuple[int, int]) -> None:
        """The last frame drawn at full scale into this renderer's own buffer, laid
        into `target` with its bottom-left corner at `origin` (pixels, y up): a second
        view in a corner of a window (viewer/gl/top_view.py)."""
        if self._result is not self._full.out:
            raise ValueError("lay_into needs a frame drawn at full scale without a target")
        ctx = self.ctx
        target.use()
        ctx.viewport = (*origin, *self.size)
        ctx.scissor = None
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)
        self._full.out_tex.use(1)
        up = self.progs["upscale"]
        set_uniform(up, "image", 1)
        set_uniform(up, "texel", (1.0 / self.size[0], 1.0 / self.size[1]))
        set_uniform(up, "origin", (float(origin[0]), float(origin[1])))
        self._upscale_vao.render(moderngl.TRIANGLES, vertices=3)
        set_uniform(up, "origin", (0.0, 0.0))

    def restore(self, rects: Sequence[Rect]) -> None:
        """The last frame drawn at a lower scale, drawn again inside `rects` (x, y, w, h)
        of its target: the same pixels as then (the overlay's changed parts are restored
        so, before it is laid over them again). Nothing without such a frame."""
        if self._last_compose is None or not rects:
            return
        t, target = self._last_compose
        self._copy_backdrop(target, rects)
        self._stretch(t, target, [c for r in pieces(rects) for b in pieces(self.composed)
                                  if (c := overlap(r, b)) is not None])

    def _tick(self, name: str | None) -> None:
        """Profiling: finish the GPU work and charge the CPU time since the last tick."""
        if self.profile is None:
            return
        self.ctx.finish()
        now = time.process_time()
        if name is not None:
            self.profile.setdefault(name, []).append(1e3 * (now - self._t))
        self._t = now

    def read(self) -> np.ndarray:
        """The last frame drawn into this renderer's own buffer, (h, w, 3) uint8, top row 0."""
        w, h = self.size
        data = self._result.read(components=3, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(h, w, 3)[::-1].copy()

    def read_rgba(self) -> np.ndarray:
        """The same frame as the driver stores it: (h, w, 4) RGBA, bottom row first (no
        conversion to RGB in the driver, no flip: what an MP4 writer converts itself)."""
        w, h = self.size
        data = self._result.read(components=4, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(h, w, 4)

    def triangles(self, snap: Snapshot) -> dict[str, int]:
        """Helix triangles drawn in the last frame (main pass, after the level of detail)
        and per shadow pass, and the most the main pass can draw."""
        n = sum(sl.N for sl in snap.slinkies)
        return {**self.last_triangles, "max": n * self.helices.template.triangles}

    # -- passes --------------------------------------------------------------------
    def _draw_backdrop(self, t: Targets, look: Look, cam: OrbitCamera, stage: Stage,
                       view_proj, common) -> None:
        """Background gradient and unshadowed floor into the targets' cached buffer."""
        key = _backdrop_key(look, cam, stage)
        if key == t.backdrop_key:
            return
        t.backdrop_key = key
        ctx = self.ctx
        ctx.enable(moderngl.DEPTH_TEST)
        t.backdrop.use()
        ctx.viewport = (0, 0, *t.size)
        t.backdrop.clear(depth=1.0)
        if look.floor:
            big = 2.0 * common["fade"]
            rect = (stage.centre_x - big, -big, stage.centre_x + big, big)
            # A hair lower than the shadow rectangle drawn over it later.
            self._draw_floor("floor", rect, stage.floor_y - 1e-4 * stage.size, look, stage,
                             view_proj, common, t.size[1])
        ctx.depth_func = "<="  # at the far plane, behind everything
        bg = self.progs["background"]
        set_uniform(bg, "bg_top", look.background_top)
        set_uniform(bg, "bg_bottom", look.background_bottom)
        self._bg_vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.depth_func = "<"

    def _draw_floor(self, name, rect, y, look: Look, stage: Stage, view_proj, common,
                    height: int) -> None:
        prog = self.progs[name]
        set_common(prog, view_proj, common)
        lit, dark = floor_colours(look)
        for k, v in (("floor_y", y), ("rect", tuple(float(r) for r in rect)),
                     ("centre", (stage.centre_x, 0.0)), ("fade", common["fade"]),
                     ("viewport_h", float(height)), ("pixel_scale", height / self.size[1]),
                     ("tile", 0.1 if stage.size < 3 else 1.0),
                     ("bg_top", look.background_top), ("bg_bottom", look.background_bottom),
                     ("floor_lit", lit), ("floor_dark", dark)):
            set_uniform(prog, k, v)
        self._floor_vaos[name].render(moderngl.TRIANGLE_STRIP)

    def _shadow_rect(self, lo, hi, stage: Stage):
        """The casters' box swept down the light onto the floor (x0, z0, x1, z1)."""
        c = corners(lo, hi)
        drop = c - LIGHT_DIR[None, :] * ((c[:, 1] - stage.floor_y) / LIGHT_DIR[1])[:, None]
        m = 0.05 * stage.size
        return (drop[:, 0].min() - m, drop[:, 2].min() - m, drop[:, 0].max() + m,
                drop[:, 2].max() + m)

    def _light(self, lo: np.ndarray, hi: np.ndarray, floor_y: float, rect):
        """Orthographic light matrix: its x-y fitted to the casters (box lo-hi), its depth
        reaching down to the floor rectangle their shadows fall on."""
        centre = 0.5 * (lo + hi)
        radius = float(np.linalg.norm(hi - lo)) * 0.5 + 1e-3
        view = matrix44.create_look_at(centre + LIGHT_DIR * 2 * radius, centre,
                                       [0.0, 0.0, -1.0], dtype=float)
        c = np.c_[corners(lo, hi), np.ones(8)] @ view
        floor = np.array([[rect[0], floor_y, rect[1], 1.0], [rect[2], floor_y, rect[3], 1.0],
                          [rect[0], floor_y, rect[3], 1.0], [rect[2], floor_y, rect[1], 1.0]])
        z = np.r_[c[:, 2], (floor @ view)[:, 2]]
        xy_lo, xy_hi = c[:, :2].min(axis=0), c[:, :2].max(axis=0)
        near, far = -z.max() - 0.01, -z.min() + 0.01
        proj = matrix44.create_orthogonal_projection(xy_lo[0], xy_hi[0], xy_lo[1], xy_hi[1],
                                                     near, far, dtype=float)
        texel = float(max(xy_hi - xy_lo)) / self.quality.shadow_size
        return view @ proj, texel, float(far - near)

    def _decor(self, snap: Snapshot, look: Look, floor_y: float) -> np.ndarray:
        """Holders and stairs as triangles (rebuilt only when a held end moves), and the
        grab coupling (every frame while it pulls)."""
        key = (look, floor_y, tuple(_holder_key(sl, snap.t) for sl in snap.slinkies))
        if key != self._decor_key:
            self._decor_key, self._decor_mesh = key, self._build_decor(snap, look, floor_y)
        grabs = [coupling.spring_damper(sl.grab, sl.grab_point, COUPLING_SIZE * sl.R,
                                        SPRING_COLOUR, DAMPER_COLOUR)
                 for sl in snap.slinkies if sl.grab is not None and sl.grab_point is not None]
        return np.concatenate([self._decor_mesh, *grabs]) if grabs else self._decor_mesh

    def _build_decor(self, snap: Snapshot, look: Look, floor_y: float) -> np.ndarray:
        parts = []
        for sl in snap.slinkies:
            held = props.grips(sl)
            left = list(zip(props.left_grips(sl), props.opening(sl, snap.t), strict=True))
            if look.anchor == "post":
                parts += [b for g in held for b in props.post_boxes(g, floor_y, HOLDER_COLOUR)]
                parts += [b for g, o in left
                          for b in props.post_boxes(g, floor_y, HOLDER_COLOUR, o)]
            elif look.anchor == "hand":
                parts += [b for g in held for b in props.hand_part_boxes(g, SKIN_COLOUR)]
                parts += [b for g, o in left
                          for b in props.hand_part_boxes(g, SKIN_COLOUR, o)]
        parts += props.stair_boxes(look.stairs, look.stairs_depth, floor_y,
                                 (*look.stairs_colour, 0.0), look.stairs_turn,
                                 look.stairs_turns)
        return np.concatenate(parts) if parts else np.zeros((0, 10), "f4")

    def _draw_objects(self, snap, look, boxes, vp, common, depth: bool) -> None:
        if self._helices:
            self.last_triangles["shadow" if depth else "main"] += self.helices.draw(
                snap, look, vp, common, depth)
        if not len(boxes):
            return
        prog = self.progs["mesh_depth" if depth else "mesh"]
        set_common(prog, vp, common)
        data = boxes.tobytes()
        if self._mesh_buf.size < len(data):
            self._mesh_buf = self.ctx.buffer(reserve=len(data) * 2, dynamic=True)
            self._mesh_vaos = {}
        self._mesh_buf.write(data)
        name = "mesh_depth" if depth else "mesh"
        if name not in self._mesh_vaos:
            self._mesh_vaos[name] = self.ctx.vertex_array(
                prog, [(self._mesh_buf, "3f 3f 4f", "in_pos", "in_normal", "in_colour")],
                skip_errors=True)
        self._mesh_vaos[name].render(moderngl.TRIANGLES, vertices=len(boxes))


def _holder_key(sl, t: float) -> tuple:
    """What a Slinky's holders (or hands) are built from: its held ends' end half hoops
    and their neighbours, and on which side of each the middle of the Slinky lies (a
    free end moves every frame, and left the holders rebuilt every frame); and the
    holders that let go, and how far open they are."""
    e = sl.ends
    key: list = [len(e), sl.R, sl.anchor_held, sl.far_held,
                 tuple((x.points.tobytes(), x.t) for x in sl.left), *props.opening(sl, t)]
    if (sl.anchor_held or sl.far_held) and len(e) >= 3:
        middle = (0.5 * (e[1:] + e[:-1])).mean(axis=0)
        for held, near, bar, centre in (
                (sl.anchor_held, e[:3], e[1] - e[0], 0.5 * (e[0] + e[1])),
                (sl.far_held, e[-3:], e[-1] - e[-2], 0.5 * (e[-1] + e[-2]))):
            if held:
                key += [near.tobytes(), bool(bar @ (centre - middle) >= 0)]
    return tuple(key)


def _backdrop_key(look: Look, cam: OrbitCamera, stage: Stage) -> tuple:
    """What the backdrop's pixels depend on (drawn again when it changes)."""
    return (tuple(cam.eye()), tuple(np.asarray(cam.target, float)), cam.fov_deg, look, stage)


def _screen_rect(cam: OrbitCamera, lo, hi, w: int, h: int, pad: int = 6):
    """Scissor box (x, y, width, height; GL's bottom-left origin) around a world box."""
    c = corners(lo, hi)
    clip = np.c_[c, np.ones(8)] @ cam.view_proj(w / h)
    if np.any(clip[:, 3] <= 1e-6):
        return (1, 1, w - 2, h - 2)  # the box reaches behind the eye: smooth everything
    ndc = clip[:, :2] / clip[:, 3:4]  # as cam.project, from the same product
    px = np.c_[(ndc[:, 0] + 1) * 0.5 * w, (1 - ndc[:, 1]) * 0.5 * h]
    # A pixel inside the frame: FXAA's neighbour fetches then never leave the image.
    x0, x1 = int(max(px[:, 0].min() - pad, 1)), int(min(px[:, 0].max() + pad, w - 1))
    y0, y1 = int(max(h - px[:, 1].max() - pad, 1)), int(min(h - px[:, 1].min() + pad, h - 1))
    return (x0, y0, max(x1 - x0, 0), max(y1 - y0, 0))
