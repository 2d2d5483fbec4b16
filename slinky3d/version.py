"""slinky3d's version, written here only: pyproject.toml reads it (setuptools' `attr`),
and a session file records it (a replay is bit-identical only within one version)."""

__version__ = "0.1.0"
