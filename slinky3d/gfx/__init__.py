"""Everything that imports moderngl or pyglet: renderer, shaders, window, commands."""
