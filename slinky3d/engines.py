"""The engines a scene can run on, named once (light to import: the command line offers
them without loading either): the planar solver (dynamics/solver.py, the paper's model,
the default) and the 3D solver (dynamics/solver3d.py behind dynamics/engine3d.py).
docs/solver.md, "The 3D solver"; docs/scene-format.md, `solver` and `rotate`."""

PLANAR, THREE_D = "planar", "3d"
ENGINES = (PLANAR, THREE_D)
DEFAULT_ENGINE = PLANAR  # the 3D solver becomes the default once it meets issue 24's speed
