"""Props: boxes face outward; holders, the hand and the grab marker sit where they should."""

from dataclasses import replace

import numpy as np
from shapes import point_line_distance

from slinky3d.viewer import helix, props


def test_box_faces_outward():
    axes = np.array([[np.cos(0.3), np.sin(0.3), 0], [-np.sin(0.3), np.cos(0.3), 0], [0, 0, 1]])
    b = props.box([1.0, 2.0, 3.0], (0.1, 0.2, 0.3), (1, 1, 1, 1), axes)
    p = b[:, :3].reshape(-1, 3, 3)
    geo_n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    assert np.all(np.einsum("ij,ij->i", geo_n, b[::3, 3:6]) > 0)
    assert np.allclose(p.reshape(-1, 3).mean(axis=0), [1, 2, 3])


def test_holders_only_at_held_ends(snap):
    sl = snap.slinkies[0]
    assert len(props.holder_boxes(sl, -1.0, (1, 1, 1, 1))) == 3
    both = replace(sl, far_held=True)
    assert len(props.holder_boxes(both, -1.0, (1, 1, 1, 1))) == 6
    assert props.holder_boxes(replace(sl, anchor_held=False), -1.0, (1, 1, 1, 1)) == []
    # The plate sits beside the first half hoop, not inside the coils.
    plate = props.holder_boxes(sl, -1.0, (1, 1, 1, 1))[0][:, :3]
    t = helix.wire_thickness(sl)
    d = point_line_distance(plate[:, :2], sl.ends[0], sl.ends[1])
    assert d.min() >= 0.5 * t - 1e-9
    assert plate[:, 1].min() > sl.ends[2:, 1].max()  # hanging: the plate is on top


def test_hand_holds_from_outside(snap):
    sl = snap.slinkies[0]
    assert props.hand_boxes(replace(sl, anchor_held=False), (1, 1, 1, 1)) == []
    hand = np.concatenate(props.hand_boxes(sl, (1, 1, 1, 1)))[:, :3]
    t = helix.wire_thickness(sl)
    # Every corner is outside the first half hoop's slab or beyond its bulge in z.
    d = point_line_distance(hand[:, :2], sl.ends[0], sl.ends[1])
    above = hand[:, 1] > sl.ends[:2, 1].min()  # hanging: the hand is on top
    assert np.all((d >= 0.5 * t - 1e-9) & above | (np.abs(hand[:, 2]) >= sl.R))
    assert len(props.hand_boxes(replace(sl, far_held=True), (1, 1, 1, 1))) == 14
