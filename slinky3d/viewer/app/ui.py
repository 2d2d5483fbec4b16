"""The app's view state: what the keys toggle and the input, the overlay's view and the
kiosk read (help, panel, side view, time scale, the message line)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class UiState:
    show_help: bool = False
    show_panel: bool = False
    side_view: bool = False  # the 2D side view (bars, orthographic) instead of the 3D
    top_view: bool = False  # the view from above in a corner (viewer/gl/top_view.py)
    scale_index: int = 0  # into keys.TIME_SCALES
    message: str = ""  # the HUD's message line
