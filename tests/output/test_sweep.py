"""`slinky3d sweep`: the spec, the grid's runs on a local pool and on a Dask cluster (the
same table, bit for bit), invalid points as rows, the table and the map written."""

import csv
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slinky3d import cli
from slinky3d.errors import SlinkyError
from slinky3d.output import sweep
from slinky3d.resources import shipped_names, sweep_path

ROOT = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"
DURATION = 0.05  # s: the machinery, not the walk, is under test

# A small plastic Slinky (3 coils) hanging above the top step, let go at t = 0. Where
# the top step is deeper than 0.14 m, the landing reaches under it: it would start
# inside the step, and that grid point is invalid.
SCENE = """
title = "test stairs"
duration = 1.0
[slinky]
preset = "plastic"
n_coils = 3
C_D = 2e-3
[slinky.anchor]
position = [-0.14, 0.0]
condition = "released"
release_time = 0.0
[slinky.shape]
kind = "hanging"
[world.stairs]
top = [0.0, -0.02]
height = 0.05
depth = 0.1
count = 5
"""

SPEC = f"""
title = "test sweep"
scene = "scene.toml"
duration = {DURATION}
[grid]
"world.stairs.height" = [0.05, 0.08]
"world.stairs.depth" = [0.1, 0.15]
"slinky.preset" = ["plastic", "steel"]
[map]
x = "world.stairs.depth"
y = "world.stairs.height"
"""


def write(tmp_path: Path, spec: str = SPEC, name: str = "spec.toml") -> Path:
    (tmp_path / "scene.toml").write_text(SCENE)
    p = tmp_path / name
    p.write_text(spec)
    return p


