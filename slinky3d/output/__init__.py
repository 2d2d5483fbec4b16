"""What a run leaves behind: recordings (trajectory files) and figures."""

# The solvers a recording can run (recording.record): the fixed-step real-time solver
# (slinky3d.dynamics) and the adaptive reference integrator (slinky3d.reference).
# Named here, light to import, so that the command line offers them without loading
# either solver.
REALTIME, REFERENCE = "realtime", "reference"
SOLVERS = (REALTIME, REFERENCE)
DEFAULT_SOLVER = REALTIME
DEFAULT_FPS = 100.0  # samples per simulated second of a recording, a session, a sweep
