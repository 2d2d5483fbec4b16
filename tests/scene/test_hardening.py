"""Hardening: any value in any numeric key, any --set, any option gives a scene or one line.

The numeric keys are not listed by hand: loading the base scenes below with the
validator's number check watched collects every key it reads as a number (and the
test fails when a key of the spec is missing from the base scenes, so a new key is
fuzzed as soon as it exists). Hypothesis then writes absurd magnitudes, zeros,
negatives and non-finite numbers into each; every load must end in a valid Scene
with a finite initial state, or in a one-line SceneError. Through the command line's
main() the same gives exit status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slinky3d import cli
from slinky3d.errors import SceneError, SlinkyError
from slinky3d.scene import loader, slinky, validate
from slinky3d.scene.look import CAMERA_KEYS, LOOK_KEYS
from slinky3d.scene.slinky import (
    ANCHOR_KEYS,
    CONTACT_KEYS,
    FAR_KEYS,
    GRAB_KEYS,
    MOTION_KEYS,
    SHAPE_KEYS,
    SLINKY_KEYS,
)
from slinky3d.scene.world import STAIRS_KEYS, TABLE_KEYS, WORLD_KEYS

# Small Slinkies (the plastic preset, N = 75): a static shape takes milliseconds.
HANGING = """
title = "hanging"
description = "every optional key"
references = "docs/scene-format.md"
duration = 1.0
dt = 0.004
solver = "planar"
rotate = 0.0
[slinky]
name = "a"
preset = "plastic"
n_coils = 37.5
mass = 0.039
R = 0.0315
L0 = 0.067
k_coil = 0.02572
C_D = 0.002
g = 9.81
I = 2e-7
theta_min = 0.02
[slinky.anchor]
condition = "released"
release_time = 0.5
position = [0.0, 0.1]
orientation = 0.1
[slinky.far]
condition = "free"
[slinky.shape]
kind = "hanging"
[slinky.contact]
enabled = true
law = "soft"
stiffness = 1.0
damping = 0.01
[slinky.grab]
stiffness = 20.0
damping = 0.5
max_force_weights = 5.0
[look]
material = "plastic"
colour = [0.5, 0.5, 0.5]
rainbow = false
wire_width = 0.003
background_top = [0.1, 0.1, 0.1]
background_bottom = [0.5, 0.5, 0.5]
floor = true
floor_y = -1.0
floor_colour = [0.6, 0.6, 0.6]
stairs_colour = [0.5, 0.4, 0.2]
stairs_depth = 0.3
anchor = "post"
[camera]
target = [0.0, -0.3, 0.0]
distance = 1.5
yaw_deg = 20.0
pitch_deg = 10.0
fov_deg = 35.0
mode = "follow"
"""

BOTH_ENDS = """
[slinky]
preset = "plastic"
[slinky.anchor]
condition = "held"
position = [0.0, 0.0]
orientation = 0.0
[slinky.far]
condition = "released"
release_time = 0.2
offset_R = [-5.0, 0.0]
orientation = 3.141592653589793
[slinky.shape]
kind = "both_ends"
"""

FAR_OFFSET = BOTH_ENDS.replace("offset_R = [-5.0, 0.0]", "offset = [-0.15, 0.0]")
FAR_POSITION = BOTH_ENDS.replace("offset_R = [-5.0, 0.0]", "position = [-0.15, 0.0]")

SCRIPTED = """
[[slinky]]
preset = "plastic"
[slinky.anchor]
condition = "scripted"
[slinky.anchor.motion]
amplitude = [0.0, 0.02]
frequency = 2.0
phase = 0.5
rot_amplitude = 0.1
rot_axis = [0.0, 0.0, 1.0]
start = 0.1
stop = 5.0
frequency_rate = 0.1
frequency_max = 3.0
[[slinky]]
preset = "plastic"
n_coils = 5
[slinky.shape]
kind = "angles"
theta = 0.3
"""

ANGLES = """
[slinky]
preset = "plastic"
n_coils = 2
[slinky.shape]
kind = "angles"
theta = [0.6, 0.7, 0.6, 0.7]
"""

WORLD = """
sleep = false
[slinky]
preset = "plastic"
n_coils = 2
[slinky.anchor]
condition = "free"
position = [-0.2, 0.1]
[slinky.shape]
kind = "angles"
theta = 0.6
[world]
floor = -1.0
mu = 0.4
mu_static = 0.5
[world.stairs]
top = [0.0, 0.0]
height = 0.1
depth = 0.1
count = 3
landing = 0.3
[world.table]
edge = [-2.0, -0.5]
width = 0.5
"""

BASES = {"world": WORLD, "hanging": HANGING, "both_ends": BOTH_ENDS, "far_offset": FAR_OFFSET,
         "far_position": FAR_POSITION, "scripted": SCRIPTED, "angles": ANGLES}
DOCS = {name: tomllib.loads(text) for name, text in BASES.items()}

# What a number can be that a user (or a typo) writes: absurd magnitudes, zeros,
# negatives, the smallest floats, non-finite numbers, 64-bit integers.
ABSURD = [1e300, -1e300, 0, 0.0, -0.0, -1, -1.5, 1, 5e-324, -5e-324, 1e-300, 1e30, -1e30,
          math.nan, math.inf, -math.inf, 2**63 - 1, -(2**63), 1e3, 1e6, 123456789]
NUMBERS = st.one_of(st.sampled_from(ABSURD), st.floats(), st.integers(-(2**63), 2**63 - 1))
# No example database: nothing is written into the checkout (a failure prints its example).
FAST = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])


def _path(key: str) -> list[str | int]:
    """A dotted key with [i] indices ("look.stairs[0][2]") as a path into the document."""
    out: list[str | int] = []
    for part in key.split("."):
        name, *idx = re.split(r"\[(\d+)\]", part)
        if name:
            out.append(int(name) if name.isdigit() else name)
        out += [int(i) for i in idx if i]
    return out


def _get(doc: Any, path: list[str | int]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _numeric_keys() -> list[tuple[str, tuple[str | int, ...]]]:
    """(base, path) of every number the validator reads in the base scenes."""
    seen: list[tuple[str, tuple[str | int, ...]]] = []
    real = validate.check_number

    def watch(ctx: Any, key: str, v: Any, **bounds: Any) -> float:
        current.add(key)
        return real(ctx, key, v, **bounds)

    mp = pytest.MonkeyPatch()
    mp.setattr(validate, "check_number", watch)
    mp.setattr(slinky, "check_number", watch)
    try:
        for name, doc in DOCS.items():
            current: set[str] = set()
            loader.from_dict(doc, name)
            for key in sorted(current):
                path = _path(key)
                # Keys read by slinky.N (an element of [[slinky]]) in the document.
                if path[0] == "slinky" and not isinstance(doc["slinky"], list):
                    path = [p for i, p in enumerate(path) if not (i == 1 and p == 0)]
                value = _get(doc, path)
                if isinstance(value, list):  # a point or an array: each element
                    seen += [(name, (*path, i)) for i in range(len(value))]
                    if key.endswith("theta"):
                        seen.append((name, tuple(path)))  # one number for every joint
                else:
                    seen.append((name, tuple(path)))
    finally:
        mp.undo()
    return sorted(set(seen), key=str)


NUMERIC = _numeric_keys()


def _keys_in(doc: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield f"{prefix}{k}"
            yield from _keys_in(v, f"{prefix}{k}.")
    elif isinstance(doc, list):
        for v in doc:
            if isinstance(v, dict):
                yield from _keys_in(v, prefix)


def test_the_base_scenes_hold_every_key_of_the_spec():
    present = {k.rsplit(".", 1)[-1] for d in DOCS.values() for k in _keys_in(d)}
    spec = {*loader.SCENE_KEYS, *SLINKY_KEYS, *ANCHOR_KEYS, *FAR_KEYS, *SHAPE_KEYS,
            *CONTACT_KEYS, *GRAB_KEYS, *MOTION_KEYS, *LOOK_KEYS, *CAMERA_KEYS, *WORLD_KEYS,
            *STAIRS_KEYS, *TABLE_KEYS}
    assert spec - present == set(), "add the new keys to a base scene of this test"
    # Every table's numbers were found: the validator read them all.
    tops = {p[0] if p[0] != "slinky" else ".".join(map(str, p[:2])) for _, p in NUMERIC}
    assert {"duration", "dt", "look", "camera", "slinky.mass", "slinky.anchor",
            "slinky.far", "slinky.contact", "slinky.grab"} <= tops
    assert any("motion" in p for _, p in NUMERIC) and any("theta" in p for _, p in NUMERIC)


def _set(doc: dict, path: tuple[str | int, ...], value: Any) -> dict:
    doc = copy.deepcopy(doc)
    _get(doc, list(path[:-1]))[path[-1]] = value
    return doc


def _outcome(doc: dict) -> str:
    """"ok" for a valid scene (checked finite), else the one-line error."""
    try:
        sc = loader.from_dict(doc, "fuzz.toml")
    except SceneError as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith("fuzz.toml: ")
        return msg
    for s in sc.slinkies:
        assert np.all(np.isfinite(s.q0)), "a valid scene starts from a finite state"
        assert all(math.isfinite(v) for v in (*s.anchor.position, *s.far.position,
                                              s.anchor.orientation, s.far.orientation))
    assert math.isfinite(sc.dt) and sc.dt > 0 and math.isfinite(sc.duration)
    return "ok"


def test_every_base_scene_loads():
    assert all(_outcome(d) == "ok" for d in DOCS.values())


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused_in_every_numeric_key(value):
    for name, path in NUMERIC:
        msg = _outcome(_set(DOCS[name], path, value))
        assert msg != "ok" and "finite" in msg, (name, path)


@FAST
@given(case=st.sampled_from(NUMERIC), value=NUMBERS)
def test_any_number_in_any_numeric_key_gives_a_scene_or_one_line(case, value):
    name, path = case
    _outcome(_set(DOCS[name], path, value))


@FAST
@given(case=st.sampled_from(NUMERIC),
       value=st.one_of(st.sampled_from(["nan", "inf", "-inf", "+inf", "1e400", "-1e400",
                                         "1e300", "-1e300", "0", "-0.0", "1_000", "0x10",
                                         "true", "[]", "[1, 2]", "{a = 1}", "'x'", ""]),
                       st.text(max_size=12)))
def test_any_set_value_gives_a_scene_or_one_line(case, value):
    name, path = case
    key = ".".join(str(p) for p in path if not isinstance(p, int) or p != path[-1]
                   or not isinstance(_get(DOCS[name], list(path[:-1])), list))
    try:
        msg = _outcome_set(DOCS[name], [f"{key}={value}"])
    except SceneError as e:  # the override itself (index out of range, ...)
        msg = str(e)
    assert "\n" not in msg


def _outcome_set(doc: dict, sets: list[str]) -> str:
    try:
        sc = loader.from_dict(doc, "fuzz.toml", sets)
    except SceneError as e:
        assert "\n" not in str(e)
        return str(e)
    assert all(np.all(np.isfinite(s.q0)) for s in sc.slinkies)
    return "ok"


KEY_TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.0123456789[]= ", max_size=24)


@FAST
@given(key=st.one_of(KEY_TEXT, st.sampled_from(
    ["slinky", "slinky.0", "slinky.1.C_D", "slinky.anchor.position.0", "world.stairs.top.0",
     "camera", "slinky.shape.theta.3", "title.x", ".", "slinky..C_D", "slinky.99.mass"])),
    value=st.text(max_size=12))
def test_any_set_key_gives_a_scene_or_one_line(key, value):
    for doc in (DOCS["hanging"], DOCS["scripted"]):
        try:
            _outcome_set(doc, [f"{key}={value}"])
        except SceneError as e:
            assert "\n" not in str(e)


# ----------------------------------------------------------------- command line


def _main(argv: list[str], capsys: Any) -> tuple[int, str]:
    rc = cli.main(argv)
    err = capsys.readouterr().err
    return rc, err


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory: Any) -> str:
    path = tmp_path_factory.mktemp("hardening") / "hanging.toml"
    path.write_text(HANGING, encoding="utf-8")
    return str(path)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from([c for c in NUMERIC if c[0] == "hanging"]),
       value=st.sampled_from(["nan", "inf", "-inf", "1e400", "-1e300", "true", "'x'"]))
def test_bad_set_through_main_exits_2_with_one_line(case, value, scene_file, capsys,
                                                    tmp_path_factory):
    _, path = case
    key = ".".join(str(p) for p in path if isinstance(p, str))
    out = tmp_path_factory.mktemp("out") / "x.npz"
    rc, err = _main(["simulate", scene_file, "--set", f"{key}={value}", "--out", str(out),
                     "--duration", "0"], capsys)
    if "[" in str(_get(DOCS["hanging"], [p for p in path if isinstance(p, str)])):
        return  # an array replaced by a bad scalar: still an error, checked below
    assert rc == 2 and err.count("\n") == 1 and err.startswith("slinky3d: error: --set: ")
    assert not out.exists()


OPTION_VALUES = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e300", "-1e300", "0", "-1", "1e-300", "",
                     "0:1e300:1e-300", "0:1:0", "1,nan", "x", "64x", "0x0", "99999x99999",
                     "yaw=nan", "distance=1e300", "target=1:2", "fov=0", "=", "a=b=c"]),
    st.text(max_size=10))
OPTIONS = {
    "simulate": ["--duration", "--fps", "--solver", "--set"],
    "figure": ["--times", "--layout", "--set"],
    "screenshot": ["--time", "--size", "--camera", "--quality", "--set"],
    "record": ["--duration", "--start", "--fps", "--slowmo", "--orbit", "--size", "--camera"],
}


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(sorted(OPTIONS)), data=st.data())
def test_any_option_value_exits_0_or_2_with_one_line(command, data, capsys,
                                                     tmp_path_factory):
    # A scene that does not exist: whatever the options, nothing is simulated or drawn,
    # so an option is either refused (one line, status 2) or the missing scene is.
    option = data.draw(st.sampled_from(OPTIONS[command]))
    value = data.draw(OPTION_VALUES)
    out = tmp_path_factory.mktemp("out")
    extra = ["--out", str(out / "x.mp4")] if command == "record" else []
    if command == "figure" and option != "--times":
        extra = ["--times", "0"]
    rc, err = _main([command, str(out / "no-such-scene.toml"), option, value, *extra], capsys)
    assert rc == 2, err
    assert err.count("\n") == 1 and err.startswith("slinky3d: error: ") and "Traceback" not in err


def test_slinky_error_messages_are_one_line():
    with pytest.raises(SlinkyError) as e:
        loader.from_dict(_set(DOCS["both_ends"], ("slinky", "far", "offset_R", 0), -1e6))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("argv", [
    ["simulate", "{scene}", "--duration", "1e300"],  # refused before any allocation
    ["simulate", "{scene}", "--fps", "1e300"],
    ["simulate", "{scene}", "--set", "slinky.n_coils=1e300"],
    ["simulate", "{scene}", "--set", "slinky.n_coils=6000"],  # over the size limit
    ["simulate", "{scene}", "--set", "slinky.mass=nan"],
    ["simulate", "{scene}", "--set", "duration=-inf"],
    ["simulate", "{scene}", "--set", "slinky.anchor.position=[1e300, 0]"],
    ["simulate", "{scene}", "--set", "slinky.ma\nss=1"],  # a line break in a key
    ["figure", "{scene}", "--times", "0:1e300:1e-300"],
    ["figure", "{scene}", "--times", "0,1e300"],
    ["figure", "{scene}", "--times", "0,1e400"],
])
def test_absurd_command_lines_exit_2_with_one_line(argv, scene_file, capsys, tmp_path):
    argv = [a.replace("{scene}", scene_file) for a in argv]
    rc, err = _main([*argv, "--out", str(tmp_path / "x.out")], capsys)
    assert rc == 2 and err.count("\n") == 1 and err.startswith("slinky3d: error: ")
    assert not any(tmp_path.iterdir())


def test_a_slinky_over_the_size_limit_is_refused_naming_it():
    msg = _outcome(_set(DOCS["hanging"], ("slinky", "n_coils"), slinky.N_MAX / 2 + 0.5))
    assert f"at most {slinky.N_MAX / 2:g}" in msg and f"N = {slinky.N_MAX}" in msg
