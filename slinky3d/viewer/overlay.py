"""The 2D layer over the 3D view: HUD, energy bars and plot, parameter panel, help,
notices and the replay badge (Dear ImGui through imgui-bundle).

Immediate mode, one way: the app fills an `OverlayView` each frame and calls
`Overlay.frame(view)` after drawing the 3D scene; the overlay draws and returns the
`Action`s the user asked for (a parameter change, save, scrub), which the app carries
out. The overlay never talks to the solver.

INTERFACE STUB: the app is written against these types; the imgui implementation
replaces the bodies (same names and fields).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slinky3d.runtime.snapshot import Energy, Snapshot
from slinky3d.scene.edit import PanelValues


@dataclass(frozen=True)
class ReplayView:
    """Instant replay: where the replay or scrubber stands in the buffered history."""

    playing: bool  # the I replay is running (badge shown)
    speed: float  # e.g. 1/8
    t: float  # simulated time shown, s
    t_start: float  # oldest buffered time, s
    t_end: float  # newest buffered time, s


@dataclass
class OverlayView:
    """Everything the overlay shows in one frame."""

    snapshot: Snapshot  # the one drawn this frame
    time_scale: float
    fps: float
    paused: bool
    energy: Energy | None  # summed over the Slinkies
    # (t, kinetic, gravity, spring, damping, impacts) rows of the last ~10 s
    energy_history: Any = None
    show_hud: bool = True
    show_panel: bool = False
    show_help: bool = False
    help_lines: list[tuple[str, str]] = field(default_factory=list)  # (keys, what)
    notice: str = ""  # e.g. "preparing the physics (first run only)"
    message: str = ""  # transient line, e.g. "screenshot saved to ..."
    panel: PanelValues | None = None
    replay: ReplayView | None = None
    side_view: bool = False


@dataclass(frozen=True)
class ApplyParams:
    """Re-solve the static shape with these values and restart."""

    values: PanelValues


@dataclass(frozen=True)
class SaveScene:
    """Write the current scene (with the panel's values) as TOML."""

    path: str


@dataclass(frozen=True)
class Scrub:
    """Show the buffered state at simulated time t (pauses live play)."""

    t: float


@dataclass(frozen=True)
class ClosePanel:
    pass


Action = ApplyParams | SaveScene | Scrub | ClosePanel


class Overlay:
    """Draws an `OverlayView` over the current framebuffer."""

    def __init__(self, window: Any, font_px: int = 22):
        self.window = window
        self.font_px = font_px

    def wants_mouse(self) -> bool:
        """True while the pointer is over a panel (the app must not grab or orbit)."""
        return False

    def wants_keyboard(self) -> bool:
        """True while a text field has focus (the app's keys must not fire)."""
        return False

    def frame(self, view: OverlayView) -> list[Action]:
        """Draw one frame's overlay; returns what the user asked for."""
        return []

    def close(self) -> None:
        pass
