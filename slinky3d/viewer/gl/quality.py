"""Quality presets (software rasterizer vs GPU), the stage, and small GL helpers."""

from __future__ import annotations

from dataclasses import dataclass, replace

import moderngl
import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import Look
from slinky3d.viewer import geometry as geo

SOFTWARE = ("llvmpipe", "softpipe", "swrast", "swiftshader", "software", "lavapipe")
LIGHT_DIR = np.array([0.35, 1.0, 0.55]) / np.linalg.norm([0.35, 1.0, 0.55])
KEY = np.array([1.0, 0.96, 0.90]) * 2.4  # as in shaders/common.glsl


@dataclass(frozen=True)
class Quality:
    """Cost knobs: MSAA samples (0 none), FXAA, shadow map size and taps, helix segments.

    self_shadow: whether the Slinky receives shadows too (floor, stairs and holders always do).
    """

    name: str
    samples: int
    fxaa: bool
    shadow_size: int
    shadow_taps: int
    segments: int
    self_shadow: bool = True


QUALITY = {
    "gpu": Quality("gpu", samples=8, fxaa=False, shadow_size=2048, shadow_taps=4, segments=40),
    # On llvmpipe 4x MSAA triples the frame time and every texture tap counts: FXAA over
    # the objects only, a small shadow map (its cost is its area), shadows on the floor
    # only, and 12 segments per half turn (a 55-pixel hoop still looks round).
    "software": Quality("software", samples=0, fxaa=True, shadow_size=512, shadow_taps=1,
                        segments=12, self_shadow=False),
}


def is_software(renderer_name: str) -> bool:
    """Whether the GL_RENDERER string names a CPU rasterizer."""
    return any(w in renderer_name.lower() for w in SOFTWARE)


def choose_quality(ctx, name: str = "auto") -> Quality:
    """`name` "auto" picks "software" on a CPU rasterizer and "gpu" elsewhere."""
    if name == "auto":
        name = "software" if is_software(ctx.info["GL_RENDERER"]) else "gpu"
    if name not in QUALITY:
        raise SlinkyError(f"unknown quality {name!r} (known: auto, {', '.join(QUALITY)})")
    q = QUALITY[name]
    return replace(q, samples=min(q.samples, ctx.max_samples) if q.samples else 0)


def headless_context() -> moderngl.Context:
    """A standalone EGL context (no display needed; llvmpipe without a GPU)."""
    try:
        return moderngl.create_standalone_context(backend="egl", require=330)
    except Exception as e:  # noqa: BLE001 - any failure here means "no GL"
        raise SlinkyError(f"cannot create a headless OpenGL context (EGL): {e}") from None


@dataclass(frozen=True)
class Stage:
    """What stays put during a run: the floor height and the region the floor is built on."""

    floor_y: float
    centre_x: float
    size: float  # m, the scene's extent; sets the floor's size, fade and tiles


def stage_for(look: Look, snap: Snapshot, reach: float | None = None) -> Stage:
    """The stage for a scene, from its look and its first snapshot.

    reach: the lowest y the Slinkies are expected to get to (e.g. hanging from a held
    end after a release); the automatic floor goes below that too.
    """
    lo, hi = geo.bounds(snap, pad=0.0)
    if reach is not None:
        lo[1] = min(lo[1], reach)
    for x0, x1, _ in look.stairs:
        lo[0], hi[0] = min(lo[0], x0), max(hi[0], x1)
    size = float(max(hi[0] - lo[0], hi[1] - lo[1], 0.3))
    floor_y = look.floor_y
    if floor_y is None:
        floor_y = float(lo[1] - max(0.08, 0.1 * (hi[1] - lo[1])))
    return Stage(float(floor_y), 0.5 * float(lo[0] + hi[0]), size)


def lin(rgb) -> tuple[float, float, float]:
    """Display colour -> linear light, gamma 2 (the shaders' tonemap ends with a sqrt)."""
    return tuple(float(c) ** 2 for c in rgb)


def tonemap(c: np.ndarray) -> np.ndarray:
    """shaders/common.glsl's tonemap, on the CPU."""
    c = np.clip((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14), 0.0, 1.0)
    return np.sqrt(c)


def floor_colours(look: Look) -> tuple[tuple, tuple]:
    """Display colours of the matte floor in full key light and in shadow."""
    a = np.array(lin(look.floor_colour))
    amb = np.array(lin(look.background_top)) * 0.6 + 0.08  # ambient() facing up
    out = []
    for sh in (1.0, 0.0):
        c = a * (KEY * LIGHT_DIR[1] * (0.25 + 0.75 * sh) * 0.55 + amb * 0.8)
        out.append(tuple(float(v) for v in tonemap(c)))
    return out[0], out[1]


def set_uniform(prog, name: str, value) -> None:
    """Set a uniform if the compiler kept it and its value changed (most stay put from
    frame to frame, and each call costs Python time the frame budget feels)."""
    if isinstance(value, np.ndarray):
        value = value.astype("f4").tobytes()
    last = prog.extra if isinstance(prog.extra, dict) else {}
    prog.extra = last  # the program's own cache: GL names repeat across contexts
    if last.get(name, _MISSING) == value:
        return
    last[name] = value
    if name not in prog:
        return
    u = prog[name]
    if isinstance(value, bytes):
        u.write(value)
    else:
        u.value = value


_MISSING = object()


def corners(lo, hi) -> np.ndarray:
    """(8, 3) corners of the box lo-hi."""
    return np.array([[a, b, c] for a in (lo[0], hi[0]) for b in (lo[1], hi[1])
                     for c in (lo[2], hi[2])], float)
