"""slinky3d: a real-time 3D Slinky built on the torsion-spring model."""

__version__ = "0.1.0"
