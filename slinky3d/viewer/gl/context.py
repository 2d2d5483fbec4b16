"""The OpenGL context without a window, the GL objects dropped in it released, and
uniforms set only when they change."""

from __future__ import annotations

from typing import Any, cast

import moderngl
import numpy as np

from slinky3d.errors import SlinkyError


def headless_context() -> moderngl.Context:
    """A standalone EGL context (no display needed; llvmpipe without a GPU)."""
    try:
        # moderngl's stub types each **settings value as a dict; backend is a string.
        return moderngl.create_standalone_context(
            backend="egl", require=330)  # type: ignore[arg-type]
    except Exception as e:  # noqa: BLE001 - any failure here means "no GL"
        raise SlinkyError(f"cannot create a headless OpenGL context (EGL): {e}") from None


def track_dropped(ctx: moderngl.Context) -> None:
    """Queue the GL objects whose Python objects are dropped, for `release_dropped`.

    moderngl's default leaves a dropped object (a Slinky's instance buffer replaced when
    another scene opens, the targets replaced at a resize) in the driver until the
    context ends: a kiosk that opens scenes for months grew by ~4.5 kB an opening.
    moderngl's own "auto" mode releases at garbage collection, which may run in the
    solver thread, without the context; "context_gc" only queues (a deque append, safe
    from any thread) and the frame releases the queue with the context current."""
    ctx.gc_mode = "context_gc"


def release_dropped(ctx: moderngl.Context) -> int:
    """Release the queued dropped GL objects (the context current); how many.

    Not `ctx.gc()`: an object released explicitly before it was dropped is queued as
    moderngl's InvalidObject, which has no release."""
    n = 0
    while ctx.objects:
        glo = ctx.objects.popleft()
        if not isinstance(glo, moderngl.InvalidObject):
            glo.release()
            n += 1
    return n


_MISSING = object()


def set_common(prog: moderngl.Program, vp: Any, common: dict) -> None:
    """The view-projection `vp` and the frame's `common` uniforms (`set_uniform` each)."""
    set_uniform(prog, "vp", vp)
    for k, v in common.items():
        set_uniform(prog, k, v)


def set_uniform(prog: moderngl.Program, name: str, value: Any) -> None:
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
    u = cast(moderngl.Uniform, prog[name])  # names passed here are uniforms
    if isinstance(value, bytes):
        u.write(value)
    else:
        u.value = value
