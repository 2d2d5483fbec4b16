"""Editing a scene from the parameter panel: changes re-solve the static shape, saved
scenes load back to the same state, bad values are one line."""

from dataclasses import replace

import numpy as np
import pytest

from slinky3d.errors import SceneError
from slinky3d.model import chain
from slinky3d.model.params import PRESETS, G
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import edit
from slinky3d.scene import loader as scene_loader

TWO = """
title = "two"
[[slinky]]
preset = "plastic"
C_D = 2e-3
[[slinky]]
preset = "steel"
C_D = 1e-3
anchor = { position = [0.2, 0.0] }
"""


def lowest_y(spec) -> float:
    return float(chain.end_points(spec.q0, spec.params.R)[:, 1].min())


def test_panel_values_read_the_scene():
    s = scene_loader.load("hanging-plastic")
    v = edit.panel_values(s)
    p = s.slinkies[0].params
    assert (v.preset, v.n_coils, v.mass, v.R, v.L0, v.k_coil, v.C_D, v.g) == (
        "plastic", p.n_coils, p.mass, p.R, p.L0, p.k_coil, p.C_D, p.g)
    assert v.contact_law == s.slinkies[0].contact.law
    assert v.impacts == s.slinkies[0].contact.enabled
    assert edit.overrides(s, v) == []  # nothing changed, nothing written


def test_a_change_restarts_with_the_new_parameter():
    s = scene_loader.load("hanging-plastic")
    v = edit.panel_values(s)
    moon = edit.with_values(s, replace(v, g=edit.PLANETS["Moon"], impacts=False,
                                       contact_law="paper"))
    spec = moon.slinkies[0]
    assert spec.params.g == edit.PLANETS["Moon"]
    assert not spec.contact.enabled and spec.contact.law == "paper"
    # The static shape is solved again: under a sixth of the weight the Slinky
    # stretches less, so its bottom hangs higher.
    assert lowest_y(spec) > lowest_y(s.slinkies[0]) + 0.05
    assert spec.q0[chain.BASE:].min() >= spec.params.theta_min - 1e-12
    # The simulation starts from it, at rest with the new gravity.
    sim = Simulation(moon)
    assert sim.slinkies[0].p.g == edit.PLANETS["Moon"]
    np.testing.assert_array_equal(sim.slinkies[0].q, spec.q0)


def test_preset_change_takes_the_presets_own_values():
    s = scene_loader.load("hanging-plastic")
    v = edit.with_preset(edit.panel_values(s), "steel")
    assert edit.overrides(s, v) == ['slinky.preset="steel"']
    p = edit.with_values(s, v).slinkies[0].params
    assert p.preset == "steel"
    for k, x in PRESETS["steel"].items():
        assert getattr(p, k) == x
    assert p.C_D == s.slinkies[0].params.C_D  # kept


def test_one_slinky_of_several():
    s = scene_loader.loads(TWO)
    v = edit.panel_values(s, 1)
    assert v.preset == "steel"
    s2 = edit.with_values(s, replace(v, mass=0.25), 1)
    assert s2.slinkies[1].params.mass == 0.25
    assert s2.slinkies[0].params == s.slinkies[0].params
    np.testing.assert_array_equal(s2.slinkies[0].q0, s.slinkies[0].q0)


@pytest.mark.parametrize("name", ["hanging-plastic", "2P"])
def test_saved_scene_loads_back_to_the_same_state(tmp_path, name):
    s = scene_loader.load(name)
    v = edit.panel_values(s)
    changed = edit.with_values(s, replace(v, C_D=3e-3, g=edit.PLANETS["Mars"], mass=0.041))
    path = edit.save(changed, tmp_path / "sub" / "saved.toml")
    back = scene_loader.load(path)
    assert back.title == s.title
    assert edit.panel_values(back) == edit.panel_values(changed)
    assert back.dt == changed.dt
    np.testing.assert_array_equal(back.slinkies[0].q0, changed.slinkies[0].q0)
    a, b = Simulation(changed), Simulation(back)
    assert a.state_hash() == b.state_hash()
    a.step(25)
    b.step(25)
    assert a.state_hash() == b.state_hash()


def test_several_slinkies_round_trip(tmp_path):
    s = edit.with_values(scene_loader.loads(TWO), replace(
        edit.panel_values(scene_loader.loads(TWO), 0), k_coil=0.03), 0)
    back = scene_loader.loads(edit.dump(s))
    for x, y in zip(s.slinkies, back.slinkies, strict=True):
        assert x.params == y.params
        np.testing.assert_array_equal(x.q0, y.q0)


@pytest.mark.parametrize("change, key", [
    ({"mass": -1.0}, "slinky.mass"),
    ({"n_coils": 3.3}, "slinky.n_coils"),
    ({"contact_law": "sticky"}, "slinky.contact.law"),
    ({"g": float("nan")}, "slinky.g"),
])
def test_bad_values_are_one_line(change, key):
    s = scene_loader.load("hanging-plastic")
    with pytest.raises(SceneError) as e:
        edit.with_values(s, replace(edit.panel_values(s), **change))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("--set: ") and key in msg


def test_bad_preset_and_unwritable_path(tmp_path):
    s = scene_loader.load("hanging-plastic")
    with pytest.raises(SceneError, match="unknown preset 'brass'"):
        edit.with_preset(edit.panel_values(s), "brass")
    (tmp_path / "file").write_text("")
    with pytest.raises(SceneError, match="cannot write") as e:
        edit.save(s, tmp_path / "file" / "x.toml")
    assert "\n" not in str(e.value)


def test_planets():
    assert edit.PLANETS["Earth"] == G  # the model's default gravity
    assert edit.PLANETS["Moon"] < edit.PLANETS["Mars"] < edit.PLANETS["Earth"] < \
        edit.PLANETS["Jupiter"]
