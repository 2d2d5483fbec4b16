"""The 2D layer over the 3D picture (Dear ImGui): HUD, panel, caption, plots, help, and
the buffers it is cached in."""
