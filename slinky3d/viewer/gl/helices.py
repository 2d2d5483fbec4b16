"""The Slinkies' helices on the GPU: one half turn of flat wire (`helix.template`)
instanced once per half hoop (shaders/helix.glsl evaluates `helix.extrude`'s formula),
each Slinky's per-hoop data uploaded once a frame for both passes, and each pass drawn
at the level of detail the hoops' size on screen asks. The renderer (renderer.py) holds
one and calls it in its shadow and main passes.
"""

from __future__ import annotations

from collections.abc import Sequence

import moderngl
import numpy as np

from slinky3d.runtime.snapshot import SlinkySnapshot, Snapshot
from slinky3d.scene.look import Look
from slinky3d.viewer import helix
from slinky3d.viewer.colour import lin
from slinky3d.viewer.gl.context import set_common, set_uniform
from slinky3d.viewer.gl.quality import Quality

LODS = (6, 8, 12, 16, 24)  # segments per half turn below the preset's maximum
# Each half hoop's instance data (shaders/helix.glsl): helix.instances (C, u, b, along)
# and the impact flash, then the tint (4f: rgb and amount)
HOOP_FORMAT, HOOP_ATTRIBUTES = "3f 3f 3f 2f", ("in_hoop", "in_bar", "in_bulge", "in_hoop2")
INSTANCE_BYTES = 4 * (3 + 3 + 3 + 2 + 4)


