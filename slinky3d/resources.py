"""Find the scene, shader and kiosk files, installed (inside the wheel) or in a source checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def data_dir(kind: str) -> Path:
    """Directory holding the shipped `scenes`, `shaders` or `kiosk` files (playlist,
    systemd unit)."""
    if kind not in ("scenes", "shaders", "kiosk"):
        raise ValueError(f"unknown resource kind {kind!r}")
    # A source checkout has them beside the package; a wheel has them inside it.
    local = _ROOT / kind
    if local.is_dir() and (_ROOT / "pyproject.toml").is_file():
        return local
    # files() of the package itself: the data folders have no __init__.py, and files()
    # of such a namespace package is a MultiplexedPath whose str() is no path.
    return Path(str(resources.files("slinky3d"))) / kind


def scene_path(name: str) -> Path:
    """A scene given as a path, or as the name of a shipped scene ("1Pa", "1Pa.toml")."""
    p = Path(name)
    if p.is_file():
        return p
    stem = p.name if p.suffix == ".toml" else p.name + ".toml"
    shipped = data_dir("scenes") / stem
    if shipped.is_file():
        return shipped
    return p  # the caller reports it as missing


def shader_path(name: str) -> Path:
    return data_dir("shaders") / name
