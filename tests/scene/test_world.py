"""The [world] table: floor, stairs, table, friction; one clear error per bad key."""

import math

import numpy as np
import pytest

from slinky3d.errors import SceneError
from slinky3d.scene.loader import loads
from slinky3d.scene.world import World, distance

STAIRS = """
[world]
mu = 0.4
[world.stairs]
top = [0.0, -0.1]
height = 0.05
depth = 0.12
count = 3
landing = 0.3
"""


def scene(world: str, slinky: str = "[slinky]\npreset = 'plastic'\n"):
    return loads(slinky + world, "s.toml")


def test_no_world_is_nothing_to_touch():
    s = scene("")
    assert s.world == World() and not s.world.solid and s.look.stairs == ()


def test_stairs_make_blocks_a_floor_and_the_look():
    w = scene(STAIRS.replace("top = [0.0, -0.1]", "top = [0.0, -0.9]")).world
    assert w.mu == w.mu_static == 0.4
    assert np.allclose(w.blocks(drawn=True), [(-0.3, 0.0, -0.9), (0.0, 0.12, -0.95),
                                              (0.12, 0.24, -1.0), (0.24, 0.36, -1.05)],
                       atol=1e-15)
    # for contact every step reaches back under the landing: no buried side faces
    assert [b[0] for b in w.blocks()] == [-0.3] * 4
    assert [b[1:] for b in w.blocks()] == [b[1:] for b in w.blocks(drawn=True)]
    assert w.floor == pytest.approx(-0.9 - 4 * 0.05)  # one more step down
    st = w.stairs
    assert st.step_at(0.06, -0.95) == 1 and st.step_at(-0.1, -0.9) == 0
    assert st.step_at(0.5, w.floor) == 4 and st.step_at(0.06, -0.5) is None


def test_the_look_draws_the_worlds_blocks_on_its_floor():
    s = scene(STAIRS.replace("top = [0.0, -0.1]", "top = [1.0, -0.9]"))
    assert s.look.stairs == s.world.blocks(drawn=True) and s.look.floor_y == s.world.floor


def test_a_table_stands_on_a_floor_below_it():
    w = scene("[world]\n[world.table]\nedge = [0.2, -0.8]\nwidth = 0.5\n").world
    assert w.blocks() == ((0.2 - 0.5, 0.2, -0.8),) and w.floor < -0.8


def test_distance_outside_inside_and_off_a_corner():
    w = scene(STAIRS.replace("top = [0.0, -0.1]", "top = [0.0, -0.9]")).world
    pts = np.array([[-0.1, -0.85], [0.06, -1.0], [0.0 + 0.03, -0.9 + 0.04],
                    [-0.1, -0.91]])
    d = distance(w, pts)
    assert d[0] == pytest.approx(0.05)  # above the landing
    assert d[1] == pytest.approx(-0.05)  # 5 cm inside step 1, under its top
    assert d[2] == pytest.approx(math.hypot(0.03, 0.04))  # off the nosing
    assert d[3] == pytest.approx(-0.01)  # 1 cm into the landing


def test_an_auto_floor_goes_under_the_initial_shape_whatever_the_parameters():
    from slinky3d.model import chain

    for preset in ("plastic", "steel"):
        s = scene('[world]\nfloor = "auto"\n', f"[slinky]\npreset = '{preset}'\n")
        sp = s.slinkies[0]
        lowest = chain.end_points(sp.q0, sp.params.R)[:, 1].min()
        assert s.world.floor == pytest.approx(lowest - 0.1)


