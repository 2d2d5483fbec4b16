"""Everything on screen: camera, stage, colour, helix and prop geometry (numpy), the GL
renderer, the window, and the `screenshot` and `run` jobs."""
