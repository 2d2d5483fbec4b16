"""The app as an unattended exhibit: its logic, playlist, caption and run."""
