"""How far down a scene's Slinkies may reach: where the viewer puts the floor.

It takes a static solve, so it belongs to the scene layer: the viewer runs none.
"""

from __future__ import annotations

from slinky3d.model import chain
from slinky3d.scene.spec import Scene


def reach_of(scene: Scene) -> tuple[float | None, float | None]:
    """How low the Slinkies of a scene may get: (hanging, falling).

    hanging: from an anchor that stays held, the static hanging shape plus 15 % for the
    overshoot of a released far end. falling: a Slinky let go falls freely for the rest
    of the scene's duration. None where it does not apply. The floor goes below both;
    the camera frames only the first (a fall would shrink the view to nothing).
    """
    from slinky3d.model import static_shape  # lazily: scipy only where a floor is drawn

    hang = fall = None
    for spec in scene.slinkies:
        p, a = spec.params, spec.anchor
        if a.condition in ("held", "scripted"):
            try:
                q = static_shape.hanging(p, a.position, a.orientation)
            except Exception:  # noqa: BLE001 - only a hint for where the floor goes
                continue
            y = a.position[1] - 1.15 * (a.position[1] - chain.end_points(q, p.R)[:, 1].min())
            hang = y if hang is None else min(hang, y)
        else:
            t = max(scene.duration - (a.release_time if a.condition == "released" else 0.0),
                    0.0)
            y = float(chain.end_points(spec.q0, p.R)[:, 1].min()) - 0.5 * p.g * t * t
            fall = y if fall is None else min(fall, y)
    return hang, fall


def lowest(*ys: float | None) -> float | None:
    """The lowest of the heights given, None when none is."""
    given = [y for y in ys if y is not None]
    return min(given) if given else None
