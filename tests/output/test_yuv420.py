"""MP4 frames converted to yuv420p from the GL's rows (output/yuv420.py): the colours
libswscale gave the films (BT.601, limited range), the picture the right way up, and a
film's decoded frames the colours they had through libswscale."""

import av
import numpy as np
import pytest

from slinky3d.output.video import GL_ROWS, RGB, VideoWriter, decode, pixels_for
from slinky3d.output.yuv420 import from_gl_rgba, i420_shape


def smooth_picture(w: int, h: int) -> np.ndarray:
    """(h, w, 3) RGB, top row first: red across, green down, blue along a diagonal,
    the full 0..255 of each (a smooth picture: 4:2:0 loses nothing of it)."""
    x = np.linspace(0, 255, w)[None, :]
    y = np.linspace(0, 255, h)[:, None]
    rgb = np.stack(np.broadcast_arrays(x, y, (x + y) / 2), axis=-1)
    return np.rint(rgb).astype(np.uint8)


def as_gl(rgb: np.ndarray) -> np.ndarray:
    """The picture as glReadPixels returns it: RGBA, bottom row first."""
    rgba = np.full((*rgb.shape[:2], 4), 255, np.uint8)
    rgba[..., :3] = rgb[::-1]
    return rgba


def swscale(rgb: np.ndarray) -> np.ndarray:
    """libswscale's own rgb24 -> yuv420p (what the encoder did with RGB frames)."""
    return av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p").to_ndarray()


def to_rgb(i420: np.ndarray) -> np.ndarray:
    """An I420 buffer back to RGB as a decoder shows it (libswscale's inverse)."""
    return av.VideoFrame.from_ndarray(i420, format="yuv420p").to_ndarray(format="rgb24")


def test_the_conversion_is_libswscales_and_the_right_way_up():
    w, h = 96, 64
    rgb = smooth_picture(w, h)
    ours, theirs = from_gl_rgba(as_gl(rgb)).astype(int), swscale(rgb).astype(int)
    assert ours.shape == theirs.shape == i420_shape(w, h) == (96, 96)
    # luma to the rounding; chroma within a level (libswscale places its chroma
    # samples a fraction of a pixel apart from a 2x2 block's centre)
    assert np.abs(ours[:h] - theirs[:h]).max() <= 1
    assert np.abs(ours[h:] - theirs[h:]).max() <= 2
    # limited range: black and white at 16 and 235, grey's chroma at 128
    grey = np.zeros((2, 4, 3), np.uint8)
    grey[:, 2:] = 255
    i420 = from_gl_rgba(as_gl(grey))
    assert i420[:2].tolist() == [[16, 16, 235, 235]] * 2
    assert i420[2:].tolist() == [[128, 128, 128, 128]]
    # and back, as a decoder shows it: as close to the picture as libswscale's own
    ours_back = np.abs(to_rgb(from_gl_rgba(as_gl(rgb))).astype(int) - rgb)
    theirs_back = np.abs(to_rgb(swscale(rgb)).astype(int) - rgb)
    assert ours_back.mean() <= theirs_back.mean() + 0.05
    assert ours_back.max() <= theirs_back.max()


def test_an_odd_size_is_refused():
    with pytest.raises(ValueError, match="even"):
        from_gl_rgba(np.zeros((3, 4, 4), np.uint8))


def test_only_sinks_that_all_take_the_gls_rows_get_them(tmp_path):
    mp4 = VideoWriter(tmp_path / "a.mp4", (16, 16), 10)
    gif = VideoWriter(tmp_path / "a.gif", (16, 16), 10)
    try:
        assert pixels_for([mp4]) == GL_ROWS
        assert pixels_for([mp4, gif]) == pixels_for([mp4, []]) == pixels_for([]) == RGB
    finally:
        mp4.close()
        gif.close()


@pytest.mark.gl
def test_a_films_decoded_frames_have_the_colours_of_the_rgb_path(tmp_path):
    """An MP4 filmed alone (the GL's rows, converted by output/yuv420.py) decodes to the
    colours that the same film had through libswscale (an MP4 beside an RGB sink): no
    colour shift."""
    from slinky3d.scene.loader import load
    from slinky3d.viewer.film import filming

    sc = load("drop-plastic")
    shot = filming.Shot(size=(96, 64), fps=20, slowmo=2.0)
    drawn: list[np.ndarray] = []
    shapes: dict[str, set[tuple[int, ...]]] = {"rgb.mp4": set(), "yuv.mp4": set()}

    class Rgb:
        def write(self, frame: np.ndarray) -> None:
            drawn.append(frame.copy())

        def close(self) -> None:
            pass

    class Mp4(VideoWriter):
        def write(self, frame: np.ndarray) -> None:
            # a file, not a set: an MP4 alone is written in a child process
            with open(tmp_path / f"{self.path.name}.shapes", "a") as f:
                f.write(" ".join(map(str, frame.shape)) + "\n")
            super().write(frame)

    def mp4(name: str) -> VideoWriter:
        return Mp4(tmp_path / name, shot.size, shot.fps)

    filming.film(sc, 0.1, shot, lambda: [Rgb(), mp4("rgb.mp4")])
    filming.film(sc, 0.1, shot, lambda: [mp4("yuv.mp4")])
    for name, seen in shapes.items():
        lines = (tmp_path / f"{name}.shapes").read_text().split("\n")
        seen.update(tuple(int(v) for v in line.split()) for line in lines if line)
    assert shapes == {"rgb.mp4": {(64, 96, 3)}, "yuv.mp4": {(64, 96, 4)}}
    old, new = decode(tmp_path / "rgb.mp4"), decode(tmp_path / "yuv.mp4")
    assert len(old) == len(new) == len(drawn) == 4
    for a, b, rgb in zip(old, new, drawn, strict=True):
        was, now = a.astype(float) - rgb, b.astype(float) - rgb
        # the mean colour per channel as before (a wrong matrix or range would move
        # it by several levels), and no further from the picture drawn
        assert np.abs(now.mean(axis=(0, 1)) - was.mean(axis=(0, 1))).max() < 0.25
        assert np.abs(now).mean() <= np.abs(was).mean() + 0.1
