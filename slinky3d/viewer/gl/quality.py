"""Quality presets: what a frame may cost on a GPU and on a software rasterizer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from slinky3d.errors import SlinkyError

# Words in GL_RENDERER that name a CPU rasterizer.
SOFTWARE = ("llvmpipe", "softpipe", "swrast", "swiftshader", "software", "lavapipe")


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
AUTO = "auto"  # the quality name that picks a preset from the renderer


def is_software(renderer_name: str) -> bool:
    """Whether the GL_RENDERER string names a CPU rasterizer."""
    return any(w in renderer_name.lower() for w in SOFTWARE)


def choose_quality(ctx: Any, name: str = AUTO) -> Quality:
    """`name` "auto" picks "software" on a CPU rasterizer and "gpu" elsewhere."""
    if name == AUTO:
        name = "software" if is_software(ctx.info["GL_RENDERER"]) else "gpu"
    if name not in QUALITY:
        raise SlinkyError(f"unknown quality {name!r} (known: {AUTO}, {', '.join(QUALITY)})")
    q = QUALITY[name]
    return replace(q, samples=min(q.samples, ctx.max_samples) if q.samples else 0)
