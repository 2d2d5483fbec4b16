"""The kiosk's playlist: which scenes its attract loop plays, with what caption and for
how long, and the kiosk's settings (idle time, exit chord, replay). TOML, read through
the scene files' validator (scene/validate.py): a bad key or value is one line naming
the file and the key. Format: docs/kiosk.md.

    idle = 45                  # s without a touch before the attract loop comes back
    seconds = 20               # s each scene plays in the loop (an entry may say its own)
    exit = "ctrl+alt+shift+q"  # the only way out
    scenes = [
      "hanging-plastic",                            # a shipped scene, or a .toml file
      { name = "drop-plastic", seconds = 12, caption = "..." },
    ]

A playlist is read at start; its scenes are loaded (validated) when the loop comes to
them, so a scene file that became invalid is skipped then (`open_entry` raises the
scene's one-line SceneError; the kiosk logs it and goes on).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slinky3d.errors import SceneError
from slinky3d.resources import data_dir
from slinky3d.scene.loader import _toml_message, load
from slinky3d.scene.spec import Scene
from slinky3d.scene.validate import Context, Table, type_name

DEFAULT_PLAYLIST = "playlist.toml"  # in the shipped kiosk folder (resources.data_dir)
DEFAULT_IDLE = 45.0  # s without input before the attract loop comes back
DEFAULT_SECONDS = 20.0  # s a scene plays in the attract loop
DEFAULT_EXIT = "ctrl+alt+shift+q"
DEFAULT_REPLAY_AFTER = 0.8  # simulated s after a drop the replay shows (the collapse)
DEFAULT_SWAY = 20.0  # degrees the camera sways either way in the attract loop

# One flat table: no [section] that the scenes array could fall into by mistake.
KIOSK_KEYS = ("idle", "seconds", "exit", "replay", "replay_after", "sway", "scenes")
ENTRY_KEYS = ("name", "title", "caption", "seconds", "let_go", "set")
MODIFIERS = ("ctrl", "alt", "shift", "super")
MIN_MODIFIERS = 2  # a visitor must not find the way out by chance
# Keys a chord may end in: letters, digits, F1-F24 and a few named keys (pyglet's names).
NAMED_KEYS = ("END", "HOME", "DELETE", "INSERT", "PAUSE", "BACKSPACE", "SPACE", "TAB")


@dataclass(frozen=True)
class Chord:
    """A key with modifiers held, e.g. Ctrl+Alt+Shift+Q: `key` in pyglet's spelling."""

    modifiers: frozenset[str]
    key: str  # "Q", "_1", "F12", "END"

    def matches(self, key: str, modifiers: frozenset[str] | set[str]) -> bool:
        """Whether pressing `key` with exactly these modifiers (of MODIFIERS) is it."""
        return key == self.key and frozenset(modifiers) & set(MODIFIERS) == self.modifiers

    def __str__(self) -> str:
        names = [m.capitalize() for m in MODIFIERS if m in self.modifiers]
        return "+".join([*names, self.key.lstrip("_")])


@dataclass(frozen=True)
class Entry:
    """One scene of the attract loop. `caption`/`title` empty: the scene's own."""

    name: str  # a shipped scene's name or a scene file
    title: str = ""
    caption: str = ""
    seconds: float | None = None  # None: the playlist's
    let_go: float | None = None  # s after it opens that the loop lets go of held ends
    overrides: tuple[str, ...] = ()  # --set values


@dataclass(frozen=True)
class Playlist:
    entries: tuple[Entry, ...]
    path: str = "<playlist>"
    idle: float = DEFAULT_IDLE
    seconds: float = DEFAULT_SECONDS
    exit: Chord = Chord(frozenset(("ctrl", "alt", "shift")), "Q")
    replay: bool = True
    replay_after: float = DEFAULT_REPLAY_AFTER
    sway: float = DEFAULT_SWAY

    def seconds_of(self, entry: Entry) -> float:
        return self.seconds if entry.seconds is None else entry.seconds


