"""slinky3d: a real-time 3D Slinky built on the torsion-spring model."""

import os

# The model's matrices are small: BLAS threads only add overhead and contention
# (the static-shape solves ran 2-20x slower with them on a busy machine).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
