"""The coils' impact flash: short in the picture's time, local, and in the material's
colour (a collapsed stack stays the colour of its plastic)."""

import colorsys
from dataclasses import replace

import numpy as np
import pytest
from shapes import hanging_snapshot

from slinky3d.viewer import helix

SLOWMO = 4.0  # the README film's
FPS = 30


@pytest.mark.parametrize("slowmo", [1.0, SLOWMO])
def test_the_flash_lasts_the_same_time_in_the_picture_at_any_slow_motion(slowmo):
    sl = hanging_snapshot("plastic").slinkies[0]
    age = np.full(sl.N, np.inf)
    sim_s = helix.FLASH_S / slowmo  # simulated seconds the flash lasts
    age[10], age[20], age[30] = 0.0, 0.5 * sim_s, 1.01 * sim_s
    f = helix.impact_flash(replace(sl, impact_age=age), slowmo)
    # joint k joins half hoops k - 1 and k
    assert f[9] == f[10] == 1.0 and f[19] == f[20] == pytest.approx(0.5)
    assert f[29] == f[30] == 0.0 and np.count_nonzero(f) == 4


def hue_value(pixels: np.ndarray) -> tuple[float, float]:
    """Mean hue (turns, on the circle) and mean value (0..1) of (n, 3) uint8 pixels."""
    hsv = np.array([colorsys.rgb_to_hsv(*(p / 255.0)) for p in pixels])
    angle = np.angle(np.exp(2j * np.pi * hsv[:, 0]).mean()) / (2 * np.pi)
    return float(angle % 1.0), float(hsv[:, 2].mean())


def turns_apart(a: float, b: float) -> float:
    return abs((a - b + 0.5) % 1.0 - 0.5)


@pytest.mark.gl
def test_a_collapsing_stack_keeps_its_colour_and_only_its_hitting_coils_flash():
    """drop-plastic filmed at 4x slow motion, from the fall through the collapse to the
    landing: in every frame the Slinky's pixels keep the hue of the same frame drawn
    without a flash and hardly brighten; while the front runs down, only a few half hoops
    (those hitting) flash (when it reaches the bottom, the whole stack snaps together);
    and the collapsed stack is lit no longer than FLASH_S of film."""
    from slinky3d.runtime.simulation import Simulation, grid_step
    from slinky3d.scene.loader import load
    from slinky3d.viewer.camera import frame_snapshot
    from slinky3d.viewer.gl.context import headless_context
    from slinky3d.viewer.gl.renderer import Renderer

    sc = load("drop-plastic")
    h, per = grid_step(sc.dt, 1.0 / (FPS * SLOWMO))
    sim = Simulation(sc, h)
    ctx = headless_context()
    r = Renderer(ctx, (200, 150), quality="software")
    look = sc.look
    local = []
    stack_lit = 0  # frames in which the collapsed stack flashes
    try:
        sim.advance_to(0.3)  # the top let go at 0.2 s; the front runs down
        while sim.t < 0.6:  # past the landing on the floor
            sim.step(per)
            snap = sim.snapshot()
            sl = snap.slinkies[0]
            flash = helix.impact_flash(sl, SLOWMO)
            if not flash.any():
                continue
            stack_lit += sl.contact.mean() > 0.9
            if sl.contact.mean() < 1 / 3:  # the front on its way down
                local.append(np.count_nonzero(flash) / sl.N)
            cam = frame_snapshot(snap, r.size, None, None)
            r.render(snap, look, cam, slowmo=SLOWMO)
            lit = r.read()
            r.render(replace(snap, slinkies=(replace(sl, impact_age=None),)), look, cam,
                     slowmo=SLOWMO)
            plain = r.read()
            r.render(snap, look, cam, helices=False)
            bare = r.read()
            mask = np.abs(plain.astype(int) - bare).max(axis=2) > 30
            assert mask.sum() > 200
            hue_lit, value_lit = hue_value(lit[mask])
            hue_plain, value_plain = hue_value(plain[mask])
            assert turns_apart(hue_lit, hue_plain) < 0.02, f"t = {snap.t:.3f} s"
            assert value_lit < 1.15 * value_plain, f"t = {snap.t:.3f} s"
    finally:
        ctx.release()
    assert local and max(local) < 0.2  # the front's coils, not the whole Slinky
    # The stack's snap lights it for one flash's length of film, not the slowed time.
    assert 0 < stack_lit <= np.ceil(helix.FLASH_S * FPS) + 1