@pytest.mark.parametrize("world, key, words", [
    ('[world]\nfloor = "auto"\n[world.table]\nedge = [0, -2]\n', "world.floor", "bare floor"),
    ('[world]\nfloor = "low"\n', "world.floor", "number"),
    ("[world]\nmu = -1\n", "world.mu", "between"),
    ("[world]\nfloor = 0\nmu = 0.5\nmu_static = 0.2\n", "world.mu_static", ">= mu"),
    ("[world]\nmu = 0.5\n", "world.floor", "missing"),
    ("[world]\nfloor = nan\n", "world.floor", "finite"),
    ("[world]\nfloor = 0\ngravity = 1\n", "world.gravity", "unknown key"),
    ("[world.stairs]\ntop = [0, 0]\nheight = 0.1\ndepth = 0.1\n", "world.stairs.count",
     "missing"),
    ("[world.stairs]\ntop = [0, 0]\nheight = 0.1\ndepth = 0.1\ncount = 2.5\n",
     "world.stairs.count", "whole number"),
    ("[world.stairs]\ntop = [0, 0]\nheight = 0\ndepth = 0.1\ncount = 2\n",
     "world.stairs.height", "between"),
    ("[world]\nfloor = 0.5\n[world.stairs]\ntop = [0, 0]\nheight = 0.1\ndepth = 0.1\n"
     "count = 2\n", "world.floor", "below every step"),
    ("[world.table]\nwidth = 1\n", "world.table.edge", "missing"),
    ("[world]\nfloor = -0.5\n", "slinky", "inside the floor"),
    ("[world]\nfloor = -1\n[look]\nfloor_y = -2\n", "look.floor_y", "[world] floor"),
    (STAIRS + "rotate = 'left'\n", "world.stairs.rotate", "number"),
    (STAIRS + "rotate = 1e9\n", "world.stairs.rotate", "between"),
    ("[world.table]\nedge = [0, -2]\nrotate = nan\n", "world.table.rotate", "finite"),
])
def test_world_errors(world, key, words):
    with pytest.raises(SceneError) as e:
        scene(world)
    assert e.value.key == key and words in str(e.value)
    assert "\n" not in str(e.value)


TURNED = """
[world]
floor = -2.0
[world.stairs]
top = [0.3, -0.5]
height = 0.05
depth = 0.12
count = 3
rotate = 30
[world.table]
edge = [-1.0, -0.9]
width = 0.5
rotate = -100
"""


def test_a_turned_block_needs_the_3d_solver_and_a_whole_turn_does_not():
    s = scene(TURNED)
    assert s.solver == "3d" and s.needs_3d and s.world.turned == "stairs.rotate = 30"
    assert s.look.stairs_turns == s.world.turns()
    assert s.world.turns()[0] == (pytest.approx(math.radians(30)), 0.3)  # the nosing
    assert s.world.turns()[-1] == (pytest.approx(math.radians(260)), -1.0)  # the edge
    whole = scene(TURNED.replace("rotate = 30", "rotate = 360").replace("-100", "720"))
    assert whole.solver == "planar" and not whole.world.turned
    assert whole.world.blocks() == s.world.blocks()
    for world, words in ((TURNED, "world.stairs.rotate = 30 turns a block"),
                         ("[world.table]\nedge = [0, -2]\nrotate = -10\n", "table.rotate")):
        with pytest.raises(SceneError) as e:  # --solver planar: the key, set
            loads("[slinky]\npreset = 'plastic'\n" + world, "s.toml", ['solver = "planar"'])
        assert e.value.key == "solver" and words in str(e.value) and "\n" not in str(e.value)


def test_a_turned_blocks_cross_section_is_turned_about_its_pivot():
    """distance() in 3D: a point turned with the block about its pivot keeps its
    distance from it; the floor and the pivot's vertical line do not move."""
    flight = TURNED.partition("[world.table]")[0]  # a table would cross it: blocks
    w = scene(flight).world  # reach along their own z without end
    plain = scene(flight.replace("rotate = 30", "rotate = 0")).world
    rng = np.random.default_rng(3)
    p = rng.uniform([-0.5, -1.2, -0.6], [1.0, 0.0, 0.6], (400, 3))
    pivot = np.array([0.3, 0.0, 0.0])
    from slinky3d.model.chain3d import turn_about_vertical

    B = turn_about_vertical(math.radians(30))
    turned = (p - pivot) @ B.T + pivot
    assert np.allclose(distance(w, turned), distance(plain, p), atol=1e-12)
    line = np.c_[np.full(5, 0.3), np.linspace(-1, 0.5, 5), np.zeros(5)]  # the nosing's
    assert np.allclose(distance(w, line), distance(plain, line), atol=1e-12)
    assert w.surface(0.35, 0.0) == plain.surface(0.35) == -0.55  # on step 1 ...
    x, z = 0.3 + 0.1 * math.cos(math.radians(30)), -0.1 * math.sin(math.radians(30))
    assert w.surface(x, z) == -0.55 and plain.surface(x) == -0.55  # ... turned


def test_a_turned_world_is_written_back_by_the_scene_writers():
    from slinky3d.runtime.session import scene_text
    from slinky3d.scene.edit import dump

    s = scene(TURNED)
    for text in (dump(s), scene_text(s)):
        back = loads(text, "back.toml")
        assert back.world == s.world and back.solver == "3d"
