"""A scene in motion: the simulation of all its Slinkies, commands, the solver thread, snapshots."""
