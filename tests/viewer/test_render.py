"""Renderer: shader preprocessing (plain text), then headless GL on EGL (llvmpipe)."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.ndimage import binary_dilation
from shapes import hanging_snapshot

from slinky3d.errors import ShaderError, SlinkyError
from slinky3d.resources import shader_path
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import CameraHint, Look
from slinky3d.viewer import helix
from slinky3d.viewer.gl import programs

SIZE = (320, 240)
FLAT = (0.2, 0.3, 0.4)  # background without a gradient: exactly one colour
BARE = Look(floor=False, anchor="none", background_top=FLAT, background_bottom=FLAT)


# -- preprocessing, no GL ----------------------------------------------------------
def test_preprocess_stage_sections_and_line_map():
    vs = programs.preprocess("helix.glsl", "vertex", {"STEEL": ""})
    lines = vs.text.splitlines()
    assert lines[0] == "#version 330 core" and lines[1] == "#define VERTEX_SHADER"
    assert "#define STEEL" in lines[:4]
    # A line of the file maps back to its own file and line number.
    i = next(k for k, ln in enumerate(lines) if "uniform float half_width;" in ln)
    file, line = vs.locate(i + 1)
    assert file == str(shader_path("helix.glsl"))
    assert shader_path("helix.glsl").read_text().splitlines()[line - 1] == lines[i]
    # The fragment stage pastes common.glsl; its lines map to common.glsl.
    fs = programs.preprocess("helix.glsl", "fragment", {"STEEL": ""})
    j = next(k for k, ln in enumerate(fs.text.splitlines()) if "vec3 tonemap(" in ln)
    assert fs.locate(j + 1)[0] == str(shader_path("common.glsl"))
    assert "#include" not in fs.text


def test_preprocess_errors(tmp_path):
    with pytest.raises(ValueError):
        programs.preprocess("helix.glsl", "geometry")
    (tmp_path / "a.glsl").write_text('#include "missing.glsl"\n')
    with pytest.raises(ShaderError, match="missing.glsl"):
        programs.preprocess("a.glsl", "vertex", root=tmp_path)
    (tmp_path / "b.glsl").write_text("#version 410\nvoid main() {}\n")
    with pytest.raises(ShaderError, match=r"b.glsl:1: #version"):
        programs.preprocess("b.glsl", "vertex", root=tmp_path)


@pytest.mark.parametrize("log", ["0:4(12): error: `foo' undeclared",  # Mesa
                                 "0(4) : error C1008: undefined variable \"foo\""])  # NVIDIA
def test_explain_driver_logs(tmp_path, log):
    (tmp_path / "p.glsl").write_text("// one\n// two\nvoid main() {}\n")
    src = programs.preprocess("p.glsl", "fragment", root=tmp_path)  # 2 generated lines first
    msg = programs.explain(log, src, "fragment")
    assert msg.startswith(f"{tmp_path / 'p.glsl'}:2: fragment shader:") and "foo" in msg


# -- GL ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ctx():
    from slinky3d.viewer.gl.context import headless_context

    c = headless_context()
    yield c
    c.release()


@pytest.fixture(autouse=True)
def gl_clean(request):
    """Every GL test leaves no GL error behind."""
    yield
    if "ctx" in request.fixturenames:
        c = request.getfixturevalue("ctx")
        assert c.error == "GL_NO_ERROR"


@pytest.fixture(scope="module")
def renderer(ctx):
    from slinky3d.viewer.gl.renderer import Renderer

    return Renderer(ctx, SIZE, quality="software")


def two_slinkies() -> Snapshot:
    a = hanging_snapshot("steel", stretch=0.15).slinkies[0]
    b = hanging_snapshot("plastic", stretch=0.3, anchor=(0.25, 0.0)).slinkies[0]
    return Snapshot(t=0.0, slinkies=(a, b))


def draw(r, snap, look, hint=None, stage=None):
    from slinky3d.viewer.camera import frame_snapshot

    cam = frame_snapshot(snap, r.size, hint, stage)
    r.render(snap, look, cam, stage)
    return r.read(), cam


def slinky_mask(snap, cam, size, grow: int) -> np.ndarray:
    """Pixels within `grow` of the projected centre lines of every half hoop."""
    w, h = size
    m = np.zeros((h, w), bool)
    for sl in snap.slinkies:
        px = cam.project(helix.centre_line(sl, 65).reshape(-1, 3), w, h)
        ij = np.round(px).astype(int)
        ok = (ij[:, 0] >= 0) & (ij[:, 0] < w) & (ij[:, 1] >= 0) & (ij[:, 1] < h)
        m[ij[ok, 1], ij[ok, 0]] = True
    return binary_dilation(m, iterations=grow)


@pytest.mark.gl
@pytest.mark.parametrize("hint", [CameraHint(yaw_deg=0.0, pitch_deg=0.0),
                                  CameraHint(yaw_deg=35.0, pitch_deg=25.0)])
def test_pixels_where_the_projection_puts_the_slinky(renderer, hint):
    snap = two_slinkies()
    img, cam = draw(renderer, snap, BARE, hint)
    diff = np.abs(img.astype(int) - np.round(np.array(FLAT) * 255)).max(axis=2)
    drawn = diff > 10  # FXAA may tint the background a few levels near an edge
    near = slinky_mask(snap, cam, SIZE, grow=3)
    # Everything drawn lies on the projected helices...
    assert drawn.sum() > 500
    assert not np.any(drawn & ~near), f"{np.sum(drawn & ~near)} pixels off the Slinkies"
    # ...and a little further out the background is untouched, to the last bit.
    assert not np.any((diff > 0) & ~slinky_mask(snap, cam, SIZE, grow=6))
    # Every end point (where consecutive half hoops meet, z = 0) is covered.
    for sl in snap.slinkies:
        ends = cam.project(np.c_[sl.ends, np.zeros(len(sl.ends))], *SIZE)
        ij = np.round(ends).astype(int)
        hit = [drawn[max(j - 1, 0):j + 2, max(i - 1, 0):i + 2].any() for i, j in ij]
        assert np.mean(hit) > 0.97


@pytest.mark.gl
def test_dropped_gl_objects_are_released(ctx):
    """A GL object dropped in Python is released at the next frame, not kept by the
    driver until the context ends (a kiosk opening scenes for months grew with it)."""
    from slinky3d.runtime.memory import resident_mb
    from slinky3d.viewer.gl.renderer import Renderer

    r = Renderer(ctx, SIZE, quality="software")
    steel, plastic = hanging_snapshot("steel"), hanging_snapshot("plastic")  # N 157, 75
    draw(r, steel, BARE)
    released = r.released
    draw(r, plastic, BARE)  # another N: the Slinky's instance buffer and VAOs replaced
    draw(r, plastic, BARE)
    assert r.released > released and not ctx.objects
    r.resize((SIZE[0] + 8, SIZE[1]))  # the targets replaced
    released = r.released
    draw(r, plastic, BARE)
    assert r.released >= released + 4
    # What the driver keeps: 24 dropped 4 MB buffers, written (resident), one a frame.
    before = resident_mb()[0]
    for _ in range(24):
        ctx.buffer(np.ones(1 << 20, "f4").tobytes())
        draw(r, plastic, BARE)
    assert resident_mb()[0] - before < 24.0, "dropped buffers stay resident"


@pytest.mark.gl
def test_same_snapshot_same_pixels(ctx, renderer):
    from slinky3d.viewer.gl.renderer import Renderer

    snap = hanging_snapshot("steel")
    a, _ = draw(renderer, snap, Look())
    draw(renderer, hanging_snapshot("plastic"), Look(rainbow=True))  # something else
    b, _ = draw(renderer, snap, Look())
    assert np.array_equal(a, b)
    fresh = Renderer(ctx, SIZE, quality="software")
    c, _ = draw(fresh, snap, Look())
    assert np.array_equal(a, c)


@pytest.mark.gl
@pytest.mark.parametrize("quality", ["software", "gpu"])
def test_a_lower_scale_draws_the_same_picture_at_full_size(ctx, quality):
    """Dynamic resolution: at scale 0.5 the frame is still full size and shows the same
    picture (averaged over the small picture's pixels); outside the boxes stretched from
    it, it is the full-size backdrop to the last bit; and a full-scale frame after it
    (a screenshot, a film's frame) is the full-scale frame, bit for bit."""
    from slinky3d.viewer.gl.renderer import Renderer
    from slinky3d.viewer.stage import stage_for

    snap = hanging_snapshot("steel", stretch=0.2)
    look = Look()  # floor, holders, shadow: everything that is composed
    stage = stage_for(look, snap)
    size = (640, 360)  # the small picture 320x180
    r = Renderer(ctx, size, quality=quality)
    full, cam = draw(r, snap, look, CameraHint(yaw_deg=25.0, pitch_deg=15.0), stage)
    r.render(snap, look, cam, stage, scale=0.5)
    assert r.inner == (size[0] // 2, size[1] // 2)
    half = r.read()
    assert half.shape == full.shape

    def blocks(img):  # mean colour of each 8x8 block
        h, w = img.shape[:2]
        return img.reshape(h // 8, 8, w // 8, 8, 3).astype(float).mean(axis=(1, 3))

    diff = np.abs(blocks(full) - blocks(half)).max(axis=2)
    # Where the coils' wire is finer than the small picture's pixels, it differs.
    assert diff.mean() < 2.0 and np.mean(diff > 24) < 0.03
    drawn = np.abs(full.astype(int) - half.astype(int)).max(axis=2) > 0
    inside = np.zeros(drawn.shape, bool)
    for x, y, w, h in r.composed:  # GL's rows from the bottom
        inside[size[1] - y - h:size[1] - y, x:x + w] = True
    assert not np.any(drawn & ~inside) and inside.mean() < 0.8
    r.render(snap, look, cam, stage)
    assert np.array_equal(r.read(), full)
    # While the camera moves the whole small picture is stretched: the same picture.
    moved = replace(cam, yaw=cam.yaw + 0.2)
    r.render(snap, look, moved, stage, scale=0.5)
    assert r.composed == [(0, 0, *size)]
    diff = np.abs(blocks(draw_at(r, snap, look, moved, stage)) - blocks(r.read())).max(axis=2)
    assert diff.mean() < 2.0 and np.mean(diff > 24) < 0.03


@pytest.mark.gl
def test_a_frame_drawn_again_only_where_it_changed_is_the_frame_drawn_whole(ctx):
    """Partial redraw (viewer/app/redraw.py): into a target that still holds the last
    frame, a frame at a lower scale drawn again only inside the last frame's boxes and
    its own is, bit for bit, that frame drawn whole; and restore() draws any part of it
    again as it was (what the overlay does where it changed)."""
    from slinky3d.viewer.camera import frame_snapshot
    from slinky3d.viewer.gl.renderer import Renderer
    from slinky3d.viewer.stage import stage_for

    size = (640, 360)
    look = Look()
    first = hanging_snapshot("steel", stretch=0.2)
    moved = hanging_snapshot("steel", stretch=0.1, anchor=(0.03, 0.0))
    stage = stage_for(look, first)
    cam = frame_snapshot(first, size, CameraHint(yaw_deg=25.0, pitch_deg=15.0), stage)

    def target():
        return ctx.framebuffer(ctx.renderbuffer(size, 4), ctx.depth_renderbuffer(size))

    kept, whole = target(), target()
    r, fresh = Renderer(ctx, size, quality="software"), Renderer(ctx, size, quality="software")
    for _ in range(2):  # the second with a camera that stands still: boxes, not all of it
        r.render(first, look, cam, stage, target=kept, scale=0.5)
        fresh.render(moved, look, cam, stage, target=whole, scale=0.5)
    last = list(r.composed)
    assert last != [(0, 0, *size)] and not r.partial
    r.render(moved, look, cam, stage, target=kept, scale=0.5, redraw=last)
    assert r.partial and r.composed == fresh.composed
    assert kept.read() == whole.read()
    kept.clear(1.0, 0.0, 1.0, 1.0, viewport=(100, 50, 300, 200))  # something drawn over it
    assert kept.read() != whole.read()
    r.restore([(100, 50, 300, 200)])
    assert kept.read() == whole.read()


def draw_at(r, snap, look, cam, stage):
    """A full-scale frame with that camera, from a fresh renderer of the same kind."""
    from slinky3d.viewer.gl.renderer import Renderer

    fresh = Renderer(r.ctx, r.size, quality=r.quality.name)
    fresh.render(snap, look, cam, stage)
    return fresh.read()


@pytest.mark.gl
@pytest.mark.parametrize("anchor", ["post", "hand"])
def test_holders_kept_between_frames_are_the_ones_a_fresh_build_makes(renderer, anchor):
    """The holders are rebuilt only when what they are built from changes: while the
    free end swings they stay, when a held end moves they follow, and what is kept is
    always what building them afresh would give."""
    look = Look(anchor=anchor)
    snap = hanging_snapshot("steel", stretch=0.2)
    sl = snap.slinkies[0]
    rng = np.random.default_rng(3)
    frames = []
    for _ in range(6):  # the free end and the coils near it swing
        ends = sl.ends.copy()
        ends[-40:] += rng.normal(0.0, 0.01, (40, 2))
        frames.append(replace(sl, ends=ends))
    for dx in (0.0, 0.05, 0.1):  # the held end moves
        frames.append(replace(sl, ends=sl.ends + [dx, 0.0]))
    builds = 0
    for s in frames:
        one = Snapshot(t=0.0, slinkies=(s,))
        key = renderer._decor_key
        kept = renderer._decor(one, look, -1.2)
        builds += renderer._decor_key != key
        assert np.array_equal(kept, renderer._build_decor(one, look, -1.2))
    assert 2 <= builds <= 3  # once for the swinging frames, then per held-end move


def mean_colour(img, mask):
    return img[mask].astype(float).mean(axis=0)


@pytest.mark.gl
def test_materials_change_the_colours(renderer):
    snap = hanging_snapshot("plastic", stretch=0.25)
    hint = CameraHint(yaw_deg=0.0, pitch_deg=5.0)
    bg = np.round(np.array(FLAT) * 255).astype(np.uint8)
    out = {}
    for name, look in {
        "steel": replace(BARE, material="steel"),
        "red": replace(BARE, material="plastic", colour=(0.9, 0.05, 0.05)),
        "blue": replace(BARE, material="plastic", colour=(0.05, 0.1, 0.9)),
        "rainbow": replace(BARE, material="plastic", rainbow=True),
    }.items():
        img, _ = draw(renderer, snap, look, hint)
        out[name] = (img, np.any(img != bg, axis=2))
    steel = mean_colour(*out["steel"])
    red, blue = mean_colour(*out["red"]), mean_colour(*out["blue"])
    assert steel.max() - steel.min() < 40  # grey metal
    assert red[0] > red[1] + 60 and red[0] > red[2] + 60
    assert blue[2] > blue[0] + 60 and blue[2] > blue[1] + 40
    # Rainbow: the anchored (top) end and the far (bottom) end differ in hue.
    img, drawn = out["rainbow"]
    rows = np.nonzero(drawn.any(axis=1))[0]
    top = mean_colour(img[rows[0]:rows[0] + 15], drawn[rows[0]:rows[0] + 15])
    bottom = mean_colour(img[rows[-1] - 15:rows[-1]], drawn[rows[-1] - 15:rows[-1]])
    assert np.argmax(top) != np.argmax(bottom)


@pytest.mark.gl
def test_floor_receives_the_shadow(renderer):
    from slinky3d.viewer.stage import stage_for

    snap = hanging_snapshot("plastic", stretch=0.25)
    look = Look(anchor="none")
    stage = stage_for(look, snap)
    hint = CameraHint(yaw_deg=10.0, pitch_deg=30.0)
    lit, cam = draw(renderer, snap, look, hint, stage)
    empty = Snapshot(t=0.0, slinkies=(replace(snap.slinkies[0], ends=snap.slinkies[0].ends
                                              + [100.0, 0.0]),))
    renderer.render(empty, look, cam, stage)
    bare = renderer.read()
    darker = (bare.astype(int) - lit.astype(int)).sum(axis=2) > 30
    off = ~slinky_mask(snap, cam, SIZE, grow=4)
    assert np.sum(darker & off) > 100  # a shadow on the floor beside the Slinky


@pytest.mark.gl
def test_gpu_preset_msaa_and_numpy_extrusion_agree(ctx, renderer):
    from slinky3d.viewer.gl.renderer import Renderer

    snap = two_slinkies()
    hint = CameraHint(yaw_deg=20.0, pitch_deg=10.0)
    gpu = Renderer(ctx, SIZE, quality="gpu")
    assert gpu.quality.samples >= 2 and not gpu.quality.fxaa
    img, cam = draw(gpu, snap, BARE, hint)
    drawn = np.abs(img.astype(int) - np.round(np.array(FLAT) * 255)).max(axis=2) > 10
    assert drawn.sum() > 500 and not np.any(drawn & ~slinky_mask(snap, cam, SIZE, 3))
    # The numpy extrusion draws the same picture as the instanced one (close up, where
    # the wire is wider than a pixel and the shader's minimum width does not apply).
    npr = Renderer(ctx, SIZE, quality="software", extrusion="numpy")
    close = replace(hint, distance=0.15, target=(-0.03, -0.05, 0.0))
    a, _ = draw(renderer, snap, BARE, close)
    b, _ = draw(npr, snap, BARE, close)
    assert np.mean(np.abs(a.astype(int) - np.round(np.array(FLAT) * 255)).max(axis=2) > 10) > 0.05
    assert np.mean(np.abs(a.astype(int) - b.astype(int)) > 8) < 0.002


@pytest.mark.gl
@pytest.mark.parametrize("spatial", [False, True])
def test_vertex_shader_matches_numpy_extrusion(ctx, spatial):
    import moderngl
    from shapes import snapshot3d, swung

    from slinky3d.viewer.gl.helices import HOOP_ATTRIBUTES, HOOP_FORMAT

    sl = hanging_snapshot("steel", stretch=0.2).slinkies[0]
    if spatial:  # a 3D pose: every half hoop from its own frame
        sl = snapshot3d(sl, *swung(sl))
    tpl = helix.template(6)
    prog = programs.program(ctx, "helix.glsl", {"DEPTH_ONLY": ""}, varyings=("v_pos",))
    w = 0.0026
    for k, v in (("R", sl.R), ("half_width", w / 2), ("pixel_size", 0.0),
                 ("half_thick", helix.wire_thickness(sl) / 2)):
        if k in prog:
            prog[k].value = v
    prog["vp"].write(np.eye(4, dtype="f4").tobytes())
    vbo = ctx.buffer(tpl.vertices.tobytes())
    inst = ctx.buffer(np.c_[helix.instances(sl), helix.impact_flash(sl)].astype("f4").tobytes())
    vao = ctx.vertex_array(prog, [(vbo, "3f 2f", "in_vert", "in_face"),
                                  (inst, HOOP_FORMAT + "/i", *HOOP_ATTRIBUTES)],
                           skip_errors=True)
    out = ctx.buffer(reserve=sl.N * len(tpl.vertices) * 12)
    vao.transform(out, moderngl.POINTS, vertices=len(tpl.vertices), instances=sl.N)
    gpu = np.frombuffer(out.read(), "f4").reshape(-1, 3)
    cpu = helix.extrude(sl, w, tpl).positions
    assert np.max(np.abs(gpu - cpu)) < 2e-6


@pytest.mark.gl
def test_broken_shader_names_file_and_line(ctx, tmp_path):
    (tmp_path / "inc.glsl").write_text("float helper() {\n    return undefined_thing;\n}\n")
    (tmp_path / "broken.glsl").write_text(
        "#if defined VERTEX_SHADER\n"
        "void main() { gl_Position = vec4(0.0); }\n"
        "#elif defined FRAGMENT_SHADER\n"
        "out vec4 frag;\n"
        "void main() {\n"
        "    frag = vec4(1.0) * missing_value;\n"
        "}\n"
        "#endif\n")
    with pytest.raises(ShaderError) as e:
        programs.program(ctx, "broken.glsl", root=tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'broken.glsl'}:6: fragment shader:")
    assert "missing_value" in str(e.value)
    (tmp_path / "user.glsl").write_text(
        "#if defined VERTEX_SHADER\n"
        '#include "inc.glsl"\n'
        "void main() { gl_Position = vec4(helper()); }\n"
        "#elif defined FRAGMENT_SHADER\n"
        "out vec4 f;\nvoid main() { f = vec4(1.0); }\n"
        "#endif\n")
    with pytest.raises(ShaderError, match=r"inc.glsl:2: vertex shader:"):
        programs.program(ctx, "user.glsl", root=tmp_path)


def test_quality_detection():
    from slinky3d.viewer.gl.quality import is_software

    assert is_software("llvmpipe (LLVM 15.0.6, 256 bits)")
    assert is_software("SwiftShader Device (LLVM 10.0.0)")
    assert not is_software("NVIDIA H200/PCIe/SSE2")
    assert not is_software("AMD Radeon RX 7900 XTX (radeonsi, navi31, LLVM 15.0.7, DRM 3.54)")


@pytest.mark.gl
def test_auto_quality_here_is_software(ctx):
    from slinky3d.viewer.gl.quality import choose_quality

    assert choose_quality(ctx).name == "software"  # CI and this machine: llvmpipe
    with pytest.raises(SlinkyError, match="unknown quality"):
        choose_quality(ctx, "ultra")


def test_floor_goes_below_where_the_slinky_gets():
    from slinky3d.runtime.simulation import Simulation
    from slinky3d.scene.loader import load
    from slinky3d.scene.reach import reach_of

    sc = load("1Pa")  # anchor held, far end released: swings down to hang
    hang, fall = reach_of(sc)
    assert fall is None
    low = helix.bounds(Simulation(sc).snapshot(), pad=0.0)[0][1]
    assert hang < low - 0.3  # well below the U it starts in
    sc = load("drop-plastic")  # let go at 0.2 s, 0.6 s long
    hang, fall = reach_of(sc)
    assert hang is None
    low = helix.bounds(Simulation(sc).snapshot(), pad=0.0)[0][1]
    assert fall == pytest.approx(low - 0.5 * 9.81 * 0.4**2, abs=1e-6)


@pytest.mark.parametrize("text, ok", [("1280x720", (1280, 720)), (" 64X48 ", (64, 48)),
                                      ("1280", None), ("0x10", None), ("axb", None)])
def test_size_option(text, ok):
    from slinky3d.viewer.jobs import parse_size

    if ok:
        assert parse_size(text) == ok
    else:
        with pytest.raises(SlinkyError, match="--size"):
            parse_size(text)


def test_camera_option():
    from slinky3d.viewer.jobs import parse_camera_option

    c = parse_camera_option("yaw=30, pitch_deg=-10,distance=1.5,target=0:-0.4:0,fov=40")
    assert (c.yaw_deg, c.pitch_deg, c.distance, c.fov_deg) == (30, -10, 1.5, 40)
    assert c.target == (0.0, -0.4, 0.0)
    for bad, words in (("yaw", "KEY=VALUE"), ("zoom=2", "unknown key"),
                       ("yaw=left", "expected a number"), ("pitch=120", "between"),
                       ("target=1:2", "3 numbers"), ("distance=nan", "finite")):
        with pytest.raises(SlinkyError, match=words):
            parse_camera_option(bad)


@pytest.mark.gl
def test_stairs_and_holders_are_drawn(renderer):
    snap = hanging_snapshot("plastic", stretch=0.25)
    low = snap.slinkies[0].ends[:, 1].min()
    look = replace(BARE, stairs=((-0.3, -0.05, low - 0.05),), anchor="post")
    img, cam = draw(renderer, snap, look, CameraHint(yaw_deg=20.0, pitch_deg=20.0))
    # The middle of the step's top face is wood-coloured.
    i, j = np.round(cam.project(np.array([[-0.175, low - 0.05, 0.0]]), *SIZE)[0]).astype(int)
    r, g, b = img[j, i].astype(int)
    assert r > b + 40 and r > 100
    # The holder (plate, arm, post) is there with anchor = "post" and gone with "none";
    # the plate sits on top of the first half hoop.
    renderer.render(snap, replace(look, anchor="none"), cam)
    diff = np.abs(img.astype(int) - renderer.read().astype(int)).max(axis=2) > 10
    top = np.r_[0.5 * (snap.slinkies[0].ends[0] + snap.slinkies[0].ends[1]), 0.0]
    i, j = np.round(cam.project(top[None] + [0.0, 0.004, 0.0], *SIZE)[0]).astype(int)
    assert diff[j - 2:j + 3, i - 2:i + 3].any() and diff.sum() > 200


@pytest.mark.gl
def test_screenshot_same_scene_and_time_same_pixels(tmp_path, capsys):
    from PIL import Image

    from slinky3d.cli import main

    shots = []
    for i in range(2):
        out = tmp_path / f"shot{i}.png"
        assert main(["screenshot", "1Pa", "--time", "0.05", "--size", "160x120",
                     "--out", str(out)]) == 0
        shots.append(np.asarray(Image.open(out)))
    assert "wrote" in capsys.readouterr().out
    assert shots[0].shape == (120, 160, 3) and np.array_equal(shots[0], shots[1])
    assert len(np.unique(shots[0].reshape(-1, 3), axis=0)) > 50  # a picture, not a blank
    # Bad options are one line and status 2, never a traceback.
    assert main(["screenshot", "1Pa", "--size", "huge"]) == 2
    assert main(["screenshot", "1Pa", "--camera", "pitch=100"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("slinky3d: error: --") for e in err)


@pytest.mark.gl
def test_a_scene_on_the_3d_solver_is_shot(tmp_path, capsys):
    """`--solver 3d` and a turned scene (the 3D solver picked by itself) make pictures;
    a scene the 3D solver cannot run is one line."""
    from PIL import Image

    from slinky3d.cli import main

    for extra in (["--solver", "3d"], ["--set", "rotate=37"]):
        out = tmp_path / "shot.png"
        assert main(["screenshot", "3Pa", "--time", "0.05", "--size", "160x120",
                     "--out", str(out), *extra]) == 0
        img = np.asarray(Image.open(out))
        assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50
    assert main(["screenshot", "side-contact-laws", "--solver", "3d"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "contact law" in err
