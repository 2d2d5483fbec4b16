"""Fixtures shared by the viewer's tests."""

import pytest
from shapes import hanging_snapshot


@pytest.fixture(params=["plastic", "steel"])
def snap(request):
    """The synthetic hanging shape of either preset, a little stretched."""
    return hanging_snapshot(request.param, stretch=0.2)
