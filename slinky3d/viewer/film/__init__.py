"""Films made off screen, frame by frame: `slinky3d record` and the app's clips."""
