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


def test_a_3d_slinkys_holder_sits_on_its_end_half_hoop(snap):
    """A 3D snapshot's clamp lies against its end half hoop's plane, on the side away
    from the next one, never inside the coils; the planar snapshot's clamp is the same
    drawn through its 3D frames."""
    from shapes import snapshot3d, swung

    from slinky3d.model import chain3d

    sl = snap.slinkies[0]
    s3 = snapshot3d(sl, *swung(sl))
    plate = props.holder_boxes(s3, -1.0, (1, 1, 1, 1))[0][:, :3]
    e = s3.ends
    C, Cn = 0.5 * (e[0] + e[1]), 0.5 * (e[1] + e[2])
    n = np.cross(s3.bulge[0], e[0] - e[1])
    n /= np.linalg.norm(n)
    n = n if n @ (C - Cn) >= 0 else -n  # away from the next half hoop
    assert np.min((plate - C) @ n) >= 0.5 * helix.wire_thickness(sl) - 1e-9
    # the planar pose through chain3d: its clamp is the planar one's
    q = np.r_[sl.ends[0], 0.0, sl.theta]
    q[2] = np.arctan2(*(sl.ends[1] - sl.ends[0])[::-1]) - sl.theta[0] - np.pi
    flat = snapshot3d(sl, *chain3d.from_planar(q, sl.R)[:2])
    for a, b in zip(props.holder_boxes(sl, -1.0, (1, 1, 1, 1)),
                    props.holder_boxes(flat, -1.0, (1, 1, 1, 1)), strict=True):
        assert np.allclose(a, b, atol=1e-6)


def test_the_stairs_are_drawn_turned_with_the_scene():
    """A scene turned by `rotate` draws its blocks turned as the 3D solver has them (the
    vertices and normals of the unturned blocks, turned about the vertical)."""
    import math

    import pytest

    from slinky3d.model.chain3d import turn_about_vertical
    from slinky3d.scene.loader import load

    sc = load("stairs", ["rotate=37"])
    assert sc.look.stairs_turn == pytest.approx(math.radians(37))
    steps, depth, floor = sc.look.stairs, sc.look.stairs_depth, sc.world.floor
    plain = np.concatenate(props.stair_boxes(steps, depth, floor, (1, 1, 1, 0)))
    turned = np.concatenate(props.stair_boxes(steps, depth, floor, (1, 1, 1, 0),
                                              sc.look.stairs_turn))
    T = turn_about_vertical(sc.look.stairs_turn)
    assert np.abs(plain[:, :3] @ T.T - turned[:, :3]).max() < 1e-6
    assert np.abs(plain[:, 3:6] @ T.T - turned[:, 3:6]).max() < 1e-6
    assert load("stairs").look.stairs_turn == 0.0