def fixed(outcomes) -> list[tuple]:
    """The deterministic columns of the outcomes (all but the wall-clock ones)."""
    return [tuple(getattr(o, c) for c in ("index", *sweep.RESULT_COLUMNS)
                  if c not in sweep.TIMING) for o in outcomes]


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def fails(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (out, err)
    assert err.startswith("slinky3d: error: ") and err.count("\n") == 1, err
    return err


def test_the_local_pool_and_a_dask_cluster_give_the_same_table(tmp_path):
    distributed = pytest.importorskip("dask.distributed")  # the `test` extra installs it
    spec = sweep.read_spec(write(tmp_path))
    pool = sweep.run(spec, jobs=2, progress=False)
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster:
        dask = sweep.run(spec, cluster=cluster.scheduler_address, progress=False)
    assert fixed(pool) == fixed(dask)
    assert [o.index for o in pool] == list(range(8))
    statuses = [o.status.split(":")[0] for o in pool]
    # Grid order: height, then depth, then preset (the last varies fastest).
    assert statuses == ["ok", "ok", "invalid", "invalid"] * 2
    for o in pool:
        if o.status == "ok":
            assert o.final_time == pytest.approx(DURATION, abs=1e-12)
            assert o.rollbacks == 0 and len(o.state_hash) == 16
            assert o.real_time_factor > 0 and o.runtime_s > 0
        else:
            assert "starts" in o.status and "inside the floor or a step" in o.status
            assert o.state_hash == "" and o.steps_walked is None
    # The two presets are different Slinkies: different final states.
    assert pool[0].state_hash != pool[1].state_hash
    # And one point run alone, in this process, is the same again.
    assert fixed([sweep.run_point(spec.points()[1])]) == fixed(pool[1:2])


def test_the_command_writes_the_table_and_the_map(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write(tmp_path)
    rc, out, err = run(capsys, "sweep", str(spec), "--jobs", "1", "--quiet",
                       "--out", "maps/small")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("spec: 8 points (4 ok, 4 invalid) in ")
    assert lines[1:] == ["table: maps/small.csv", "map: maps/small.png"]
    with open(tmp_path / "maps/small.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 8
    assert list(table[0]) == ["world.stairs.height", "world.stairs.depth", "slinky.preset",
                              *sweep.RESULT_COLUMNS]
    assert [(r["world.stairs.height"], r["world.stairs.depth"], r["slinky.preset"])
            for r in table[:3]] == [("0.05", "0.1", "plastic"), ("0.05", "0.1", "steel"),
                                    ("0.05", "0.15", "plastic")]
    assert table[0]["status"] == "ok" and float(table[0]["final_time"]) == pytest.approx(DURATION)
    assert table[2]["status"].startswith("invalid: ") and table[2]["state_hash"] == ""
    assert (tmp_path / "maps/small.png").read_bytes().startswith(PNG)


def test_the_spec_default_prefix_and_duration(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write(tmp_path, SPEC.replace(f"duration = {DURATION}\n", "")
                 .replace('"slinky.preset" = ["plastic", "steel"]\n', "")
                 .replace('"world.stairs.depth" = [0.1, 0.15]', '"world.stairs.depth" = [0.1]'))
    rc, out, err = run(capsys, "sweep", str(spec), "--jobs", "1", "--quiet",
                       "--duration", "0.02")
    assert rc == 0, err
    with open(tmp_path / "spec.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert [float(r["final_time"]) for r in table] == pytest.approx([0.02, 0.02], abs=1e-12)
    assert (tmp_path / "spec.png").read_bytes().startswith(PNG)


@pytest.mark.parametrize("edit,message", [
    (lambda s: s.replace("[grid]", "[gird]"), "gird: unknown key; did you mean 'grid'?"),
    (lambda s: s.replace('scene = "scene.toml"', ""), "scene: missing"),
    (lambda s: s.replace("scene.toml", "nowhere.toml"), "no scene file 'nowhere.toml'"),
    (lambda s: s.replace(f"duration = {DURATION}", "duration = -1"), "duration: must be > 0"),
    (lambda s: s.replace(f"duration = {DURATION}", 'set = "slinky.C_D=0"'),
     "set: must be an array of KEY=VALUE strings"),
    (lambda s: s.replace(f"duration = {DURATION}", 'set = ["C_D"]'), "set: 'C_D' is not"),
    (lambda s: s.replace("[0.05, 0.08]", "[]"), 'grid."world.stairs.height": must be a '
                                                "non-empty array of values, not an empty"),
    (lambda s: s.replace("[0.05, 0.08]", "0.05"), 'grid."world.stairs.height": must be a '
                                                  "non-empty array"),
    (lambda s: s.replace("[0.05, 0.08]", "[[0.05], 0.08]"),
     'grid."world.stairs.height"[0]: must be a number, a string or a boolean, not an array'),
    (lambda s: s.replace("[0.05, 0.08]", "[0.05, 0.05]"),
     'grid."world.stairs.height"[1]: repeats the value 0.05'),
    (lambda s: s.replace("[0.05, 0.08]", "[1, 1.0]"),
     'grid."world.stairs.height"[1]: repeats the value 1.0'),
    (lambda s: s.replace('"world.stairs.height"', '"world..height"'),
     "must be a dotted scene key"),
    (lambda s: s.replace('x = "world.stairs.depth"', 'x = "world.stairs.top"'),
     "map.x: 'world.stairs.top' is not an axis of [grid]"),
    (lambda s: s.replace('y = "world.stairs.height"', 'y = "world.stairs.depth"'),
     "map.y: 'world.stairs.depth' is already shown"),
    (lambda s: s.replace("[map]", '"slinky.C_D" = [0.001, 0.002]\n[map]'),
     "grid: has 4 axes; the map shows at most 3"),
    (lambda s: s.split("[grid]")[0],
     "grid: missing: a [grid] table"),
    (lambda s: s + "[walk]\ntol = 0\n", "walk.tol: must be in (0, 1]"),
    (lambda s: s.replace("[grid]", "[grid\n"), "invalid TOML"),
])
def test_a_bad_spec_is_one_line(capsys, tmp_path, edit, message):
    spec = write(tmp_path, edit(SPEC))
    err = fails(capsys, "sweep", str(spec), "--jobs", "1", "--quiet")
    assert message in err and str(spec) in err


def test_a_bad_base_scene_is_a_bad_spec(capsys, tmp_path):
    spec = write(tmp_path, SPEC.replace(f"duration = {DURATION}", 'set = ["slinky.C_D=-1"]'))
    assert "slinky.C_D: must be in [0, 1000]" in fails(capsys, "sweep", str(spec), "--quiet")


def test_missing_spec_and_option_clash(capsys, tmp_path):
    assert "no such sweep spec (shipped sweeps: walking)" in fails(
        capsys, "sweep", str(tmp_path / "nope.toml"))
    assert "--jobs sets the local pool" in fails(
        capsys, "sweep", str(write(tmp_path)), "--jobs", "2", "--cluster", "tcp://x:1")


def test_every_point_invalid_is_an_error_after_the_table(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write(tmp_path, SPEC.replace("[0.1, 0.15]", "[0.15, 0.2]"))
    err = fails(capsys, "sweep", str(spec), "--jobs", "1", "--quiet")
    assert "every grid point is invalid, the first: --set: slinky: starts" in err
    assert (tmp_path / "spec.csv").is_file()


def test_cluster_without_dask_names_the_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails
    err = fails(capsys, "sweep", str(write(tmp_path)), "--cluster", "tcp://127.0.0.1:1",
                "--quiet")
    assert "--cluster needs Dask distributed: pip install 'slinky3d[cluster]'" in err


def test_an_unreachable_cluster_is_one_line(tmp_path, monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(sweep, "CONNECT_TIMEOUT", 0.5)
    spec = sweep.read_spec(write(tmp_path))
    with pytest.raises(SlinkyError, match="cannot reach the Dask scheduler at tcp://"):
        sweep.run(spec, cluster="tcp://127.0.0.1:9", progress=False)
    with pytest.raises(SlinkyError, match="at no-port: .*missing port number"):
        sweep.run(spec, cluster="no-port", progress=False)


@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**6, 10**6),
                 st.booleans(), st.text(max_size=20)))
def test_grid_values_reach_the_scene_exactly(v):
    """A grid value goes to the scene as TOML text (--set); it must come back unchanged."""
    back = tomllib.loads(f"v = {sweep.toml_value(v)}")["v"]
    assert back == v and type(back) is type(v)


def test_the_shipped_walking_spec(tmp_path):
    """sweeps/walking.toml ships, and its grid and map are valid (over a stand-in scene
    until the stairs scene ships; then over the stairs scene itself)."""
    path = sweep_path("walking")
    assert path == ROOT / "sweeps" / "walking.toml" and "walking" in shipped_names("sweeps")
    doc = path.read_text()
    assert 'scene = "stairs"' in doc
    (tmp_path / "scene.toml").write_text(SCENE)
    stand_in = tmp_path / "walking.toml"
    stand_in.write_text(doc.replace('scene = "stairs"', 'scene = "scene.toml"'))
    spec = sweep.read_spec(stand_in)
    assert spec.keys == ("world.stairs.height", "world.stairs.depth", "slinky.preset")
    assert (spec.x, spec.y, spec.panels) == spec.keys[1::-1] + ("slinky.preset",)
    assert len(spec.points()) == 48 and spec.out == "walking"
    if "stairs" in shipped_names("scenes"):
        assert sweep.read_spec("walking").scene_stem == "stairs"


def test_import_is_light():
    """The command line and the sweep module load without Dask, numba or matplotlib."""
    code = ("import sys; from slinky3d import cli; cli.build_parser(); "
            "import slinky3d.output.sweep, slinky3d.output.walk; "
            "print(sorted(m for m in ('dask', 'distributed', 'numba', 'matplotlib') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
