"""The parameter panel (G): edit a Slinky's parameters, apply them, save the scene, scrub
the instant replay.

Edits stay in the panel until Apply, which asks the app to re-solve the static shape
and restart (`ApplyParams`); the values the app then shows become the panel's again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import platformdirs

from slinky3d.model.params import PRESETS
from slinky3d.scene.edit import PLANETS, PanelValues, with_preset
from slinky3d.scene.spec import CONTACT_LAWS
from slinky3d.viewer.overlay import timeline
from slinky3d.viewer.overlay.hud import window_rect

# (name, the panel's label), in the order of the keys of keys.py's "overlay" binding.
OVERLAYS: tuple[tuple[str, str], ...] = (
    ("com", "centre of mass"),
    ("front", "collapse front"),
    ("timeline", "contact timeline"),
    ("stretch", "stretch colours"),
    ("sound", "impact click"),
)


@dataclass(frozen=True)
class SetOverlay:
    """The panel's "Overlays" section turned one on or off."""

    name: str
    on: bool


@dataclass(frozen=True)
class PhenomenaView:
    """What the 2D overlay shows of the phenomena (OverlayView.phenomena): which are on,
    why there is no click, the contact timelines."""

    on: frozenset[str]
    sound_unavailable: str  # why there is no click ("": none asked for, or it works)
    timelines: tuple[timeline.Timeline | None, ...] = ()


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
    """The panel's close box was clicked."""


Action = ApplyParams | SaveScene | Scrub | ClosePanel | SetOverlay

SIGNIFICANT = 4  # digits kept from a slider: its float32 would add noise to saved scenes


@dataclass(frozen=True)
class Slider:
    """One parameter's slider: shown in `unit` (value * factor), within [lo, hi]."""

    field: str
    label: str
    lo: float
    hi: float
    fmt: str
    factor: float = 1.0
    log: bool = False


SLIDERS = (
    Slider("n_coils", "coils", 5.0, 150.0, "%.1f"),
    Slider("mass", "mass", 5.0, 500.0, "%.1f g", 1e3, log=True),
    Slider("R", "radius", 10.0, 60.0, "%.1f mm", 1e3),
    Slider("L0", "height", 10.0, 200.0, "%.1f mm", 1e3),
    Slider("k_coil", "k_coil", 1e-3, 1.0, "%.4g N m/rad", log=True),
    Slider("C_D", "C_D", 0.0, 0.05, "%.2e N m s/rad", log=True),
    Slider("g", "g", 0.0, 30.0, "%.2f m/s\u00b2"),
)


def default_save_path(scene_name: str) -> str:
    """Where "Save scene" writes by default: the user's documents folder."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", scene_name).strip("-.") or "scene"
    return str(Path(platformdirs.user_documents_dir()) / "slinky3d" / f"{stem}.toml")


def rounded(v: float, field: str) -> float:
    """A slider's value as a person would type it."""
    if field == "n_coils":
        return max(0.5, round(2 * v) / 2)  # whole half coils (N = 2 n_coils)
    return float(f"{v:.{SIGNIFICANT}g}")


