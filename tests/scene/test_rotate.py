"""`rotate = DEGREES`: a whole scene turned about the vertical (docs/scene-format.md).

Frame invariance (issue 24): a planar scene and a 3D one, each turned by 90 and 37
degrees, give the same end points turned, to 1e-9 m over 1 s."""

from __future__ import annotations

import math

import numpy as np
import pytest

from slinky3d import cli
from slinky3d.errors import SceneError, SlinkyError
from slinky3d.model.chain3d import turn_about_vertical
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader
from slinky3d.scene.look import DEFAULT_YAW_DEG

# The hanging plastic Slinky, its top shaken along x and z at once (a 3D scene: the
# motion leaves the plane), its bottom coils resting on each other.
SHAKEN = """
title = "shaken in 3D"
[slinky]
preset = "plastic"
C_D = 2e-3
[slinky.anchor]
condition = "scripted"
position = [0.1, 0.05]
[slinky.anchor.motion]
amplitude = [0.01, 0.0, 0.01]
frequency = 1.5
start = 0.1
[slinky.far]
condition = "free"
[slinky.contact]
enabled = true
"""


def ends_over(sc, solver: str, seconds: float = 1.0, every: int = 25) -> list[np.ndarray]:
    sim = Simulation(sc, solver=solver)
    out = []
    for _ in range(round(seconds / sc.dt / every)):
        sim.step(every)
        out.append(sim.slinkies[0].ends())
    assert sim.rollbacks == 0
    return out


@pytest.mark.parametrize("base", ["3Pa", "shaken"])
@pytest.mark.parametrize("degrees", [90.0, 37.0])
def test_a_turned_scene_gives_the_same_end_points_turned(base, degrees):
    def scene(over):
        if base == "shaken":
            return loader.loads(SHAKEN, overrides=over)
        return loader.load(base, over)

    plain = scene([])
    turned = scene([f"rotate={degrees}"])
    assert turned.solver == "3d" and plain.solver == ("3d" if base == "shaken" else "planar")
    T = turn_about_vertical(math.radians(degrees))
    a = ends_over(plain, "3d")
    b = ends_over(turned, "3d")
    worst = max(float(np.abs(y - x @ T.T).max()) for x, y in zip(a, b, strict=True))
    moved = max(float(np.abs(x - a[0]).max()) for x in a)
    assert moved > 0.01  # it moved: centimetres
    assert worst < 1e-9  # measured: see docs/solver.md, "Scenes on the 3D solver"


def test_rotate_is_validated_and_picks_the_3d_solver():
    assert loader.load("3Pa", ["rotate=720"]).solver == "planar"  # whole turns: planar
    assert loader.load("3Pa", ["rotate=-37.5"]).solver == "3d"
    for bad, words in [("rotate='x'", "must be a number"), ("rotate=nan", "finite"),
                       ("rotate=inf", "finite"), ("rotate=1e9", "between")]:
        with pytest.raises(SceneError) as e:
            loader.load("3Pa", [bad])
        assert words in str(e.value) and "rotate" in str(e.value)
    with pytest.raises(SceneError) as e:
        loader.load("3Pa", ["rotate=37", "solver='planar'"])
    assert "rotate = 37" in str(e.value) and "3D solver" in str(e.value)
    with pytest.raises(SceneError, match="moves along z"):
        loader.loads(SHAKEN.replace("[slinky]\n", 'solver = "planar"\n[slinky]\n', 1))
    with pytest.raises(SlinkyError, match="planar solver cannot run"):
        Simulation(loader.load("3Pa", ["rotate=90"]), solver="planar")


def test_the_camera_turns_with_the_scene():
    sc = loader.load("side-1Pa-1Pb", ["rotate=30"])
    assert sc.camera.yaw_deg == pytest.approx(0.0 + 30.0)  # the scene's own yaw, turned
    assert loader.load("3Pa", ["rotate=30"]).camera.yaw_deg == pytest.approx(
        DEFAULT_YAW_DEG + 30.0)
    sc = loader.load("3Pa", ["camera.target=[1.0, 0.5, 0.0]", "rotate=90"])
    assert np.allclose(sc.camera.target, [0.0, 0.5, -1.0])
    assert loader.load("3Pa", ["rotate=360"]).camera == loader.load("3Pa").camera


def test_rotate_on_the_command_line(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["simulate", "3Pa", "--set", "rotate=90", "--duration", "0.1"]) == 0
    assert "(3d" in capsys.readouterr().out
    with np.load("3Pa.npz") as z:
        ends = z["ends"]
    # turned a quarter about y: the plane x-y becomes the plane z-y (x -> -z)
    assert np.abs(ends[..., 0]).max() < 1e-12 and np.abs(ends[..., 2]).max() > 0.05
