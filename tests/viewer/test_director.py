"""The camera director: the Slinky in frame in every frame of the README's films, a
smooth camera while the coils vibrate, the eye above the floor, the modes chosen."""

import math
from dataclasses import replace

import numpy as np
import pytest

from slinky3d.errors import SlinkyError
from slinky3d.runtime.simulation import Simulation, grid_step
from slinky3d.scene.loader import load
from slinky3d.scene.look import CameraHint
from slinky3d.viewer.camera import OrbitCamera, corners
from slinky3d.viewer.director import FOLLOW, Director, spring
from slinky3d.viewer.film.filming import Camera, Shot, frame_count
from slinky3d.viewer.helix import bounds

SIZE = (1280, 720)
EDGE = 0.05  # the Slinky's box keeps this fraction of the picture clear at every edge
JOLT = 0.01  # of the picture's half-height: the most the camera's motion changes in a frame


def film_frames(name: str, fps: int, slowmo: float = 1.0, duration: float | None = None,
                camera: CameraHint | None = None, size=SIZE):
    """(snapshot, camera) of every frame of `record NAME`, as filming.film makes them."""
    sc = load(name)
    hint = replace(sc.camera, **{k: v for k, v in vars(camera or CameraHint()).items()
                                 if v is not None and k != "fov_deg"})
    shot = Shot(size=size, fps=fps, slowmo=slowmo, hint=hint)
    n = frame_count(sc.duration if duration is None else duration, fps, slowmo)
    h, per = grid_step(sc.dt, 1.0 / (fps * slowmo))
    sim = Simulation(sc, h)
    first = sim.snapshot()
    cam = Camera(sc, first, sc.look, shot)
    out = []
    for k in range(n):
        if k:
            sim.step(per)
        snap = sim.snapshot()
        out.append((snap, cam.at(k, snap)))
    return out, cam


def picture_box(snap, cam: OrbitCamera, size=SIZE) -> np.ndarray:
    """The Slinkies' box projected: (left, top, right, bottom) as fractions of the picture."""
    px = cam.project(corners(*bounds(snap, pad=0.0)), *size)
    return np.r_[px.min(axis=0) / size, px.max(axis=0) / size]


@pytest.fixture(scope="module")
def drop():
    """The README's film, `slinky3d record drop-plastic --slowmo 4` (60 fps, 144 frames),
    on to the landing (0.9 s, as the README's GIF): 216 frames."""
    return film_frames("drop-plastic", 60, 4.0, duration=0.9)


@pytest.fixture(scope="module")
def stairs():
    """4 s of the README's walk: `slinky3d record stairs --fps 15 --duration 4`."""
    return film_frames("stairs", 15, duration=4.0)


def check_framing(frames, camera, least_height: float):
    """Every frame: the Slinky's box inside the picture, EDGE clear of every edge, at
    least `least_height` of the picture tall; the eye above the floor."""
    floor = camera.stage.floor_y
    for k, (snap, cam) in enumerate(frames):
        left, top, right, bottom = picture_box(snap, cam)
        assert min(left, top, 1 - right, 1 - bottom) >= EDGE, (k, snap.t)
        assert bottom - top >= least_height, (k, snap.t)
        assert cam.eye()[1] > floor, k


def test_the_drop_film_keeps_the_whole_slinky_in_frame(drop):
    frames, camera = drop
    assert len(frames) == 216 and camera.director.mode == FOLLOW
    check_framing(frames, camera, 0.1)
    # it is followed: the Slinky lands on the floor, far below the first frame's
    # picture, and the camera went down with it
    c0, (s1, c1) = frames[0][1], frames[-1]
    assert bounds(s1, pad=0.0)[0][1] < camera.stage.floor_y + 0.01  # landed
    assert picture_box(s1, c0)[1] > 1.0 and c1.target[1] < c0.target[1] - 0.5


def test_the_stairs_walk_is_followed_large(stairs):
    frames, camera = stairs
    assert len(frames) == 60
    check_framing(frames, camera, 0.2)  # at least a fifth of the picture
    # down the flight: the walk ends several steps below, and the camera went with it
    assert frames[-1][1].target[1] < frames[0][1].target[1] - 0.3


def test_cinematic_sways_and_keeps_the_slinky_in_frame():
    frames, camera = film_frames("drop-plastic", 30, 4.0, camera=CameraHint(mode="cinematic"))
    check_framing(frames, camera, 0.1)
    yaws = np.degrees([cam.yaw for _, cam in frames])
    assert np.ptp(yaws) > 10