class Panel:
    """The panel's own state between frames: the edits and the save path."""

    def __init__(self, font_px: float):
        self.px = font_px
        self.base: PanelValues | None = None  # what the app runs
        self.edit: PanelValues | None = None  # what the panel shows
        self.path = ""
        self._scene_name: str | None = None
        # Screen rectangles (x0, y0, x1, y1) of the last frame's buttons and sliders, by
        # label.
        self.rects: dict[str, tuple[float, float, float, float]] = {}
        self.rect = (0.0, 0.0, 0.0, 0.0)  # the panel window's, last frame

    def draw(self, view: Any, imgui: Any) -> list[Action]:
        """One frame of the panel for an `OverlayView`; returns the user's requests."""
        actions: list[Action] = []
        if view.panel != self.base:  # a new scene or values applied: show them
            self.base = self.edit = view.panel
        if view.scene_name != self._scene_name:
            self._scene_name = view.scene_name
            self.path = default_save_path(view.scene_name or "scene")
        self.rects = {}
        io = imgui.get_io()
        imgui.set_next_window_pos((io.display_size.x - 0.5 * self.px, 0.5 * self.px),
                                  imgui.Cond_.first_use_ever, (1.0, 0.0))
        imgui.set_next_window_bg_alpha(0.85)
        flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_saved_settings
        expanded, keep = imgui.begin("Parameters", True, flags)
        if expanded:
            if self.edit is not None:
                self._values(imgui, actions)
            if view.replay is not None:
                self._scrubber(view.replay, view.paused, imgui, actions)
            actions += panel_section(view.phenomena, imgui, self.rects)
        self.rect = window_rect(imgui)
        imgui.end()
        if not keep:
            actions.append(ClosePanel())
        return actions

    # -- parts ---------------------------------------------------------------------
    def _button(self, imgui: Any, label: str) -> bool:
        hit = bool(imgui.button(label))
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.rects[label] = (a.x, a.y, b.x, b.y)
        return hit

    def _values(self, imgui: Any, actions: list[Action]) -> None:
        assert self.edit is not None
        v = self.edit
        imgui.push_item_width(8.5 * self.px)
        names = list(PRESETS)
        i = names.index(v.preset) if v.preset in names else -1
        changed, j = imgui.combo("preset", i, names)
        if changed and j != i:
            v = with_preset(v, names[j])
        for s in SLIDERS:
            flags = imgui.SliderFlags_.logarithmic if s.log else 0
            x = getattr(v, s.field)
            changed, y = imgui.slider_float(s.label, x * s.factor, s.lo, s.hi, s.fmt, flags)
            a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            self.rects[s.label] = (a.x, a.y, b.x, b.y)  # the slider's frame
            if changed:
                new: dict[str, Any] = {s.field: rounded(y / s.factor, s.field)}
                v = replace(v, **new)
            if s.field == "g":
                for k, (planet, g) in enumerate(PLANETS.items()):
                    if k:
                        imgui.same_line()
                    if self._button(imgui, planet):
                        v = replace(v, g=g)
        imgui.pop_item_width()
        imgui.text("contact law")
        for law in CONTACT_LAWS:
            imgui.same_line()
            if imgui.radio_button(law, v.contact_law == law):
                v = replace(v, contact_law=law)
        changed, on = imgui.checkbox("coil impacts", v.impacts)
        if changed:
            v = replace(v, impacts=on)
        self.edit = v
        pending = v != self.base
        imgui.separator()
        imgui.begin_disabled(not pending)
        if self._button(imgui, "Apply"):
            actions.append(ApplyParams(v))
        imgui.same_line()
        if self._button(imgui, "Revert"):
            self.edit = self.base
        imgui.end_disabled()
        if pending:
            imgui.same_line()
            imgui.text_colored((1.0, 0.85, 0.4, 1.0), "changed: Apply restarts")
        imgui.push_item_width(10 * self.px)
        _, self.path = imgui.input_text("##path", self.path)
        imgui.pop_item_width()
        imgui.same_line()
        if self._button(imgui, "Save scene"):
            if pending:  # what the panel shows is what gets saved
                actions.append(ApplyParams(v))
            actions.append(SaveScene(self.path))

    def _scrubber(self, replay: Any, paused: bool, imgui: Any, actions: list[Action]
                  ) -> None:
        imgui.separator()
        imgui.text("replay (last 10 s)")
        imgui.push_item_width(15 * self.px)
        lo, hi = replay.t_start, max(replay.t_end, replay.t_start + 1e-6)
        # Following live play the knob stays at the right end and says so: the panel
        # then looks the same from frame to frame (and is not drawn again, see
        # overlay/cache.py); the HUD shows the time.
        live = not paused and not replay.playing and replay.t >= replay.t_end
        changed, t = imgui.slider_float("##scrub", replay.t, lo, hi,
                                        "live" if live else "t = %.3f s")
        imgui.pop_item_width()
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.rects["scrub"] = (a.x, a.y, b.x, b.y)
        if changed:
            actions.append(Scrub(min(max(float(t), lo), hi)))


def panel_section(view: PhenomenaView | None, imgui: Any,
                  rects: dict[str, tuple[float, float, float, float]]) -> list[SetOverlay]:
    """The panel's "Overlays" section: a checkbox per overlay (its rectangle into `rects`
    under the overlay's name); the click, when there is no audio device, greyed out and
    saying so."""
    if view is None:
        return []
    out = []
    imgui.separator()
    imgui.text("overlays")
    for i, (name, label) in enumerate(OVERLAYS):
        if i % 2 == 0:  # two a row: the panel is tall already
            imgui.same_line()
        off = name == "sound" and bool(view.sound_unavailable)
        imgui.begin_disabled(off)
        text = f"{label} (unavailable: {view.sound_unavailable})" if off else label
        changed, on = imgui.checkbox(text, name in view.on)
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        rects[name] = (lo.x, lo.y, hi.x, hi.y)
        imgui.end_disabled()
        if changed:
            out.append(SetOverlay(name, on))
    return out
