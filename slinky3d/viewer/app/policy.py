"""How the app's window behaves where an exhibit differs: which key actions are off,
which it handles its own way, which panel actions it allows, whether the HUD's caption
shows, what happens around each frame, when a frame fails and when the window's close
button is pressed. The window is given one (window.Viewer(policy=...)); this default is
the app's own behaviour. The kiosk's is kiosk/exhibit.py's Kiosk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Action = Callable[[int], None]  # a key action's handler, given which of its keys it was


class Policy:
    """The app's own rules: every action on, the HUD's caption shown, frame errors
    raised, the close button closes."""

    off: frozenset[str] = frozenset()  # key actions (keys.BINDINGS) that do nothing
    hud_caption = True  # the HUD's scene caption (overlay/caption.py) may show
    # Whether after_overlay draws over every frame: then every frame is drawn whole
    # (app/redraw.py draws again only what the app itself changed).
    draws_over = False

    def bind(self, app: Any) -> None:
        """The window is built (its GL objects and parts exist)."""

    def actions(self) -> dict[str, Action]:
        """Key actions handled the policy's way instead of the app's."""
        return {}

    def allows(self, action: object) -> bool:
        """Whether the panel's `action` (overlay/panel.py) is carried out."""
        return True

    def help_lines(self, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The help overlay's lines (keys.help_lines()) as this policy has them."""
        return lines

    def before_frame(self, now: float) -> None:
        """Before the frame is drawn (it may close the window)."""

    def after_overlay(self, screen: Any, size: tuple[int, int], now: float) -> None:
        """After the 2D layer is drawn: what the policy draws over it."""

    def after_frame(self, now: float) -> None:
        """After a frame drawn without error."""

    def frame_failed(self, error: Exception) -> bool:
        """A frame raised: True when handled (the app goes on), False to raise it."""
        return False

    def close_requested(self) -> bool:
        """The window's close button: whether the app quits."""
        return True

    def gl_recreated(self) -> None:
        """The window's GL objects were made again (a lost context)."""