class Helices:
    """Every Slinky's helices: `upload` once a frame, `draw` in each pass.

    progs: the renderer's programs ("helix_steel", "helix_plastic", "helix_depth", and
    "np_<material>" for extrusion "numpy": the whole mesh built in numpy and uploaded
    each frame, the benchmark's comparison)."""

    def __init__(self, ctx: moderngl.Context, q: Quality, progs: dict, extrusion: str = "gpu"):
        self.ctx, self.progs, self.extrusion = ctx, progs, extrusion
        self.template = helix.template(q.segments)
        # Shadows: each half hoop as a coarse zero-thickness ribbon (its thickness is far
        # below a shadow texel, and on a software rasterizer triangles are the cost).
        self.shadow_template = helix.template(max(6, q.segments // 2), ribbon=True)
        # Levels of detail: fewer segments when a hoop is small on screen (triangle setup
        # is what the helices cost on a software rasterizer).
        self.lods = sorted({s for s in LODS if s < q.segments} | {q.segments})
        self._tpl: dict = {}
        self._hoops: list[tuple[moderngl.Buffer | None, dict]] = []  # per Slinky

    def upload(self, snap: Snapshot, eye, slowmo: float = 1.0,
               tints: Sequence[np.ndarray | None] | None = None) -> None:
        """Each Slinky's per-hoop data, once a frame for both passes: sorted nearest the
        eye first (the shadow pass does not mind the order). `slowmo`: picture seconds
        per simulated second (the impact flash's); `tints`: per Slinky, (N, 4) or None."""
        for i, sl in enumerate(snap.slinkies):
            t = tints[i] if tints is not None and i < len(tints) else None
            tint = t if t is not None and len(t) == sl.N else np.zeros((sl.N, 4), "f4")
            inst = np.c_[helix.instances(sl), helix.impact_flash(sl, slowmo), tint
                         ].astype("f4")
            self._buffer(i, sl.N).write(_near_first(inst, eye, sl.R).tobytes())

    def draw(self, snap: Snapshot, look: Look, vp, common: dict, depth: bool) -> int:
        """Every Slinky into the bound target: the shadow pass's depth (`depth`) or the
        main pass. Returns the triangles drawn."""
        triangles = 0
        for i, sl in enumerate(snap.slinkies):
            material = look.material_for(sl.preset)
            width = look.width_for(material, sl.R)
            if self.extrusion == "numpy" and not depth:
                prog = self.progs["np_" + material]
                self._program(prog, look, vp, common)
                tpl = self._template(self.segments_for(sl, common["eye"],
                                                       common["pixel_size"]))[2]
                self._draw_numpy(sl, width, prog, tpl)
                triangles += sl.N * tpl.triangles
                continue
            name = "helix_depth" if depth else "helix_" + material
            prog = self.progs[name]
            self._program(prog, look, vp, common)
            set_uniform(prog, "R", sl.R)
            set_uniform(prog, "half_width", 0.5 * width)
            set_uniform(prog, "half_thick", 0.5 * helix.wire_thickness(sl))
            set_uniform(prog, "pixel_size", 0.0 if depth else common["pixel_size"])
            seg = None if depth else self.segments_for(sl, common["eye"], common["pixel_size"])
            vao, tpl = self._vao(i, sl.N, name, seg)
            vao.render(moderngl.TRIANGLES, instances=sl.N)
            triangles += sl.N * tpl.triangles
        return triangles

    def segments_for(self, sl: SlinkySnapshot, eye, pixel_size: float) -> int:
        """Fewest segments whose polygon stays within half a pixel of the circle."""
        if pixel_size <= 0.0:
            return self.lods[-1]
        e = helix.ends3(sl)
        centres = 0.5 * (e[1:] + e[:-1])
        d = max(float(np.min(np.linalg.norm(centres - np.asarray(eye), axis=1))) - sl.R, 1e-3)
        radius_px = sl.R / (pixel_size * d)
        for seg in self.lods:
            if radius_px * (1.0 - np.cos(np.pi / (2 * seg))) <= 0.5:
                return seg
        return self.lods[-1]

    def _program(self, prog, look: Look, vp, common: dict) -> None:
        set_common(prog, vp, common)
        set_uniform(prog, "albedo_lin", lin(look.colour))
        set_uniform(prog, "rainbow", int(look.rainbow))

    def _template(self, segments: int | None):
        """GL buffers of the template with that many segments (None: the shadow ribbon)."""
        if segments not in self._tpl:
            t = self.shadow_template if segments is None else helix.template(segments)
            self._tpl[segments] = (self.ctx.buffer(t.vertices.tobytes()),
                                   self.ctx.buffer(t.indices.tobytes()), t)
        return self._tpl[segments]

    def _buffer(self, i: int, n: int) -> moderngl.Buffer:
        """Slinky i's instance buffer (n half hoops); a new one drops its vertex arrays."""
        while len(self._hoops) <= i:
            self._hoops.append((None, {}))
        buf, vaos = self._hoops[i]
        if buf is None or buf.size != n * INSTANCE_BYTES:
            buf, vaos = self.ctx.buffer(reserve=n * INSTANCE_BYTES, dynamic=True), {}
            self._hoops[i] = (buf, vaos)
        return buf

    def _vao(self, i: int, n: int, name: str, segments: int | None):
        buf = self._buffer(i, n)
        vaos = self._hoops[i][1]
        vbo, ibo, tpl = self._template(segments)
        if (name, segments) not in vaos:
            vaos[name, segments] = self.ctx.vertex_array(
                self.progs[name],
                [(vbo, "3f 2f", "in_vert", "in_face"),
                 (buf, HOOP_FORMAT + " 4f/i", *HOOP_ATTRIBUTES, "in_tint")],
                index_buffer=ibo, index_element_size=4, skip_errors=True)
        return vaos[name, segments], tpl

    def _draw_numpy(self, sl: SlinkySnapshot, width: float, prog, tpl) -> None:
        """The numpy-extrusion path (benchmark only): whole mesh built and uploaded."""
        m = helix.extrude(sl, width, tpl)
        data = np.c_[m.positions, m.normals, m.tangents, m.along].astype("f4")
        vbo = self.ctx.buffer(data.tobytes())
        ibo = self.ctx.buffer(m.indices.tobytes())
        vao = self.ctx.vertex_array(
            prog, [(vbo, "3f 3f 3f 1f", "in_pos", "in_normal", "in_tangent", "in_along")],
            index_buffer=ibo, index_element_size=4, skip_errors=True)
        vao.render(moderngl.TRIANGLES)
        for o in (vao, vbo, ibo):
            o.release()


def _near_first(inst: np.ndarray, eye, R: float) -> np.ndarray:
    """Half hoops sorted nearest bulge first, so the early depth test skips hidden ones."""
    bulge = inst[:, 0:3] + R * inst[:, 6:9] - np.asarray(eye, "f4")
    return inst[np.argsort(np.einsum("ij,ij->i", bulge, bulge), kind="stable")]
