"""The app's keys: one table, read by the window (what a key does), the help overlay and
docs/app.md (what it says it does).

Keys are pyglet key names (`pyglet.window.key.NAME`); this module imports no pyglet.
`hold` actions run on press and again on release (driving the base stops with the key).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from slinky3d.viewer.overlay.caption import CAPTION_SECONDS

DRIVE_SPEED = 0.4  # m/s, the held base's speed under the arrow keys
DRIVE_FAST = 1.5  # m/s, with Shift
TWIST_RATE = 0.5 * math.pi  # rad/s, the held base's turn about the vertical under [ and ]
TWIST_FAST = 1.5 * math.pi  # rad/s, with Shift (a wrist's quick turn)
# Time scales the - and + keys step through: 1 down to 1/32 (log-spaced).
TIME_SCALES = tuple(2.0**-k for k in range(6))
REPLAY_SECONDS = 5.0  # I replays this much of the recent past ...
REPLAY_SPEED = 1 / 8  # ... at this speed
CLIP_KEEP = 10.0  # s: K films this much of the recent past


@dataclass(frozen=True)
class Binding:
    """Keys that do one action. `label` is how help and docs spell the keys;
    `modifiers`, what a modifier changes ('' if none)."""

    keys: tuple[str, ...]
    action: str
    label: str
    help: str
    modifiers: str = ""
    hold: bool = False


# (across, forward, up): on the 3D solver across the screen, along the ground away from
# the viewer, up; on the planar solver its plane's x, and y for forward and up alike.
DIRECTIONS = {"drive_left": (-1, 0, 0), "drive_right": (1, 0, 0), "drive_up": (0, 1, 0),
              "drive_down": (0, -1, 0), "drive_lower": (0, 0, -1), "drive_raise": (0, 0, 1)}
# The held base's turn about the vertical (the 3D solver): +1 anticlockwise seen from above.
TWISTS = {"twist_left": 1, "twist_right": -1}

BINDINGS: tuple[Binding, ...] = (
    Binding(("LEFT", "A"), "drive_left", "Left / A", "move the held base left (in 3D: "
            "across the screen)",
            "Shift: fast", hold=True),
    Binding(("RIGHT", "D"), "drive_right", "Right / D", "move the held base right",
            "Shift: fast", hold=True),
    Binding(("UP", "W"), "drive_up", "Up / W", "move the held base up (in 3D: away from "
            "you, along the ground)", "Shift: fast", hold=True),
    Binding(("DOWN", "S"), "drive_down", "Down / S", "move the held base down (in 3D: "
            "towards you)", "Shift: fast", hold=True),
    Binding(("Q",), "drive_lower", "Q", "move the held base down", "Shift: fast",
            hold=True),
    Binding(("E",), "drive_raise", "E", "move the held base up", "Shift: fast", hold=True),
    Binding(("BRACKETLEFT",), "twist_left", "[", "twist the held base about the vertical, "
            "anticlockwise seen from above (3D solver)", "Shift: fast", hold=True),
    Binding(("BRACKETRIGHT",), "twist_right", "]", "twist the held base clockwise (3D "
            "solver)", "Shift: fast", hold=True),
    Binding(("L",), "let_go", "L", "let go of the base (the drop); again: take hold of "
            "the end nearest the hand"),
    Binding(("SPACE",), "pause", "Space", "pause / play"),
    Binding(("PERIOD",), "step", ".", "one step (pauses)"),
    Binding(("MINUS", "NUM_SUBTRACT"), "slower", "-", "slow motion: halve the time scale "
            "(down to 1/32)"),
    Binding(("PLUS", "EQUAL", "NUM_ADD"), "faster", "+", "double the time scale (up to 1)"),
    Binding(("R",), "reset", "R", "reset the scene"),
    Binding(tuple(f"_{k}" for k in range(1, 10)), "scene", "1-9", "open shipped scene 1-9 "
            "(sorted by name)"),
    Binding(("TAB",), "side_view", "Tab", "the model's 2D side view (bars) / back to 3D"),
    Binding(("U",), "top_view", "U", "the view from above in a corner (motion towards "
            "and away from you): show / hide"),
    Binding(("G",), "panel", "G", "parameter panel"),
    Binding(("I",), "replay", "I", f"instant replay: the last {REPLAY_SECONDS:g} s at "
            f"1/{1 / REPLAY_SPEED:g} speed"),
    Binding(("P",), "screenshot", "P", "screenshot into your pictures folder"),
    Binding(("V",), "clip", "V", "film a clip: V to start, V again to make it (1080p60, "
            "into your videos folder)"),
    Binding(("K",), "keep", "K", f"make a clip of the last {CLIP_KEEP:g} s"),
    # One key per overlay, in overlay/panel.py OVERLAYS' order.
    Binding(("M", "J", "T", "X", "O"), "overlay", "M J T X O", "overlays: M centre of mass, "
            "J collapse front, T contact timeline, X stretch colours, O impact click"),
    Binding(("F11", "F"), "fullscreen", "F11 / F", "full screen / window"),
    Binding(("N",), "caption", "N", f"the scene's title and description (shown "
            f"{CAPTION_SECONDS:g} s when a scene opens, then faded out): show / hide"),
    Binding(("H", "F1"), "help", "H / F1", "this help"),
    Binding(("C", "HOME"), "camera", "C", "reset the camera (after a drag: the director "
            "has it again)"),
    Binding(("B",), "camera_mode", "B", "camera: fixed / follow (the Slinky kept in frame) / "
            "cinematic (follow, swaying)"),
    Binding(("ESCAPE",), "quit", "Esc", "quit"),
)

# The mouse, for the help overlay and the docs (not dispatched from here).
MOUSE: tuple[tuple[str, str], ...] = (
    ("left drag on the Slinky", "grab the marked point; let go to release, flick to throw"),
    ("left drag elsewhere", "orbit the camera"),
    ("right / middle drag", "pan"),
    ("wheel", "zoom"),
)


def help_lines() -> list[tuple[str, str]]:
    """(keys, what they do) for the help overlay: the mouse, then every binding."""
    lines = list(MOUSE)
    for b in BINDINGS:
        lines.append((b.label, f"{b.help} ({b.modifiers})" if b.modifiers else b.help))
    return lines


def markdown_table() -> str:
    """The key table as Markdown, as docs/app.md shows it."""
    rows = ["| Keys | What they do |", "| --- | --- |"]
    rows += [f"| {k.replace('|', '&#124;')} | {w} |" for k, w in help_lines()]
    return "\n".join(rows) + "\n"
