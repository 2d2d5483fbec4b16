"""The key table: every key once, every action implemented, and docs/app.md lists it."""

from pathlib import Path

from slinky3d.viewer.app import keys

ROOT = Path(__file__).resolve().parents[2]


def test_every_key_once():
    # (that pyglet knows every key name, and that every action has a handler in the
    # window's table: tests/viewer/test_app.py, with a window)
    names = [k for b in keys.BINDINGS for k in b.keys]
    assert len(names) == len(set(names))


def test_time_scales_are_log_spaced_from_1_to_1_32():
    s = keys.TIME_SCALES
    assert s[0] == 1.0 and s[-1] == 1 / 32
    assert all(b / a == 0.5 for a, b in zip(s, s[1:], strict=False))


def test_docs_list_the_table():
    text = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")
    assert keys.markdown_table() in text


def test_readme_names_every_key():
    # The README's list is a summary, but no key is left out of it (issue 10: "all
    # listed in the README"); the four drive bindings are its "Arrows / WASD".
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "**Arrows / WASD**" in text
    for b in keys.BINDINGS:
        if b.action in keys.DIRECTIONS:
            continue
        for key in b.label.replace(" / ", " ").split():
            assert f"**{key}**" in text, (key, b.action)


def test_one_key_per_overlay_named_in_its_help():
    from slinky3d.viewer.overlay.panel import OVERLAYS

    b = next(b for b in keys.BINDINGS if b.action == "overlay")
    assert len(b.keys) == len(OVERLAYS)
    for key, (_, label) in zip(b.keys, OVERLAYS, strict=True):
        assert f"{key} {label}" in b.help
