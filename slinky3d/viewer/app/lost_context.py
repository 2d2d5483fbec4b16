"""What a lost GL context leaves behind, and how its errors look: the window makes its GL
objects again after one (window.Viewer.recreate_gl), the kiosk decides when
(kiosk/exhibit.py)."""

from __future__ import annotations

from typing import Any

import moderngl


def is_gl_error(e: Exception) -> bool:
    """moderngl's, PyOpenGL's and pyglet's GL errors (a lost context raises them)."""
    if isinstance(e, moderngl.Error):
        return True
    mod = type(e).__module__ or ""
    return mod.startswith("OpenGL") or type(e).__name__ == "GLException"


def release_gl(obj: Any, depth: int = 6) -> int:
    """Release the moderngl objects `obj` holds, in its attributes and those of the
    slinky3d objects it holds, in dicts, lists and tuples, a few levels deep, and a
    framebuffer's attachments (made inline, they are held by nothing else); returns how
    many. Errors are ignored: the context may be gone."""
    seen: set[int] = set()
    count = 0

    def walk(x: Any, d: int) -> None:
        nonlocal count
        if d < 0 or id(x) in seen or isinstance(x, moderngl.Context):
            return
        seen.add(id(x))
        module = type(x).__module__ or ""
        if module.startswith("moderngl") and hasattr(x, "release"):
            if isinstance(x, moderngl.Framebuffer):
                try:  # (a released one has none)
                    parts = (*(x.color_attachments or ()), x.depth_attachment)
                except Exception:  # noqa: BLE001 - gone already
                    parts = ()
                for a in parts:
                    if a is not None:
                        walk(a, d)
            try:
                x.release()
                count += 1
            except Exception:  # noqa: BLE001, S110 - gone already
                pass
            return
        if isinstance(x, dict):
            items = list(x.values())
        elif isinstance(x, list | tuple):
            items = list(x)
        elif module.startswith("slinky3d") and hasattr(x, "__dict__"):
            items = list(vars(x).values())
        else:
            return
        for v in items:
            walk(v, d - 1)

    walk(obj, depth)
    return count
