"""The one validator behind every scene table: where errors point, numbers, suggestions."""

import math

import pytest

from slinky3d.errors import SceneError
from slinky3d.scene import loader
from slinky3d.scene.look import parse_camera, parse_look
from slinky3d.scene.spec import (
    ANCHOR_CONDITIONS,
    END_CONDITIONS,
    FAR_CONDITIONS,
    EndSpec,
    Motion,
)
from slinky3d.scene.validate import Context, Table, check_number, check_vector

BASE = "[slinky]\n"


def message(fn, *args, **kw) -> str:
    with pytest.raises(SceneError) as e:
        fn(*args, **kw)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_errors_point_at_the_file_or_at_set():
    ctx = Context("s.toml", {"slinky.contact", "look.colour"})
    cases = [
        ("slinky.contact", "--set"),  # the key written
        ("slinky.contact.law", "--set"),  # a key of a table written
        ("look.colour[2]", "--set"),  # an element of an array written
        ("slinky", "--set"),  # a table holding a key written
        ("slinky.grab.damping", "s.toml"),
        ("look.colour_x", "s.toml"),  # a longer name is another key
        ("", "s.toml"),
    ]
    for key, where in cases:
        with pytest.raises(SceneError) as e:
            ctx.fail(key, "bad")
        assert e.value.where == where, key


@pytest.mark.parametrize("value,bounds,expected", [
    (0, {"lo": 0.0, "open_lo": True}, "must be > 0, got 0"),
    (-1, {"lo": 0.0}, "must be >= 0, got -1"),
    (2, {"hi": 1.0}, "must be <= 1, got 2"),
    (1, {"hi": 1.0, "open_hi": True}, "must be < 1, got 1"),
    (2, {"lo": 0.0, "hi": 1.0}, "must be in [0, 1] (between 0 and 1), got 2"),
    (0, {"lo": 0.0, "hi": 1.0, "open_lo": True}, "must be in (0, 1] (between 0 and 1), got 0"),
    (math.nan, {}, "must be a finite number, not nan"),
    (-math.inf, {"lo": 0.0}, "must be a finite number, not -inf"),
    (True, {}, "must be a number, not a boolean"),
    ("1", {}, "must be a number, not a string"),
])
def test_number_checks(value, bounds, expected):
    msg = message(check_number, Context("s.toml"), "k", value, **bounds)
    assert msg == f"s.toml: k: {expected}"


def test_bounds_admit_their_closed_ends_and_ints():
    ctx = Context("s.toml")
    assert check_number(ctx, "k", 0, lo=0.0, hi=1.0) == 0.0
    assert check_number(ctx, "k", 1, lo=0.0, hi=1.0) == 1.0
    assert isinstance(check_number(ctx, "k", 1), float)


def test_vector_names_the_bad_element():
    ctx = Context("s.toml")
    assert check_vector(ctx, "c", [0, 0.5, 1], 3, lo=0.0, hi=1.0) == (0.0, 0.5, 1.0)
    assert message(check_vector, ctx, "c", [0, 0.5, 2], 3, lo=0.0, hi=1.0).startswith(
        "s.toml: c[2]: must be in [0, 1]")
    assert message(check_vector, ctx, "c", [0, 1], 3).endswith("array of 3 numbers, got 2 values")
    assert message(check_vector, ctx, "c", "red", 3).endswith("got a string")


def test_table_getters():
    t = Table(Context("s.toml"), {"n": 2, "s": "x", "c": "steel", "b": False, "p": [1, 2]},
              "top", ("n", "s", "c", "b", "p", "v"))
    assert t.number("n", None) == 2.0 and t.number("missing", None) is None
    assert t.string("s", "") == "x" and t.choice("c", "plastic", ("steel", "plastic")) == "steel"
    assert t.boolean("b", True) is False and t.point("p", (0.0, 0.0)) == (1.0, 2.0)
    assert t.vector("v", None, 3) is None
    assert t.table("v", ()).prefix == "top.v"
    assert "top.c: unknown value 'steel'; expected one of those known: wood, rubber" in message(
        t.choice, "c", "wood", ("wood", "rubber"))
    assert message(t.choice, "n", "wood", ("wood", "rubber")).endswith(
        "top.n: must be one of wood, rubber, not a number")


