"""OpenGL: the context, GLSL programs, quality presets and the render passes (moderngl)."""
