"""Everything on screen: camera, helix and prop geometry (numpy), the GL renderer and the window."""
