"""Scene files: every shipped scene loads; validation gives one clear line per mistake."""

import math
from pathlib import Path

import numpy as np
import pytest

from slinky3d.errors import SceneError
from slinky3d.model import chain
from slinky3d.resources import data_dir
from slinky3d.scene import loader as scene
from slinky3d.scene.look import CameraHint, Look
from slinky3d.scene.spec import DT_UNDAMPED, Scene

SCENES = sorted(data_dir("scenes").glob("*.toml"))

BASE = """
title = "t"
[slinky]
preset = "plastic"
[slinky.anchor]
condition = "held"
[slinky.far]
condition = "free"
[slinky.shape]
kind = "hanging"
"""

U = """
[slinky]
preset = "plastic"
[slinky.far]
condition = "released"
offset_R = [-5, 0]
orientation = 3.141592653589793
[slinky.shape]
kind = "both_ends"
"""


def error(text: str, overrides=()) -> str:
    with pytest.raises(SceneError) as e:
        scene.loads(text, "s.toml", overrides)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_scenes_are_found():
    names = {p.stem for p in SCENES}
    assert {"1Pa", "1Pb", "2P", "3Pa", "3Pb", "4S", "hanging-plastic", "hanging-steel",
            "drop-plastic"} <= names


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_every_scene_loads(path: Path):
    sc = scene.load(path)
    assert sc.title and sc.title != path.stem and sc.description
    assert sc.duration > 0
    assert isinstance(sc.look, Look) and isinstance(sc.camera, CameraHint)
    for s in sc.slinkies:
        p = s.params
        assert s.q0.shape == (p.N + 3,) and np.all(np.isfinite(s.q0))
        assert np.all(s.q0[3:] >= p.theta_min - 1e-9)
        E = chain.end_points(s.q0, p.R)
        assert np.allclose(E[0], s.anchor.position)
        # The far end's pose is where the shape puts it (the target, for both_ends).
        assert np.allclose(E[-1], s.far.position, atol=1e-4)
        Th = chain.composite(s.q0[3:], s.q0[2])[-1]
        assert math.isclose(math.remainder(Th - s.far.orientation, 2 * math.pi), 0,
                            abs_tol=1e-6)


# docs/model.md section 7: name, preset, offset in R, C_D, impacts, duration.
PAPER = [
    ("1Pa", "plastic", (-5, 0), 2e-3, True, 1.4),
    ("1Pb", "plastic", (-5, 0), 2e-3, False, 1.4),
    ("2P", "plastic", (-10, 0), 1e-2, True, 1.4),
    ("3Pa", "plastic", (-2, 5), 5e-3, True, 1.4),
    ("3Pb", "plastic", (-2, 5), 5e-3, False, 1.4),
    ("4S", "steel", (-2, 5), 5e-3, True, 1.6),
]


@pytest.mark.parametrize("name,pre,off,C_D,impacts,duration", PAPER, ids=[r[0] for r in PAPER])
def test_paper_scenes_match_table2(name, pre, off, C_D, impacts, duration):
    sc = scene.load(name)
    (s,) = sc.slinkies
    p = s.params
    assert p.preset == pre and p.C_D == C_D and sc.duration == duration
    assert s.shape == "both_ends"
    assert s.anchor.condition == "held" and s.anchor.position == (0.0, 0.0)
    assert s.anchor.orientation == 0.0
    assert s.far.condition == "released" and s.far.release_time == 0.0
    assert np.allclose(s.far.position, np.array(off) * p.R)
    assert s.far.orientation == pytest.approx(math.pi)
    assert s.contact.enabled is impacts and s.contact.law == "rigid"
    assert not s.far.held_at(0.0) and s.anchor.held_at(10.0)


def test_hanging_and_drop_scenes():
    for pre in ("plastic", "steel"):
        (s,) = scene.load(f"hanging-{pre}").slinkies
        assert s.params.preset == pre and s.shape == "hanging"
        assert s.anchor.condition == "held" and s.far.condition == "free"
        E = chain.end_points(s.q0, s.params.R)
        assert E[-1, 1] < -0.3  # hangs well below its top
        assert np.sum(s.q0[3:] <= s.params.theta_min + 1e-9) >= 1  # collapsed bottom coils
    sc = scene.load("drop-plastic")
    (s,) = sc.slinkies
    assert s.anchor.condition == "released" and s.anchor.release_time == 0.2
    assert s.anchor.held_at(0.19) and not s.anchor.held_at(0.2)
    assert s.far.condition == "free" and 0.5 <= sc.duration <= 0.8


