"""The OpenGL context without a window, and uniforms set only when they change."""

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


_MISSING = object()


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
