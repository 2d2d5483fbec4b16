"""The command line: subcommands, the npz it writes, one-line errors with exit status 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from slinky3d import cli
from slinky3d.model import chain
from slinky3d.output import trajectory
from slinky3d.scene import loader

ROOT = Path(__file__).resolve().parent.parent




def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def fails(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (out, err)
    assert err.startswith("slinky3d: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_help_lists_the_subcommands(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    for name in ("simulate", "figure", "scenes"):
        assert name in out
    rc, out, _ = run(capsys, "simulate", "--help")
    assert rc == 0 and "--duration" in out and "--set" in out and "realtime" in out


def test_scenes_lists_the_shipped_ones(capsys):
    rc, out, _ = run(capsys, "scenes")
    assert rc == 0
    lines = out.splitlines()
    assert len(lines) == len(loader.shipped())
    assert any(line.startswith("1Pa ") and "U shape, impacts on" in line for line in lines)


def test_simulate_writes_the_npz_and_a_summary(capsys, fake):
    rc, out, err = run(capsys, "simulate", "1Pa", "--duration", "0.05", "--fps", "200")
    assert rc == 0 and err == ""
    assert fake[0]["duration"] == 0.05 and fake[0]["fps"] == 200.0
    assert fake[0]["solver"] == cli.DEFAULT_SOLVER
    assert out.count("\n") == 1
    assert out.startswith("1Pa: 0.050 s simulated in 0.50 s wall (")
    assert "100 steps, 3 impacts, energy change -1.500e-03 J" in out
    assert out.rstrip().endswith("-> 1Pa.npz")
    with np.load("1Pa.npz", allow_pickle=False) as z:
        assert {"t", "ends", "theta", "theta_dot", "energy", "n_contacts", "params",
                "meta"} <= set(z.files)
        assert z["t"].shape == (11,) and z["ends"].shape == (11, 76, 3)
        meta = json.loads(str(z["meta"]))
        assert json.loads(str(z["params"]))["N"] == 75
    assert meta["title"].startswith("1Pa") and meta["solver"] == cli.DEFAULT_SOLVER
    assert meta["stats"]["impacts"] == 3 and meta["fps"] == 200.0


def test_simulate_options(capsys, fake, tmp_path):
    out_file = tmp_path / "sub" / "run.npz"
    out_file.parent.mkdir()
    rc, out, _ = run(capsys, "simulate", "hanging-steel", "--duration", "0", "--out",
                     str(out_file), "--solver", "realtime", "--set", "slinky.C_D=0")
    assert rc == 0 and fake[0]["solver"] == "realtime" and fake[0]["duration"] == 0.0
    assert fake[0]["scene"].slinkies[0].params.C_D == 0.0
    traj = trajectory.load(out_file)
    assert traj.t.shape == (1,) and traj.tracks[0].N == 157
    assert traj.meta["overrides"] == ["slinky.C_D=0"]
    # The scene's own duration is the default.
    run(capsys, "simulate", "4S")
    assert fake[1]["duration"] == 1.6 and Path("4S.npz").is_file()


def test_several_slinkies_round_trip(capsys, fake, tmp_path):
    f = tmp_path / "two.toml"
    f.write_text('[[slinky]]\nname = "a"\n[[slinky]]\nname = "b"\npreset = "steel"\n')
    assert run(capsys, "simulate", str(f), "--duration", "0.02")[0] == 0
    traj = trajectory.load("two.npz")
    assert [tr.N for tr in traj.tracks] == [75, 157] and traj.meta["names"] == ["a", "b"]


@pytest.mark.parametrize("argv,fragment", [
    (["simulate", "1Pa", "--fps", "0"], "argument --fps"),
    (["simulate", "1Pa", "--fps", "abc"], "argument --fps"),
    (["simulate", "1Pa", "--duration", "-1"], "argument --duration"),
    (["simulate", "1Pa", "--duration", "nan"], "argument --duration"),
    (["simulate", "1Pa", "--solver", "fast"], "argument --solver"),
    (["simulate", "no-such-scene"], "no-such-scene: no such scene file"),
    (["simulate", "1Pa", "--set", "slinky.C_D=-1"], "--set: slinky.C_D: must be in [0, 1000]"),
    (["simulate", "1Pa", "--set", "slinky.CD=1"], "did you mean 'C_D'"),
    (["simulate", "1Pa", "--set", "oops"], "expected KEY=VALUE"),
    (["simulate", "1Pa", "--out", "/no/such/dir/x.npz"], "--out: folder /no/such/dir does not"),
    (["figure", "1Pa", "--times", "garbage"], "--times 'garbage'"),
    (["figure", "1Pa", "--times", "1:0:0.1"], "start <= stop"),
    (["figure", "1Pa"], "--times"),
    (["figure", "missing.npz", "--times", "0"], "missing.npz: no such recording"),
    (["frobnicate"], "invalid choice"),
    (["run", "1Pa", "--log-state", "/no/such/dir/x.npz"], "--log-state: folder /no/such/dir"),
])
def test_errors_are_one_line_with_status_2(capsys, fake, argv, fragment):
    assert fragment in fails(capsys, *argv)


@pytest.mark.parametrize("argv", [[], ["run"], ["run", "1Pa"], ["replay", "x.npz"]])
def test_without_a_display_the_app_names_the_headless_jobs(capsys, monkeypatch, argv):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    err = fails(capsys, *argv)
    assert "cannot open a window (no display)" in err
    assert all(f"slinky3d {job}" in err for job in ("screenshot", "record", "simulate", "figure"))


def test_no_command_is_the_app_on_the_default_scene():
    args = cli.build_parser().parse_args(["run"])
    assert args.scene == cli.DEFAULT_SCENE == "hanging-plastic"
    assert args.log_state is None


def test_keyboard_interrupt_exits_130_quietly(capsys, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_record", interrupted)
    rc, out, err = run(capsys, "simulate", "1Pa", "--out", os.devnull)
    assert rc == 130 and out == "" and err == ""


def test_python_dash_m_exit_codes(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def sh(*argv):
        return subprocess.run([sys.executable, "-m", "slinky3d", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)

    r = sh("--help")
    assert r.returncode == 0 and "simulate" in r.stdout
    r = sh("simulate", "1Pa", "--set", "slinky.mass=0")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("slinky3d: error: --set: slinky.mass: must be in [1e-06, 1000] "
                        "(between 1e-06 and 1000), got 0\n")


def test_simulate_with_the_solvers(capsys, monkeypatch, tmp_path):
    """Real runs, short: the npz holds the documented arrays on the fps grid."""
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "simulate", "1Pb", "--duration", "0.05", "--solver", "realtime")
    assert rc == 0 and err == "" and "(planar" in out  # realtime: the scene's, planar
    (s,) = loader.load("1Pb").slinkies
    with np.load("1Pb.npz", allow_pickle=False) as z:
        assert np.allclose(z["t"], np.arange(6) / 100)
        ends, theta = z["ends"], z["theta"]
        assert ends.shape == (6, 76, 3) and theta.shape == z["theta_dot"].shape == (6, 75)
        assert z["energy"].shape == z["n_contacts"].shape == (6,)
        params = json.loads(str(z["params"]))
        energy = z["energy"]
    assert np.allclose(ends[0, :, :2], chain.end_points(s.q0, s.params.R))
    assert np.all(ends[..., 2] == 0.0)  # a planar run: z = 0
    assert np.allclose(ends[:, 0], 0.0)  # the anchored end is held at the origin
    assert np.linalg.norm(ends[-1, -1] - ends[0, -1]) > 1e-3  # the far end was let go
    assert np.all(np.isfinite(energy))
    for key in ("N", "m", "R", "I", "k_coil", "C_D", "g", "theta_min", "phi_A"):
        assert key in params
    assert params["N"] == 75 and params["C_D"] == 2e-3
    # --duration 0 with the reference integrator: the initial state alone.
    assert run(capsys, "simulate", "3Pa", "--duration", "0", "--solver", "reference")[0] == 0
    traj = trajectory.load("3Pa.npz")
    (s,) = loader.load("3Pa").slinkies
    assert traj.t.tolist() == [0.0]
    assert np.allclose(traj.tracks[0].ends[0][:, :2], chain.end_points(s.q0, s.params.R))
    assert np.allclose(traj.tracks[0].theta_dot, 0.0)


def test_start_up_imports_no_gl_and_no_solver():
    """The parser (renderer commands included) loads without OpenGL, numba or scipy."""
    code = ("import sys; from slinky3d import cli; cli.build_parser(); "
            "print(sorted(m for m in ('moderngl', 'pyglet', 'numba', 'scipy', 'matplotlib') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
    assert {"screenshot", "run"} <= set(cli.build_parser()._subparsers._group_actions[0].choices)


def test_a_broken_recording_is_one_line(capsys, fake, tmp_path):
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    assert "bad.npz: not a readable .npz recording" in fails(capsys, "figure", "bad.npz",
                                                             "--times", "0")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    assert "not a slinky3d recording" in fails(capsys, "figure", "other.npz", "--times", "0")


# -- outputs, checked before any work, in one wording --------------------------------
# (argv with OUT where the output goes, the option named, the extension it takes, the
# kind of file in the message)
OUTPUTS = [
    (["simulate", "1Pa", "--out", "OUT"], "--out", ".npz", "trajectory"),
    (["figure", "1Pa", "--times", "0", "--out", "OUT"], "--out", ".png", "figure"),
    (["screenshot", "1Pa", "--out", "OUT"], "--out", ".png", "image"),
    (["record", "1Pa", "--out", "OUT"], "--out", ".mp4", "film"),
    (["run", "1Pa", "--log-state", "OUT"], "--log-state", ".npz", "session"),
]


@pytest.fixture
def no_work(monkeypatch, fake):
    """Every command's work (a run, a render, a film, a window, a sweep) fails the test:
    a bad output must be found before any of it."""
    from slinky3d.output import sweep
    from slinky3d.viewer import jobs
    from slinky3d.viewer.app import play
    from slinky3d.viewer.film import filming

    def refuse(*args, **kwargs):
        raise AssertionError("work was done before the output was checked")

    for module, name in ((jobs, "Simulation"), (jobs, "warm_up"), (filming, "film"),
                         (filming, "film_session"), (play, "SimThread"), (sweep, "run")):
        monkeypatch.setattr(module, name, refuse)
    yield
    assert fake == []  # no trajectory computed


def _with_out(argv, out):
    return [out if a == "OUT" else a for a in argv]


@pytest.mark.parametrize("argv,option,ext,kind", OUTPUTS)
def test_every_output_is_checked_before_any_work_in_one_wording(capsys, no_work, argv,
                                                                 option, ext, kind):
    Path("afile").write_text("x")
    Path(f"d{ext}").mkdir()
    cases = [
        (f"no/such/x{ext}", f"{option}: folder no/such does not exist"),
        (f"d{ext}", f"{option}: cannot write d{ext}: it is a folder"),
        (f"afile/x{ext}", f"{option}: afile is a file, not a folder"),
        (f"afile/sub/x{ext}", f"{option}: afile is a file, not a folder"),
        ("x.txt", f"{option}: unknown {kind} extension '.txt' of x.txt (known: "),
    ]
    for out, says in cases:
        err = fails(capsys, *_with_out(argv, out))
        assert err.startswith(f"slinky3d: error: {says}"), (out, err)
    assert sorted(p.name for p in Path().iterdir()) == ["afile", f"d{ext}"]  # none left


@pytest.mark.parametrize("argv,option,ext,kind", OUTPUTS)
def test_an_unwritable_output_names_the_reason_not_errno(capsys, no_work, monkeypatch,
                                                          argv, option, ext, kind):
    import errno

    from slinky3d.output import paths

    real_open = os.open

    def denied(path, flags, *args, **kwargs):
        if Path(path).name == f"x{ext}" and flags & os.O_WRONLY:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(paths.os, "open", denied)
    err = fails(capsys, *_with_out(argv, f"x{ext}"))
    assert err == (f"slinky3d: error: {option}: cannot write x{ext}: "
                   f"{os.strerror(errno.EACCES)}\n")


def test_a_sweeps_outputs_are_checked_before_its_points_run(capsys, no_work):
    Path("afile").write_text("x")
    Path("d.csv").mkdir()
    assert fails(capsys, "sweep", "walking", "--out", "afile/map").startswith(
        "slinky3d: error: --out: afile is a file, not a folder")
    assert fails(capsys, "sweep", "walking", "--out", "d").startswith(
        "slinky3d: error: --out: cannot write d.csv: it is a folder")


def test_a_trajectory_written_to_a_device_keeps_its_name(capsys, fake):
    """A device or pipe is written whatever its name: the extension is not asked."""
    rc, out, err = run(capsys, "simulate", "1Pa", "--duration", "0.01", "--out", os.devnull)
    assert rc == 0 and err == "" and fake


# -- names: did you mean --------------------------------------------------------------
@pytest.mark.parametrize("argv,says", [
    (["simulate", "hanging-plastik"], "no such scene file; did you mean 'hanging-plastic'?"),
    (["figure", "1pa", "--times", "0"], "no such scene file; did you mean '1Pa'?"),
    (["screenshot", "stairz"], "no such scene file; did you mean 'stairs'?"),
    (["sweep", "walkin"], "no such sweep spec; did you mean 'walking'?"),
    (["simulate", "qqqqqqq"], "no such scene file (shipped scenes: 1Pa, "),
])
def test_misspelt_scene_and_sweep_names_get_a_suggestion(capsys, fake, argv, says):
    assert says in fails(capsys, *argv)


# -- the first run's compile ---------------------------------------------------------
def test_warm_kernels_say_nothing():
    from slinky3d.dynamics.solver import kernels_ready, warm_up

    said: list[str] = []
    warm_up()
    assert kernels_ready()
    warm_up(said.append)
    assert said == []


def test_an_empty_kernel_cache_is_seen_before_any_compile(tmp_path):
    """numba's cache folder empty: `kernels_ready` says so from the index files alone
    (a new process, nothing compiled), so the first run can say it compiles before it
    does. Compiling them all from cold here cost 1-3 minutes of the suite: the command's
    message is checked below with the check's answer given."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    code = "from slinky3d.dynamics.solver import kernels_ready; print(kernels_ready())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    assert not any((tmp_path / "cache").rglob("*.nbc"))  # it compiled nothing


@pytest.mark.parametrize("ready", [False, True])
def test_the_first_run_says_it_compiles_and_the_next_does_not(capsys, tmp_path,
                                                              monkeypatch, ready):
    from slinky3d.dynamics import solver

    monkeypatch.setattr(solver, "kernels_ready", lambda: ready)
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, "simulate", "1Pa", "--solver", "realtime",
                     "--duration", "0.01", "--out", "a.npz")
    assert rc == 0, err
    assert err.count(solver.COMPILING) == (0 if ready else 1)
    assert (tmp_path / "a.npz").is_file()
