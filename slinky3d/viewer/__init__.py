"""Everything on screen. At this level the 3D picture's pieces (numpy only): camera,
stage, colour, helix, props and the hand's coupling, and the `screenshot`/`run` jobs;
below it gl/ (the renderer), app/ (the window), marks/ (3D marks), overlay/ (the 2D
layer), kiosk/ (the exhibit) and film/ (off-screen films)."""

# Pixels of a screenshot and of a new window (the kiosk's too); light to import, so
# that the command line names it without loading GL.
WINDOW_SIZE = (1280, 720)
