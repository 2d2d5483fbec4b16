"""Nothing covers the subject: the caption and the HUD go where the Slinkies are not
(overlay/placement.py), and the caption fades after a while and comes back on N."""

import numpy as np
import pytest
from shapes import hanging_snapshot
from test_app import drive

from slinky3d.scene import loader
from slinky3d.viewer.camera import frame_snapshot
from slinky3d.viewer.overlay import placement
from slinky3d.viewer.overlay.caption import CAPTION_SECONDS, FADE_SECONDS, Caption

SIZE = (960.0, 540.0)


def test_a_box_goes_to_the_first_spot_that_covers_no_subject():
    box = lambda spot: (300.0, 120.0)  # noqa: E731
    # nothing to avoid: the bottom's middle
    assert placement.place(box, SIZE, [])[0] == "bottom"
    # a Slinky down the middle: a bottom corner
    middle = [(430.0, 0.0, 530.0, 540.0)]
    spot, b = placement.place(box, SIZE, middle)
    assert spot == "bottom-left" and placement.shared_area(b, middle[0]) == 0.0
    # ... and the HUD there too: the other corner
    assert placement.place(box, SIZE, middle, [(0.0, 300.0, 400.0, 540.0)])[0] == \
        "bottom-right"
    # of equal spots the current one stays
    assert placement.place(box, SIZE, middle, current="top-right")[0] == "top-right"
    # nowhere free: the least covered
    wide = [(0.0, 0.0, 960.0, 300.0), (0.0, 300.0, 700.0, 540.0)]
    spot, b = placement.place(box, SIZE, wide)
    assert spot == "bottom-right"


def test_the_subject_is_where_the_slinky_is_drawn():
    snap = hanging_snapshot("steel")
    w, h = 320, 240
    cam = frame_snapshot(snap, (w, h))
    (x0, y0, x1, y1), = placement.scaled(placement.subject(snap, cam, w / h, pad=0.0), (w, h))
    from slinky3d.viewer import helix

    px = cam.project(helix.centre_line(snap.slinkies[0], 33).reshape(-1, 3), w, h)
    assert x0 <= px[:, 0].min() + 1 and px[:, 0].max() - 1 <= x1
    assert y0 <= px[:, 1].min() + 1 and px[:, 1].max() - 1 <= y1
    assert (x1 - x0) * (y1 - y0) < 0.5 * w * h  # a box around it, not the picture


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_caption_fades_out_and_comes_back_on_its_key():
    clock = Clock()
    c = Caption(22, clock)
    sc = loader.load("levitation")
    assert c.opacity(sc) == 1.0
    clock.now += CAPTION_SECONDS - FADE_SECONDS
    assert c.opacity(sc) == pytest.approx(1.0)
    clock.now += 0.5 * FADE_SECONDS
    assert c.opacity(sc) == pytest.approx(0.5)
    clock.now += 0.5 * FADE_SECONDS + 0.01
    assert c.opacity(sc) == 0.0 and not c.visible(sc)
    assert c.toggle(sc) and c.opacity(sc) == 1.0  # N: back, for good
    clock.now += 10 * CAPTION_SECONDS
    assert c.opacity(sc) == 1.0


@pytest.mark.gl
def test_the_caption_hides_at_most_3_percent_of_the_slinky(tmp_path):
    """The app on hanging-steel, hanging and then let go (L) and landed on the floor:
    in every frame the caption shows and covers at most 3 % of the Slinky's pixels."""
    res = drive("caption", tmp_path)
    assert all(res["shown"]) and res["free"]
    assert res["bottom"] < -1.0  # landed on the floor, at the bottom of the picture
    assert max(res["caption"]) <= 0.03, res["caption"]
    assert np.median(res["hud"]) <= 0.03, res["hud"]


@pytest.mark.gl
def test_the_kiosk_placard_hides_at_most_3_percent_of_the_slinky(tmp_path):
    """The kiosk's attract loop on its first entry (the hanging plastic Slinky), hanging
    and let go: the placard covers at most 3 % of the Slinky's pixels in every frame it
    shows (docs/kiosk.png is its picture)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])}
    env.pop("DISPLAY", None)
    env.pop("NOTIFY_SOCKET", None)
    p = subprocess.run([sys.executable, str(Path(__file__).with_name("headless_kiosk.py")),
                        str(tmp_path), "caption"], env=env, capture_output=True, text=True,
                       timeout=300, cwd=root)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["held"] and r["let_go"] and len(r["hidden"]) >= 4
    assert max(r["hidden"]) <= 0.03, r["hidden"]


def test_the_room_left_for_the_subject_meets_no_obstacle_and_fits_it_best():
    hud = (0.5, 0.0, 1.0, 0.68)  # the HUD at the top right
    # tall subject: beside the HUD; wide subject: under it
    assert placement.room([hud], (0.1, 0.8)) == (0.0, 0.0, 0.5, 1.0)
    assert placement.room([hud], (0.8, 0.1)) == (0.0, 0.68, 1.0, 1.0)
    # nothing in the way, or no room worth having: the whole picture
    assert placement.room([], (0.1, 0.8)) == (0.0, 0.0, 1.0, 1.0)
    assert placement.room([(0.0, 0.0, 0.9, 1.0)], (0.5, 0.5)) == (0.0, 0.0, 1.0, 1.0)
    rng = np.random.default_rng(7)
    for _ in range(50):
        boxes = []
        for _ in range(3):
            x = np.sort(rng.uniform(0, 1, 2))
            y = np.sort(rng.uniform(0, 1, 2))
            boxes.append((x[0], y[0], x[1], y[1]))
        r = placement.room(boxes, (rng.uniform(0.05, 0.9), rng.uniform(0.05, 0.9)))
        assert r == (0.0, 0.0, 1.0, 1.0) or all(placement.shared_area(r, b) == 0 for b in boxes)
