"""Fixtures shared by the test modules."""

import fakesim
import pytest

from slinky3d import cli


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Swap the solver for the stand-in and run in an empty directory."""
    monkeypatch.setattr(cli, "_record", fakesim.record)
    monkeypatch.chdir(tmp_path)
    fakesim.CALLS.clear()
    return fakesim.CALLS