def test_defaults_and_title_from_stem(tmp_path):
    f = tmp_path / "my-scene.toml"
    f.write_text(BASE.replace('title = "t"', ""))
    sc = scene.load(f)
    assert sc.title == "my-scene" and sc.duration == Scene.duration
    assert sc.dt == DT_UNDAMPED  # undamped: the explicit step
    assert scene.load(f, ["slinky.C_D=1e-3"]).dt == Scene.dt  # damped: the Rosenbrock step
    (s,) = sc.slinkies
    assert s.contact.enabled and s.contact.law == "rigid" and s.params.C_D == 0.0
    assert sc.path == str(f) and sc.raw["slinky"]["preset"] == "plastic"


def test_offset_R_is_offset_in_units_of_R():
    a = scene.loads(U).slinkies[0]
    R = a.params.R
    b = scene.loads(U.replace("offset_R = [-5, 0]", f"offset = [{-5 * R!r}, 0.0]")).slinkies[0]
    c = scene.loads(U.replace("offset_R = [-5, 0]", f"position = [{-5 * R!r}, 0.0]")).slinkies[0]
    assert np.allclose(a.q0, b.q0) and np.allclose(a.q0, c.q0)
    assert a.far.position == pytest.approx((-5 * R, 0.0))


def test_overrides_reach_the_params():
    s = scene.loads(BASE, overrides=["slinky.C_D=0.004", "slinky.n_coils=10",
                                     "slinky.theta_min=0.1", "slinky.I=1e-6"]).slinkies[0]
    p = s.params
    assert p.C_D == 0.004 and p.N == 20 and p.theta_min == 0.1 and p.I == 1e-6
    assert s.q0.shape == (23,)


def test_angles_shape():
    text = BASE.replace('kind = "hanging"', 'kind = "angles"\ntheta = 0.5')
    s = scene.loads(text, overrides=["slinky.n_coils=2"]).slinkies[0]
    assert np.array_equal(s.q0, [0, 0, 0, 0.5, 0.5, 0.5, 0.5])
    s = scene.loads(text, overrides=["slinky.n_coils=1", "slinky.shape.theta=[0.9, 1.0]",
                                     "slinky.anchor.orientation=0.2"]).slinkies[0]
    assert np.array_equal(s.q0, [0, 0, 0.2, 0.9, 1.0])
    assert s.far.position == pytest.approx(tuple(chain.end_points(s.q0, s.params.R)[-1]))


def test_several_slinkies():
    text = """
[[slinky]]
name = "rigid"
[[slinky]]
name = "soft"
contact = { law = "soft", stiffness = 5.0 }
anchor = { position = [0.3, 0.0] }
"""
    sc = scene.loads(text)
    a, b = sc.slinkies
    assert (a.name, b.name) == ("rigid", "soft")
    assert b.contact.law == "soft" and b.contact.stiffness == 5.0
    assert b.anchor.position == (0.3, 0.0)
    assert np.allclose(b.q0[3:], a.q0[3:])
    # An index picks one Slinky; a plain key sets every one.
    sc = scene.loads(text, overrides=["slinky.1.C_D=0.01", "slinky.mass=0.05"])
    assert [s.params.C_D for s in sc.slinkies] == [0.0, 0.01]
    assert [s.params.mass for s in sc.slinkies] == [0.05, 0.05]
    assert "slinky.1.contact.law: unknown value 'hard'" in error(
        text, ["slinky.1.contact.law=hard"])
    assert "two Slinkies are named 'rigid'" in error(text.replace('"soft"', '"rigid"', 1))
    assert "slinky.5: index 5 is out of range" in error(text, ["slinky.5.C_D=0"])


@pytest.mark.parametrize("line,key,fragment", [
    ("colour = 1", "slinky.shape.colour", "unknown key"),
    ("[look]\nrainbo = true", "look.rainbo", "unknown key"),
    ("[slinky.ancor]", "slinky.ancor", "did you mean 'anchor'"),
    ("[slinky.contact]\nlaww = 'rigid'", "slinky.contact.laww", "did you mean 'law'"),
    ("[slinky.grab]\nstifness = 1", "slinky.grab.stifness", "did you mean 'stiffness'"),
    ("[slinky.shape.x]", "slinky.shape.x", "unknown key"),
    ("[camera]\ndistanc = 1", "camera.distanc", "unknown key"),
])
def test_unknown_keys(line, key, fragment):
    msg = error(BASE + line)
    assert msg.startswith(f"s.toml: {key}: ") and fragment in msg


def test_unknown_key_suggests_at_top_and_in_slinky():
    assert "did you mean 'duration'" in error(BASE, ["durration=1"])
    assert "did you mean 'C_D'" in error(BASE, ["slinky.CD=0"])