def parse_chord(text: str, ctx: Context, key: str) -> Chord:
    """'ctrl+alt+shift+q' -> Chord; a bad one fails naming `key`."""
    parts = [p.strip().lower() for p in text.split("+")]
    if len(parts) < 2 or not all(parts):
        ctx.fail(key, f"expected modifiers and a key such as '{DEFAULT_EXIT}', got {text!r}")
    *mods, last = parts
    for m in mods:
        if m not in MODIFIERS:
            ctx.fail(key, f"unknown modifier {m!r} in {text!r}; expected {', '.join(MODIFIERS)}")
    if len(set(mods)) < MIN_MODIFIERS:
        ctx.fail(key, f"needs at least {MIN_MODIFIERS} different modifiers (a visitor must "
                      f"not find the way out by chance), got {text!r}")
    if re.fullmatch(r"[a-z]", last):
        name = last.upper()
    elif re.fullmatch(r"[0-9]", last):
        name = "_" + last
    elif re.fullmatch(r"f([1-9]|1[0-9]|2[0-4])", last) or last.upper() in NAMED_KEYS:
        name = last.upper()
    else:
        ctx.fail(key, f"unknown key {last!r} in {text!r}; expected a letter, a digit, F1-F24 "
                      f"or one of {', '.join(k.lower() for k in NAMED_KEYS)}")
    return Chord(frozenset(mods), name)


def _entry(ctx: Context, item: Any, i: int) -> Entry:
    where = f"scenes[{i}]"
    if isinstance(item, str):
        if not item.strip():
            ctx.fail(where, "an empty scene name")
        return Entry(item)
    t = Table(ctx, item, where, ENTRY_KEYS)
    if not t.has("name"):
        t.fail("name", "missing: each entry names a scene (a shipped name or a file)")
    name = t.string("name", "")
    if not name.strip():
        t.fail("name", "an empty scene name")
    sets = t.data.get("set", [])
    if not isinstance(sets, list) or not all(isinstance(s, str) for s in sets):
        t.fail("set", f"must be an array of KEY=VALUE strings, not {type_name(sets)}")
    return Entry(name, title=t.string("title", ""), caption=t.caption("caption", ""),
                 seconds=t.number("seconds", None, lo=1.0, hi=3600.0),
                 let_go=t.number("let_go", None, lo=0.0, hi=3600.0), overrides=tuple(sets))


def from_dict(doc: dict, where: str = "<playlist>") -> Playlist:
    """Validate a parsed playlist."""
    ctx = Context(where)
    k = Table(ctx, doc, "", KIOSK_KEYS)
    raw = doc.get("scenes")
    if raw is None:
        ctx.fail("scenes", "missing: a playlist needs scenes = [\"name\", ...]")
    if not isinstance(raw, list):
        ctx.fail("scenes", f"must be an array of scene names or tables, not {type_name(raw)}")
    if not raw:
        ctx.fail("scenes", "the array is empty")
    exit_text = k.string("exit", DEFAULT_EXIT)
    return Playlist(
        entries=tuple(_entry(ctx, item, i) for i, item in enumerate(raw)),
        path=where,
        idle=k.number("idle", DEFAULT_IDLE, lo=1.0, hi=86400.0),
        seconds=k.number("seconds", DEFAULT_SECONDS, lo=1.0, hi=3600.0),
        exit=parse_chord(exit_text, ctx, "exit"),
        replay=k.boolean("replay", True),
        replay_after=k.number("replay_after", DEFAULT_REPLAY_AFTER, lo=0.0, hi=10.0,
                              open_lo=True),
        sway=k.number("sway", DEFAULT_SWAY, lo=0.0, hi=90.0),
    )


def load_playlist(path: str | Path | None = None) -> Playlist:
    """Read a playlist file (None: the shipped default)."""
    p = Path(path) if path is not None else default_playlist()
    if not p.is_file():
        raise SceneError(str(p), "", "is a directory, not a playlist file" if p.is_dir()
                         else "no such playlist file")
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SceneError(str(p), "", f"cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SceneError(str(p), "", _toml_message(e)) from None
    return from_dict(doc, str(p))


def default_playlist() -> Path:
    return data_dir("kiosk") / DEFAULT_PLAYLIST


def scene_file(playlist: Playlist, entry: Entry) -> str:
    """Where an entry's scene is: a file beside the playlist, else the name as given
    (a shipped scene or a path; the loader says when it is neither)."""
    beside = Path(playlist.path).parent / entry.name
    return str(beside) if entry.name.endswith(".toml") and beside.is_file() else entry.name


def open_entry(playlist: Playlist, entry: Entry) -> Scene:
    """The entry's scene, loaded and validated now; a SceneError (one line) when it
    cannot be."""
    return load(scene_file(playlist, entry), entry.overrides)


def caption_of(entry: Entry, scene: Scene) -> tuple[str, str]:
    """(title, caption) the attract loop shows: the entry's, else the scene's."""
    return entry.title or scene.title, entry.caption or scene.description
