"""The kiosk's playlist (one-line errors naming the file and key), the command's own
errors (exit status 2), its rotating log and the systemd unit it prints."""

import configparser
import logging
import logging.handlers

import pytest

from slinky3d import cli
from slinky3d.errors import SceneError
from slinky3d.viewer.kiosk import exhibit
from slinky3d.viewer.kiosk.playlist import (
    DEFAULT_IDLE,
    default_playlist,
    from_dict,
    load_playlist,
    open_entry,
)
from slinky3d.viewer.kiosk.state import check_playlist


def test_the_shipped_playlist_loads_every_scene():
    pl = load_playlist()
    assert pl.path == str(default_playlist())
    assert pl.idle == DEFAULT_IDLE and str(pl.exit) == "Ctrl+Alt+Shift+Q"
    assert check_playlist(pl) == len(pl.entries) >= 4
    assert any(e.let_go is not None for e in pl.entries)  # the loop shows a drop


@pytest.mark.parametrize("doc, where", [
    ({"scenes": ["a"], "idel": 3}, "test.toml: idel: unknown key; did you mean 'idle'?"),
    ({}, "test.toml: scenes: missing"),
    ({"scenes": []}, "test.toml: scenes: the array is empty"),
    ({"scenes": "a"}, "test.toml: scenes: must be an array"),
    ({"scenes": [{"seconds": 3}]}, "test.toml: scenes[0].name: missing"),
    ({"scenes": [" "]}, "test.toml: scenes[0]: an empty scene name"),
    ({"scenes": [{"name": "a", "set": "x=1"}]}, "test.toml: scenes[0].set: must be an array"),
    ({"scenes": [{"name": "a", "seconds": 0}]}, "test.toml: scenes[0].seconds: must be in"),
    ({"scenes": ["a"], "idle": float("nan")}, "test.toml: idle: must be a finite number"),
    ({"scenes": ["a"], "exit": "q"}, "test.toml: exit: expected modifiers and a key"),
    ({"scenes": ["a"], "exit": "ctrl+q"}, "test.toml: exit: needs at least 2 different"),
    ({"scenes": ["a"], "exit": "ctrl+ctrl+q"}, "test.toml: exit: needs at least 2"),
    ({"scenes": ["a"], "exit": "ctrl+hyper+q"}, "test.toml: exit: unknown modifier 'hyper'"),
    ({"scenes": ["a"], "exit": "ctrl+alt+pagedown"}, "test.toml: exit: unknown key"),
    ({"scenes": ["a"], "replay": "yes"}, "test.toml: replay: must be true or false"),
])
def test_bad_playlists_are_one_line_errors(doc, where):
    with pytest.raises(SceneError) as e:
        from_dict(doc, "test.toml")
    assert str(e.value).startswith(where)
    assert "\n" not in str(e.value)


def test_chords_and_entries():
    pl = from_dict({"scenes": ["a", {"name": "b", "title": "T", "caption": "C", "let_go": 1,
                                     "set": ["slinky.C_D=0"]}], "exit": "Alt+Ctrl+7"}, "p")
    assert pl.exit.key == "_7" and pl.exit.modifiers == {"ctrl", "alt"}
    assert str(pl.exit) == "Ctrl+Alt+7"
    assert pl.entries[1].overrides == ("slinky.C_D=0",) and pl.entries[1].let_go == 1.0
    assert pl.seconds_of(pl.entries[0]) == pl.seconds


def test_a_scene_file_beside_the_playlist_and_overrides(tmp_path):
    (tmp_path / "mine.toml").write_text('title = "Mine"\n[slinky]\npreset = "steel"\n')
    (tmp_path / "p.toml").write_text('scenes = [{ name = "mine.toml", set = ["slinky.mass=0.3"] }]'
                                     '\n')
    pl = load_playlist(tmp_path / "p.toml")
    sc = open_entry(pl, pl.entries[0])
    assert sc.title == "Mine" and sc.slinkies[0].params.mass == pytest.approx(0.3)


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_command_fails_in_one_line(capsys, tmp_path):
    rc, out, err = run(capsys, "kiosk", "--window", "12")
    assert rc == 2 and err.startswith("slinky3d: error: --window: expected WIDTHxHEIGHT")
    rc, out, err = run(capsys, "kiosk", str(tmp_path / "none.toml"))
    assert rc == 2 and err.count("\n") == 1 and "no such playlist file" in err
    (tmp_path / "bad.toml").write_text("scenes = [\n")
    rc, out, err = run(capsys, "kiosk", str(tmp_path / "bad.toml"))
    assert rc == 2 and err.count("\n") == 1 and "bad.toml: invalid TOML" in err
    (tmp_path / "gone.toml").write_text('scenes = ["no-such-scene", "nor-this"]\n')
    rc, out, err = run(capsys, "kiosk", str(tmp_path / "gone.toml"), "--log-dir",
                       str(tmp_path / "logs"))
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("slinky3d: error: ") and "no scene of the playlist loads" in err
    assert "nor-this" in (tmp_path / "logs" / exhibit.LOG_FILE).read_text()  # why, logged


def test_the_log_rotates(tmp_path, monkeypatch):
    monkeypatch.setattr(exhibit, "LOG_BYTES", 2000)
    path = exhibit.setup_logging(tmp_path)
    log = logging.getLogger("slinky3d.kiosk")
    try:
        for i in range(100):
            log.info("line %d %s", i, "x" * 100)
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names == ["kiosk.log", *(f"kiosk.log.{k}" for k in range(1, exhibit.LOG_BACKUPS
                                                                          + 1))]
        assert path.stat().st_size <= 2000 and "line 99" in path.read_text()
    finally:
        exhibit.setup_logging(tmp_path / "after")  # the handlers on this test's files closed


def test_the_systemd_unit(capsys, tmp_path):
    rc, out, err = run(capsys, "kiosk", str(tmp_path / "p.toml"), "--print-unit")
    assert rc == 0
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.read_string(out)
    service = unit["Service"]
    assert service["Type"] == "notify" and int(service["WatchdogSec"]) > 0
    assert service["ExecStart"].endswith(f" kiosk {tmp_path / 'p.toml'}")
    assert service["Restart"] == "on-failure"
    assert unit["Install"]["WantedBy"] == "default.target"