def test_the_camera_holds_still_while_the_coils_vibrate():
    """`waves`: the driven top sends compressions down the hanging Slinky; the coils
    move by centimetres, the camera by under MOVE of the picture in any frame."""
    frames, camera = film_frames("waves", 60, duration=4.0)
    bottom = np.array([snap.slinkies[0].ends[-1] for snap, _ in frames])
    assert np.ptp(bottom[:, 1]) > 0.005  # the Slinky does vibrate
    move = max(np.linalg.norm(b.target - a.target) / a.half_height()
               + abs(math.log(b.distance / a.distance))
               for (_, a), (_, b) in zip(frames, frames[1:], strict=False))
    assert move < 0.002


def test_a_fall_is_followed_without_jolts(drop):
    """Through the release, the collapse, the fall and the landing, the camera's motion
    changes by less than JOLT of the picture from one frame to the next (its second
    difference: the picture's content never jerks), in position and in zoom."""
    frames, _ = drop
    cams = [c for _, c in frames]
    target = np.array([c.target for c in cams])
    half = np.array([c.half_height() for c in cams])
    jolt = np.linalg.norm(np.diff(target, 2, axis=0), axis=1) / half[1:-1]
    zoom = np.abs(np.diff(np.log([c.distance for c in cams]), 2))
    assert jolt.max() < JOLT and zoom.max() < JOLT
    # and it did move: by metres
    assert np.abs(np.diff(target[:, 1])).sum() > 1.0


def test_the_eye_stays_above_the_floor_looking_up():
    frames, camera = film_frames("drop-plastic", 30, 4.0, camera=CameraHint(pitch_deg=-40.0))
    floor = camera.stage.floor_y
    assert all(cam.eye()[1] > floor for _, cam in frames)


def test_spring_is_critically_damped():
    """The exact step agrees with a fine integration of x'' = -w^2 (x - g) - 2 w x', and
    from rest it approaches the goal without passing it."""
    w, x, v = 7.0, np.array([1.0]), np.array([0.0])
    xs = [spring(x, v, np.zeros(1), t, w)[0][0] for t in np.linspace(0, 2, 200)]
    assert np.all(np.diff(xs) <= 0) and min(xs) > 0
    fx, fv, dt = 1.0, 0.3, 1e-5
    for _ in range(round(0.5 / dt)):
        fv += dt * (-w * w * fx - 2 * w * fv)
        fx += dt * fv
    ex, ev = spring(np.array([1.0]), np.array([0.3]), np.zeros(1), 0.5, w)
    assert ex[0] == pytest.approx(fx, abs=1e-4) and ev[0] == pytest.approx(fv, abs=1e-4)
    # one step of dt is two of dt / 2
    a = spring(np.array([0.4]), np.array([-1.0]), np.array([2.0]), 0.3, w)
    b = spring(*spring(np.array([0.4]), np.array([-1.0]), np.array([2.0]), 0.15, w),
               np.array([2.0]), 0.15, w)
    assert np.allclose(a, b)


def test_fixed_is_the_scene_framing_and_modes_are_checked():
    frames, camera = film_frames("drop-plastic", 10, 1.0, camera=CameraHint(mode="fixed"))
    assert all(np.array_equal(c.target, camera.director.base.target)
               and c.distance == camera.director.base.distance for _, c in frames)
    with pytest.raises(ValueError, match="camera mode"):
        Director("orbit", camera.director.base, SIZE)


def test_camera_option_and_scene_key_choose_the_mode(tmp_path):
    from slinky3d.viewer.jobs import parse_camera_option

    assert parse_camera_option("follow").mode == "follow"
    c = parse_camera_option("cinematic, yaw=10")
    assert (c.mode, c.yaw_deg) == ("cinematic", 10)
    assert parse_camera_option("mode=fixed").mode == "fixed"
    assert parse_camera_option("yaw=5").mode is None
    with pytest.raises(SlinkyError, match="did you mean 'follow'"):
        parse_camera_option("mode=folow")
    with pytest.raises(SlinkyError, match="fixed|follow|cinematic"):
        parse_camera_option("orbit")
    sc = load("hanging-plastic", ["camera.mode=cinematic"])
    assert sc.camera.mode == "cinematic"
    with pytest.raises(SlinkyError, match="camera.mode"):
        load("hanging-plastic", ["camera.mode=wobble"])


