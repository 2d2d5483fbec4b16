"""What a run leaves behind: recordings (trajectory files) and figures."""