@pytest.mark.parametrize("setting,key,fragment", [
    ("slinky.mass=0", "slinky.mass", "must be in [1e-06, 1000]"),
    ("slinky.R=-0.01", "slinky.R", "must be in [0.0001, 10]"),
    ("slinky.L0=0", "slinky.L0", "must be in [1e-05, 100]"),
    ("slinky.mass=nan", "slinky.mass", "finite"),
    ("slinky.k_coil=inf", "slinky.k_coil", "finite"),
    ("slinky.k_coil=-1", "slinky.k_coil", "must be in [1e-09, 1e+06]"),
    ("slinky.C_D=-1e-3", "slinky.C_D", "must be in [0, 1000]"),
    ("slinky.n_coils=0.5", "slinky.n_coils", "must be >= 1"),
    ("slinky.n_coils=10.2", "slinky.n_coils", "whole number of half coils"),
    ("slinky.n_coils='ten'", "slinky.n_coils", "must be a number, not a string"),
    ("slinky.theta_min=0", "slinky.theta_min", "[1e-06, 1.5708)"),
    ("slinky.theta_min=1.6", "slinky.theta_min", "[1e-06, 1.5708)"),
    ("slinky.preset=rubber", "slinky.preset", "unknown value 'rubber'"),
    ("slinky.mass=true", "slinky.mass", "must be a number, not a boolean"),
    ("duration=-1", "duration", "must be >= 0"),
    ("dt=0", "dt", "(0, 0.005]"),
    ("dt=0.1", "dt", "(0, 0.005]"),
    ("title=3", "title", "must be a string"),
    ("slinky.anchor.condition=stuck", "slinky.anchor.condition", "unknown value"),
    ("slinky.anchor.position=[0]", "slinky.anchor.position", "two numbers"),
    ("slinky.anchor.position=[0,'a']", "slinky.anchor.position", "must be a number"),
    ("slinky.anchor.orientation=nan", "slinky.anchor.orientation", "finite"),
    ("slinky.anchor.release_time=1", "slinky.anchor.release_time", "only applies to "
     "condition 'released' or 'scripted' (here 'held')"),
    ("slinky.far.release_time=1", "slinky.far.release_time", "only applies to "
     "condition 'released' (here 'free')"),
    ("slinky.contact.law=hard", "slinky.contact.law", "known: rigid, paper, soft"),
    ("slinky.contact.enabled=1", "slinky.contact.enabled", "true or false"),
    ("slinky.contact.stiffness=0", "slinky.contact.stiffness", "must be in (0, 1e+09]"),
    ("slinky.grab.max_force_weights=0", "slinky.grab.max_force_weights",
     "must be in (0, 1000]"),
    ("slinky.contact=3", "slinky.contact", "must be a table"),
    ("slinky.far.condition=scripted", "slinky.far.condition", "scripted far end is not "
     "supported"),
    ("slinky.far.condition=held", "slinky.far.condition", "needs slinky.shape.kind = "
     "'both_ends'"),
    ("slinky.far.offset=[1,0]", "slinky.far.offset", "only applies to slinky.shape.kind"),
    ("slinky.shape.theta=[1]", "slinky.shape.theta", "only applies to shape kind 'angles'"),
    ("slinky.shape.kind=angles", "slinky.shape.kind", "needs slinky.shape.theta (N = 75"),
    ("slinky.anchor.condition=scripted", "slinky.anchor.condition", "needs a "
     "[slinky.anchor.motion] table"),
    ("slinky.anchor.motion.frequency=1", "slinky.anchor.motion", "only applies to "
     "condition 'scripted'"),
])
def test_bad_values_name_the_key(setting, key, fragment):
    msg = error(BASE, [setting])
    assert msg.startswith(f"--set: {key}: "), msg
    assert fragment in msg, msg


def test_the_same_mistake_in_the_file_names_the_file():
    msg = error(BASE.replace('preset = "plastic"', "preset = 'plastic'\nmass = -1"))
    assert msg == ("s.toml: slinky.mass: must be in [1e-06, 1000] (between 1e-06 and 1000), "
                   "got -1")


def test_angles_checked_against_N_and_theta_min():
    text = BASE.replace('kind = "hanging"', 'kind = "angles"')
    assert "must have N = 4 values (one per joint), got 3" in error(
        text, ["slinky.n_coils=2", "slinky.shape.theta=[1, 1, 1]"])
    msg = error(text, ["slinky.n_coils=1", "slinky.shape.theta=[1, 0.001]"])
    assert "joint 2 is 0.001 rad" in msg and "theta_min" in msg