def test_misspelt_values_and_keys_get_suggestions():
    assert message(loader.loads, BASE, "s.toml", ["slinky.preset=stel"]).endswith(
        "slinky.preset: unknown value 'stel'; did you mean 'steel'?")
    assert message(loader.loads, BASE, "s.toml", ["look.material=stel"]).endswith(
        "look.material: unknown value 'stel'; did you mean 'steel'?")


def test_misspelt_camera_key_gets_a_suggestion():
    msg = message(loader.loads, BASE + "[camera]\ndistanc = 1.0\n", "s.toml")
    assert msg == "s.toml: camera.distanc: unknown key; did you mean 'distance'?"
    assert message(parse_camera, {"fov": 40}, "--camera").endswith(
        "camera.fov: unknown key; did you mean 'fov_deg'?")
    assert message(parse_look, {"color": [1, 0, 0]}, "s.toml").endswith(
        "look.color: unknown key; did you mean 'colour'?")


def test_look_and_camera_keys_from_set_name_set():
    assert message(loader.loads, BASE, "s.toml", ["look.xyz=1"]).startswith("--set: look.xyz: ")
    assert message(loader.loads, BASE, "s.toml", ["look.wire_width=1"]).startswith(
        "--set: look.wire_width: must be in [0.0001, 0.05]")
    # An element of an array the override wrote.
    assert message(loader.loads, BASE, "s.toml", ["look.colour=[1, 0, 2]"]).startswith(
        "--set: look.colour[2]: ")
    assert message(loader.loads, BASE, "s.toml", ["camera={ zoom = 2 }"]).startswith(
        "--set: camera.zoom: unknown key")
    # The same table's other keys still point at the file.
    text = BASE + "[look]\ncolour = [1, 0, 2]\n"
    assert message(loader.loads, text, "s.toml", ["look.rainbow=true"]).startswith(
        "s.toml: look.colour[2]: ")


def test_every_look_key_is_read():
    table = {"background_top": [0.1, 0.1, 0.1], "background_bottom": [0.2, 0.2, 0.2],
             "floor_colour": [0.3, 0.3, 0.3], "stairs_colour": [0.4, 0.4, 0.4],
             "stairs_depth": 0.5}
    look = parse_look(table, "s.toml")
    assert {k: getattr(look, k) for k in table} == {
        k: tuple(v) if isinstance(v, list) else v for k, v in table.items()}


def test_end_conditions_defined_once():
    assert set(ANCHOR_CONDITIONS) == set(END_CONDITIONS)
    assert set(FAR_CONDITIONS) == set(END_CONDITIONS) - {"scripted"}
    assert "scripted far end is not supported" in message(
        loader.loads, BASE, "s.toml", ["slinky.far.condition=scripted"])


@pytest.mark.parametrize("end", [
    EndSpec("held"),
    EndSpec("free", release_time=0.0),
    EndSpec("released", release_time=0.3),
])
def test_a_held_end_is_let_go_at_held_until(end):
    until = end.held_until()
    for t in (0.0, 0.1, 0.29, 0.3, 0.31, 10.0):
        assert end.held_at(t) is (t < until)


def test_a_scripted_end_stays_still_until_its_start():
    end = EndSpec("scripted", motion=Motion(amplitude=(0.0, 0.01), start=0.4))
    until = end.held_until()
    assert until == 0.4 and end.held_at(until + 1.0)  # driven, so held all along
    assert end.motion is not None
    assert not end.motion.at(until)[0].any() and end.motion.at(until + 0.05)[0].any()