# -- rendered frames: the Slinky's own pixels ----------------------------------------
SMALL = (320, 180)  # the films' 16:9 at a quarter: the cameras above serve unchanged


@pytest.fixture(scope="module")
def renderer():
    from slinky3d.viewer.gl.context import headless_context
    from slinky3d.viewer.gl.renderer import Renderer

    ctx = headless_context()
    yield Renderer(ctx, SMALL, quality="software")
    ctx.release()


def red_pixels(img: np.ndarray) -> np.ndarray:
    """The plastic Slinky's pixels: red well above green and blue (the floor is grey,
    the stairs brown, the sky blue-grey)."""
    r, g, b = (img[..., i].astype(int) for i in range(3))
    return (r > 60) & (r > 2 * g) & (r > 2 * b)


@pytest.mark.gl
@pytest.mark.parametrize("film, picks", [("drop", (0, 60, 215)), ("stairs", (0, 30, 59))])
def test_rendered_frames_show_the_slinky_away_from_the_edges(request, renderer, film, picks):
    """A few frames drawn (hanging, collapsing, landed; the walk's start, middle and
    end): the Slinky's pixels are there, inside its projected box and EDGE clear of
    the picture's edges, so the boxes checked in every frame above are the Slinky's."""
    frames, camera = request.getfixturevalue(film)
    sc = load("drop-plastic" if film == "drop" else "stairs")
    w, h = SMALL
    for k in picks:
        snap, cam = frames[k]
        renderer.render(snap, sc.look, cam, camera.stage)
        mask = red_pixels(renderer.read())
        assert mask.sum() > 100, k
        rows, cols = np.nonzero(mask)
        left, top, right, bottom = picture_box(snap, cam, SMALL)
        assert cols.min() >= left * w - 2 and cols.max() <= right * w + 2, k
        assert rows.min() >= top * h - 2 and rows.max() <= bottom * h + 2, k
        assert min(cols.min() / w, rows.min() / h, 1 - cols.max() / w,
                   1 - rows.max() / h) >= EDGE, k


@pytest.mark.parametrize("room", [(0.0, 0.0, 0.5, 1.0), (0.45, 0.3, 1.0, 1.0)])
def test_follow_frames_the_slinky_inside_the_room_it_is_given(room):
    """The app reserves the HUD's and the caption's part of the picture: the Slinky's box
    is framed inside the rest (overlay/placement.room), settled, with the margin."""
    sc = load("hanging-plastic")
    snap = Simulation(sc).snapshot()
    base = OrbitCamera(target=np.zeros(3), distance=3.0, yaw=0.3, pitch=0.2)
    d = Director(FOLLOW, base, SIZE)
    d.room = room
    cam = d.start(snap)
    for _ in range(60):  # still: the goal settles where it started
        cam = d.step(snap, 1 / 60)
    left, top, right, bottom = picture_box(snap, cam)
    x0, y0, x1, y1 = room
    assert x0 <= left and right <= x1 and y0 <= top and bottom <= y1
    # centred in it across, and large in it (the margins: MARGIN, SLACK, the holder's room)
    assert 0.5 * (left + right) == pytest.approx(0.5 * (x0 + x1), abs=0.03)
    assert max((right - left) / (x1 - x0), (bottom - top) / (y1 - y0)) > 0.45


def test_follow_keeps_a_3d_slinky_in_its_box_and_frame():
    """The follow camera's subject box holds a 3D Slinky's arcs off the plane, and the
    framed camera shows every end point inside the picture."""
    from dataclasses import replace as rep

    from shapes import hanging_snapshot, snapshot3d, swung

    from slinky3d.runtime.snapshot import Snapshot
    from slinky3d.viewer.camera import frame_snapshot
    from slinky3d.viewer.director import FOLLOW, Director, subject_box
    from slinky3d.viewer.helix import centre_line

    sl = rep(hanging_snapshot("steel", stretch=0.3).slinkies[0], anchor_held=True)
    snap = Snapshot(t=0.0, slinkies=(snapshot3d(sl, *swung(sl)),))
    lo, hi = subject_box(snap)
    pts = centre_line(snap.slinkies[0], 17).reshape(-1, 3)
    assert np.all(pts >= lo) and np.all(pts <= hi)
    size = (640, 360)
    d = Director(FOLLOW, frame_snapshot(snap, size), size)
    cam = d.start(snap)
    px = cam.project(snap.slinkies[0].ends, *size)
    assert np.all((px > 0) & (px < size)), "every end point in the picture"
