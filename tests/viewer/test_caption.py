"""The caption box (viewer/overlay/caption.py) and the HUD's phenomena marks: the scene's title
and description for a while after it opens, the caption key, the predicted hover time
(drawn: tests/viewer/test_overlay.py)."""


from slinky3d.model import levitation
from slinky3d.scene import loader
from slinky3d.viewer.overlay.caption import CAPTION_SECONDS, Caption
from slinky3d.viewer.overlay.hud import hover_marks


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
