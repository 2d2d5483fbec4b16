"""Look and camera-hint parsing: defaults, values, and one clear error per bad key."""

import math

import pytest

from slinky3d.errors import SceneError
from slinky3d.scene.look import CameraHint, Look, merge_camera, parse_camera, parse_look


def test_empty_tables_give_defaults():
    assert parse_look({}, "s.toml") == Look()
    assert parse_camera({}, "s.toml") == CameraHint()


def test_look_values():
    look = parse_look(
        {
            "material": "plastic",
            "colour": [0.1, 0.2, 0.3],
            "rainbow": True,
            "wire_width": 0.004,
            "floor": False,
            "floor_y": -1.5,
            "anchor": "hand",
        },
        "s.toml",
    )
    assert look.material == "plastic" and look.rainbow and not look.floor
    assert look.colour == (0.1, 0.2, 0.3)
    assert look.wire_width == 0.004 and look.floor_y == -1.5
    assert look.stairs == ()  # the world's blocks: scene.world fills them in
    assert look.anchor == "hand"


def test_material_auto_follows_preset():
    assert Look().material_for("steel") == "steel"
    assert Look().material_for("plastic") == "plastic"
    assert Look(material="steel").material_for("plastic") == "steel"
    assert Look().width_for("steel", 0.034) == pytest.approx(0.0026)
    assert Look(wire_width=0.003).width_for("plastic", 0.03) == 0.003


@pytest.mark.parametrize(
    "table, key, words",
    [
        ({"color": [1, 0, 0]}, "look.color", "unknown key"),
        ({"material": "wood"}, "look.material", "one of"),
        ({"material": 3}, "look.material", "one of"),
        ({"colour": [1, 0]}, "look.colour", "3 numbers"),
        ({"colour": [1, 0, 2]}, "look.colour[2]", "between"),
        ({"colour": [1, 0, "x"]}, "look.colour[2]", "number"),
        ({"rainbow": "yes"}, "look.rainbow", "true or false"),
        ({"wire_width": math.nan}, "look.wire_width", "finite"),
        ({"wire_width": math.inf}, "look.wire_width", "finite"),
        ({"wire_width": -0.001}, "look.wire_width", "between"),
        ({"wire_width": True}, "look.wire_width", "number"),
        ({"stairs": [[0.3, 0.1, 0.0]]}, "look.stairs", "unknown key"),  # in [world] now
    ],
)
def test_look_errors(table, key, words):
    with pytest.raises(SceneError) as e:
        parse_look(table, "scenes/x.toml")
    assert e.value.key == key and e.value.where == "scenes/x.toml"
    assert words in str(e.value) and str(e.value).startswith("scenes/x.toml: " + key)


def test_camera_values_and_merge():
    cam = parse_camera({"target": [0, -0.5, 0], "distance": 2, "yaw_deg": 30}, "s")
    assert cam.target == (0.0, -0.5, 0.0) and cam.distance == 2.0 and cam.yaw_deg == 30.0
    assert cam.pitch_deg is None
    over = merge_camera(cam, CameraHint(pitch_deg=10.0, fov_deg=50.0))
    assert over.pitch_deg == 10.0 and over.fov_deg == 50.0 and over.yaw_deg == 30.0


@pytest.mark.parametrize(
    "table, key",
    [
        ({"zoom": 2}, "camera.zoom"),
        ({"distance": 0}, "camera.distance"),
        ({"pitch_deg": 90}, "camera.pitch_deg"),
        ({"fov_deg": math.nan}, "camera.fov_deg"),
        ({"target": [0, 0]}, "camera.target"),
        ({"yaw_deg": "left"}, "camera.yaw_deg"),
    ],
)
def test_camera_errors(table, key):
    with pytest.raises(SceneError) as e:
        parse_camera(table, "s.toml")
    assert e.value.key == key


def test_not_a_table():
    with pytest.raises(SceneError, match="expected a table"):
        parse_look([1, 2], "s.toml")