def test_both_ends_rules():
    assert "needs the far end's offset" in error(U.replace("offset_R = [-5, 0]", ""))
    assert "needs the far end's orientation" in error(
        U.replace("orientation = 3.141592653589793", ""))
    msg = error(U, ["slinky.far.offset=[-0.1, 0]"])
    assert "give only one of offset, offset_R, position" in msg
    msg = error(U, ["slinky.far.offset_R=[-200, 0]"])
    assert msg.startswith("--set: slinky.far.offset_R: the far end is 6.3 m from the "
                          "anchored end, farther than the Slinky reaches (2 R N = 4.725 m)")
    # A far end held for a while needs the anchor held at least as long.
    held = U.replace('condition = "released"', 'condition = "released"\nrelease_time = 0.5')
    scene.loads(held)
    msg = error(held, ["slinky.anchor.condition=released", "slinky.anchor.release_time=0.2"])
    assert "anchored end is let go at t = 0.2 s while the far end is held until t = 0.5 s" in msg
    # A moving anchor with the far end held: the far end gripped, on the 3D solver only.
    moving = ["slinky.anchor.condition=scripted",
              "slinky.anchor.motion={amplitude=[0, 0.01], frequency=2}"]
    gripped = scene.loads(held, overrides=moving)
    assert gripped.slinkies[0].far_gripped and gripped.solver == "3d"
    msg = error(held, [*moving, "solver='planar'"])
    assert "far end is held while its anchored end moves" in msg
    # ...the planar solver's too when the motion starts after the far end's release.
    s = scene.loads(held, overrides=["slinky.anchor.condition=scripted",
                                     "slinky.anchor.motion={amplitude=[0, 0.01], start=0.5}"])
    assert s.slinkies[0].anchor.motion.amplitude == (0.0, 0.01)
    # Held for ever at both ends is a static arch.
    s = scene.loads(U, overrides=["slinky.far.condition=held"]).slinkies[0]
    assert s.far.held_at(100.0) and s.far.release_time == math.inf


def test_hanging_needs_far_end_loose():
    msg = error(BASE, ["slinky.far.condition=released", "slinky.far.release_time=0.1"])
    assert "a far end held at t = 0 needs slinky.shape.kind = 'both_ends'" in msg


def test_missing_slinky_and_empty_array():
    assert "needs a [slinky] table" in error('title = "x"')
    assert "slinky: the [[slinky]] array is empty" in error("slinky = []")


def test_toml_syntax_error_is_one_line(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('title = "x"\n[slinky\npreset = "plastic"\n')
    with pytest.raises(SceneError) as e:
        scene.load(f)
    assert str(e.value).startswith(f"{f}: line 2, column 8: invalid TOML")


def test_missing_file_names_the_shipped_scenes():
    with pytest.raises(SceneError) as e:
        scene.load("no-such-scene")
    assert "no-such-scene: no such scene file (shipped scenes: 1Pa," in str(e.value)


def test_shipped_scene_by_name_or_path():
    assert scene.load("1Pa").path == scene.load("1Pa.toml").path == str(data_dir("scenes")
                                                                          / "1Pa.toml")


def test_override_values_are_toml_else_strings():
    sc = scene.loads(BASE, overrides=["title=hello world", "duration=3", "description='q'"])
    assert (sc.title, sc.duration, sc.description) == ("hello world", 3.0, "q")
    assert sc.raw["duration"] == 3 and isinstance(sc.raw["duration"], int)
    sc = scene.loads(BASE, overrides=["slinky.contact.enabled=false"])
    assert sc.slinkies[0].contact.enabled is False


@pytest.mark.parametrize("setting,fragment", [
    ("nokey", "--set: nokey: expected KEY=VALUE"),
    ("=3", "expected KEY=VALUE"),
    ("slinky..C_D=0", "expected KEY=VALUE"),
    ("title.x=1", "--set: title.x: 'title' is a value, not a table"),
    ("duration.x=1", "--set: duration: must be a number, not a table"),
    ("slinky.1.C_D=0", "--set: slinky.1: 'slinky' is a single table; only index 0 exists"),
])
def test_bad_set_syntax(setting, fragment):
    assert fragment in error(BASE, [setting])


def test_set_index_zero_on_a_single_table():
    sc = scene.loads(BASE, overrides=["slinky.0.C_D=0.003"])
    assert sc.slinkies[0].params.C_D == 0.003
    assert error(BASE, ["slinky.0.C_D=-1"]).startswith("--set: slinky.C_D: must be in [0, 1000]")


def test_look_and_camera_tables():
    sc = scene.loads(BASE + "[look]\nrainbow = true\n[camera]\ndistance = 2.0\n")
    assert sc.look.rainbow is True and sc.camera.distance == 2.0
    assert error(BASE, ["camera.distance=-1"]).startswith("--set: camera.distance: ")
    assert error(BASE, ["look=3"]).startswith("--set: look: must be a table")
