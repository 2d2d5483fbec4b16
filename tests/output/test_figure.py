"""The paper-style figure: time parsing, drawing from a scene or a recording."""


import fakesim
import numpy as np
import pytest
from PIL import Image

from slinky3d import cli
from slinky3d.errors import SlinkyError
from slinky3d.output import figure

PNG = b"\x89PNG\r\n\x1a\n"




@pytest.mark.parametrize("text,times", [
    ("0:1.4:0.2", [0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4]),
    ("0:1.6:0.4", [0, 0.4, 0.8, 1.2, 1.6]),
    ("0.1:0.35:0.1", [0.1, 0.2, 0.3]),
    ("0,0.5, 1", [0, 0.5, 1.0]),
    ("1,0", [0, 1.0]),
    ("0.25", [0.25]),
    ("1e-1:2e-1:5e-2", [0.1, 0.15, 0.2]),
])
def test_parse_times(text, times):
    assert figure.parse_times(text) == pytest.approx(times, abs=1e-12)


@pytest.mark.parametrize("text", ["", "a", "0:1", "0:1:0", "1:0:0.1", "0,,1", "-1,0",
                                  "0:100:0.1", "0:1:x"])
def test_parse_times_rejects(text):
    with pytest.raises(SlinkyError):
        figure.parse_times(text)


def test_grid_fps_puts_times_on_the_grid():
    assert figure.grid_fps([0, 0.2, 1.4]) == 100
    assert figure.grid_fps([0.125]) == 200
    assert figure.grid_fps([0.0123]) == 10000


def png_size(path):
    assert path.read_bytes()[:8] == PNG
    with Image.open(path) as im:
        return im.size


def test_figure_from_a_scene(capsys, fake, tmp_path):
    rc = cli.main(["figure", "1Pa", "--times", "0:0.3:0.1", "--out", "f.png",
                   "--solver", "realtime"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == ""
    assert fake[0]["duration"] == pytest.approx(0.3) and fake[0]["solver"] == "realtime"
    assert "4 instants, 0..0.3 s -> f.png" in out
    w, h = png_size(tmp_path / "f.png")
    assert w > h > 200  # a row of four panels


def test_figure_from_a_recording_and_overlay(capsys, fake, tmp_path):
    assert cli.main(["simulate", "3Pa", "--duration", "0.2"]) == 0
    assert cli.main(["figure", "3Pa.npz", "--times", "0,0.1,0.2", "--layout", "overlay"]) == 0
    assert len(fake) == 1  # the recording was drawn, not re-simulated
    assert png_size(tmp_path / "3Pa.png")[0] > 300
    capsys.readouterr()
    assert cli.main(["figure", "3Pa.npz", "--times", "0:1:0.5"]) == 2
    assert "the run ends at 0.2 s" in capsys.readouterr().err
    assert cli.main(["figure", "3Pa.npz", "--times", "0", "--set", "dt=1e-3"]) == 2


def test_draw_marks_contacts_and_both_slinkies(fake, tmp_path):
    from slinky3d.output import trajectory
    from slinky3d.scene import loader

    text = '[[slinky]]\nname = "plastic"\n[[slinky]]\nname = "steel"\npreset = "steel"\n' \
           'anchor = { position = [0.2, 0.0] }\n'
    sc = loader.loads(text)
    data, _ = fakesim.record(sc, 0.2, 100)
    traj = trajectory.from_data(data)
    assert traj.tracks[1].n_contacts[0] > 0  # the hanging steel Slinky has collapsed coils
    out = figure.draw(figure.combine([traj], [0.0, 0.2]), tmp_path / "two.pdf",
                      names=["plastic", "steel"], title="two")
    assert out.read_bytes()[:4] == b"%PDF"


def test_the_figure_shows_the_shape(fake, tmp_path):
    """Pixels: the bars' ink spans a tall, narrow box, as a hanging Slinky does."""
    from slinky3d.output import trajectory
    from slinky3d.scene import loader

    sc = loader.load("hanging-plastic")
    traj = trajectory.from_data(fakesim.record(sc, 0.0, 100)[0])
    out = figure.draw(traj, tmp_path / "h.png", dpi=80)
    rgb = np.asarray(Image.open(out).convert("RGB"), dtype=float)
    ink = np.linalg.norm(rgb - [0x1F, 0x3B, 0x73], axis=2) < 60  # the bars' colour
    rows, cols = np.nonzero(ink)
    assert ink.sum() > 200
    height, width = np.ptp(rows), np.ptp(cols)
    E = traj.tracks[0].ends[0]
    want = np.ptp(E[:, 1]) / np.ptp(E[:, 0])  # equal aspect: the box has the data's ratio
    assert height / width == pytest.approx(want, rel=0.15)


def test_several_runs_in_the_same_panels(capsys, fake, tmp_path):
    assert cli.main(["simulate", "3Pa", "--duration", "0.2"]) == 0
    rc = cli.main(["figure", "3Pa.npz", "1Pb", "--times", "0,0.2"])
    out = capsys.readouterr().out
    assert rc == 0 and "3Pa, 1Pb: 2 instants" in out and "-> 3Pa-vs-1Pb.png" in out
    assert len(fake) == 2  # 3Pa recorded once, 1Pb run for the figure
    capsys.readouterr()
    assert cli.main(["figure", "1Pb", "nonexistent", "--times", "0"]) == 2
    assert "nonexistent: no such scene file" in capsys.readouterr().err
    assert len(fake) == 2  # nothing simulated before the bad source was found
    rgb = np.asarray(Image.open(tmp_path / "3Pa-vs-1Pb.png").convert("RGB"), dtype=float)
    # Two Slinkies in matplotlib's first two colours.
    for colour in ([0x1F, 0x77, 0xB4], [0xFF, 0x7F, 0x0E]):
        assert (np.linalg.norm(rgb - colour, axis=2) < 40).sum() > 100


RED, PURPLE = [0xD6, 0x27, 0x28], [0x94, 0x67, 0xBD]


@pytest.mark.parametrize("enabled,colour", [(True, RED), (False, PURPLE)])
def test_contacts_marked_by_law(fake, tmp_path, enabled, colour):
    """Touching coils are red dots; with contacts off, coils passing through are purple."""
    from slinky3d.output import trajectory
    from slinky3d.scene import loader

    sc = loader.load("hanging-plastic", [f"slinky.contact.enabled={str(enabled).lower()}"])
    traj = trajectory.from_data(fakesim.record(sc, 0.0, 100)[0])
    if not enabled:  # coils that went through each other
        traj.tracks[0].theta[0, -5:] = traj.tracks[0].params["theta_min"] - 0.01
    out = figure.draw(traj, tmp_path / "c.png", dpi=100)
    rgb = np.asarray(Image.open(out).convert("RGB"), dtype=float)
    other = PURPLE if enabled else RED
    hits = (np.linalg.norm(rgb - colour, axis=2) < 40).sum()
    assert hits > 5
    assert (np.linalg.norm(rgb - other, axis=2) < 40).sum() < 3
