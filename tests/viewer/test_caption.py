"""The caption box (viewer/caption.py) and the HUD's phenomena marks: the scene's title
and description for a while after it opens, the caption key, the predicted hover time."""

import pytest
from test_overlay import H, Rig, W

from slinky3d.model import levitation
from slinky3d.scene import loader
from slinky3d.viewer.caption import CAPTION_SECONDS, Caption
from slinky3d.viewer.hud import hover_marks


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_caption_shows_for_a_while_after_a_scene_opens_and_the_key_toggles_it():
    clock = Clock()
    c = Caption(22, clock)
    a, b = loader.load("levitation"), loader.load("hanging-plastic")
    assert c.visible(a)
    clock.now += CAPTION_SECONDS + 0.1
    assert not c.visible(a)
    assert c.toggle(a) and c.visible(a)  # shown for good ...
    clock.now += 10 * CAPTION_SECONDS
    assert c.visible(a)
    assert not c.toggle(a) and not c.visible(a)  # ... or hidden
    assert c.visible(b)  # a new scene: its caption shows again
    assert not c.visible(None)


def test_hover_mark_is_the_release_plus_the_predicted_hover_time():
    sc = loader.load("levitation")
    s = sc.slinkies[0]
    assert hover_marks(sc) == [s.anchor.release_time + levitation.hover_time(s.params, s.q0)]
    assert hover_marks(loader.load("hanging-plastic")) == []  # nothing is dropped
    assert hover_marks(loader.load("1Pa")) == []  # the far end is let go, not the top


@pytest.mark.gl
def test_overlay_draws_the_caption_at_the_bottom_centre():
    rig = Rig()
    try:
        sc = loader.load("levitation")
        view = rig.view(scene=sc, show_panel=False)
        rig.frame(view)
        rig.frame(view)  # imgui sizes a new window in its first frame
        x0, y0, x1, y1 = rig.overlay.hud.caption.rect
        assert x1 > x0 and y1 > y0
        assert (x0 + x1) / 2 == pytest.approx(W / 2, abs=1)
        assert y1 <= H and y0 > H / 2
        assert rig.overlay.hud.hover == hover_marks(sc)
        rig.overlay.hud.caption.toggle(sc)
        rig.frame(view)
        assert rig.overlay.hud.caption.rect == (0.0, 0.0, 0.0, 0.0)
    finally:
        rig.close()
