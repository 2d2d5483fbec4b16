"""What a run leaves behind: recordings (trajectory files) and figures."""

from slinky3d.engines import PLANAR, THREE_D

# The solvers a recording can run (recording.record): the fixed-step real-time solvers
# (slinky3d.dynamics), planar or 3D (slinky3d.engines), and the adaptive planar reference
# integrator (slinky3d.reference); "realtime", the default, is the real-time solver the
# scene names (planar unless it says or needs 3d). Named here, light to import, so that
# the command line offers them without loading any solver.
REALTIME, REFERENCE = "realtime", "reference"
SOLVERS = (PLANAR, THREE_D, REFERENCE, REALTIME)
DEFAULT_SOLVER = REALTIME
DEFAULT_FPS = 100.0  # samples per simulated second of a recording, a session, a sweep
