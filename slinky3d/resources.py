"""Find the shipped data files (scenes, shaders, sweeps, kiosk), installed or in a checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


KINDS = ("scenes", "shaders", "sweeps", "kiosk")


def data_dir(kind: str) -> Path:
    """Directory holding the shipped `scenes`, `shaders`, `sweeps` or `kiosk` files (playlist,
    systemd unit)."""
    if kind not in KINDS:
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
    return _named("scenes", name)


def sweep_path(name: str) -> Path:
    """A sweep spec given as a path, or as the name of a shipped one ("walking")."""
    return _named("sweeps", name)


def shipped_names(kind: str) -> list[str]:
    """The names of the shipped TOML files of a kind, sorted."""
    return sorted(p.stem for p in data_dir(kind).glob("*.toml"))


def _named(kind: str, name: str) -> Path:
    p = Path(name)
    if p.is_file():
        return p
    stem = p.name if p.suffix == ".toml" else p.name + ".toml"
    shipped = data_dir(kind) / stem
    if shipped.is_file():
        return shipped
    return p  # the caller reports it as missing


def shader_path(name: str) -> Path:
    return data_dir("shaders") / name
