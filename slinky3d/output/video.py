"""Video files: frames streamed one at a time to H.264 in MP4, to a GIF, or to PNGs.

Nothing here draws: the frames come from the viewer (`viewer/film/filming.py`). A sink
holds one frame at a time, so a clip of any length costs the same memory. MP4 is
libx264, yuv420p, CRF 23 (preset ultrafast, its quality cuts put back) through PyAV
(its wheel bundles FFmpeg), fed the GL's rows converted here (output/yuv420.py) or
RGB that libswscale converts; yuv420p halves the chroma resolution, so an MP4's width
and height must be even.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.output.paths import cannot_write, check_output

MP4, GIF = ".mp4", ".gif"
EXTENSIONS = (MP4, GIF)
CRF = 23  # x264's default quality: visually clean at a modest size
# x264's speed preset and its changes. CRF sets the quality; these trade encoding time
# for file size. On a 2-core machine the encoder shares the CPU with the software
# rasterizer, so the cheapest that keeps the picture: "ultrafast" (no motion refinement,
# one reference, no B-frames) with three of its cuts put back, CABAC entropy coding, the
# deblocking filter and the macroblock tree over a 10-frame lookahead, and adaptive
# quantization. Measured on the 720p drop film (docs/recording.md, "The formats"):
# x264's CPU half of veryfast-with-subme=1's, the PSNR within 0.05 dB, 27 % more bytes.
PRESET = "ultrafast"
X264_PARAMS = "cabac=1:deblock=1:mbtree=1:rc-lookahead=10:aq-mode=1"
MAX_FPS = 240  # frames per second of a film; a player shows no more
# The pixels a sink takes: (h, w, 3) RGB, top row first, or the GL's own rows, (h, w, 4)
# RGBA bottom row first as glReadPixels returns them (no conversion or flip on the
# drawing thread), which an MP4 turns into yuv420p itself (output/yuv420.py). A sink
# says which in its `pixels` attribute; one that does not takes RGB.
RGB, GL_ROWS = "rgb24", "gl-rgba"


def encoder_threads() -> int:
    """x264's threads: the cores beyond the two the drawing wants (one on a 2-core
    machine, where more threads only fight the rasterizer for the same cores)."""
    return max(1, (os.cpu_count() or 2) - 2)


class FrameSink(Protocol):
    def write(self, frame: np.ndarray) -> None: ...
    def close(self) -> None: ...


def pixels_for(sinks: Sequence[object]) -> str:
    """The pixels to hand `sinks`: GL_ROWS when every one takes them, else RGB (which
    every sink takes)."""
    ok = sinks and all(getattr(s, "pixels", RGB) == GL_ROWS for s in sinks)
    return GL_ROWS if ok else RGB


def check_out(path: Path, size: tuple[int, int], option: str = "--out") -> None:
    """A one-line SlinkyError unless `path` is a film this module writes, that can be
    opened for writing now, at a size its format takes."""
    w, h = size
    if path.suffix.lower() == MP4 and (w % 2 or h % 2):
        # Refused rather than rounded: the file then has the size asked for, or none.
        raise SlinkyError(f"--size: an MP4 (yuv420p) needs an even width and height, got "
                          f"{w}x{h}; try {w + w % 2}x{h + h % 2}")
    check_output(path, option, EXTENSIONS, "film")


class VideoWriter:
    """An MP4 (H.264) or GIF file written frame by frame: `write((h, w, 3) uint8)`, or
    for an MP4 (`pixels` GL_ROWS) the GL's (h, w, 4) rows, converted to yuv420p here,
    on the writer's thread, by one compiled pass rather than libswscale. An OS
    or FFmpeg error while writing or closing (a full disk, a path that went away) is a
    one-line SlinkyError naming `option` and the file."""

    def __init__(self, path: Path, size: tuple[int, int], fps: int, option: str = "--out"):
        import av

        self.path, self.option = path, option
        w, h = size
        try:
            self._box: Any = av.open(str(path), mode="w")
        except _write_errors() as e:
            raise self._error(e) from None
        self._palette: Any = None  # the clip's palette (a Pillow image), from frame 0
        self._pal8 = np.zeros((256, 4), np.uint8)  # the same, as PyAV's pal8 takes it
        self.gif = path.suffix.lower() == GIF
        self.pixels = RGB if self.gif else GL_ROWS
        if self.gif:
            stream: Any = self._box.add_stream("gif", rate=Fraction(fps))
            stream.pix_fmt = "pal8"
        else:
            stream = self._box.add_stream("libx264", rate=Fraction(fps))
            stream.pix_fmt = "yuv420p"
            stream.options = {"crf": str(CRF), "preset": PRESET, "x264-params": X264_PARAMS}
            stream.thread_count = encoder_threads()
            # here, not at the top: the command line loads this module without numba
            from slinky3d.output.yuv420 import from_gl_rgba

            from_gl_rgba(np.zeros((2, 2, 4), np.uint8))  # compiled (or loaded) now
            self._yuv420 = from_gl_rgba
        stream.width, stream.height = w, h
        self._stream = stream

    def write(self, frame: np.ndarray) -> None:
        import av

        if self.gif:
            # pal8 takes (indices, palette); PyAV's stubs know only the single array
            vf = av.VideoFrame.from_ndarray(self._paletted(frame),  # type: ignore[arg-type]
                                            format="pal8")
        elif frame.shape[2] == 4:  # the GL's rows
            vf = av.VideoFrame.from_ndarray(self._yuv420(frame), format="yuv420p")
        else:
            vf = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame), format=RGB)
        try:
            for packet in self._stream.encode(vf):
                self._box.mux(packet)  # PyAV opens the file at the first packet
        except _write_errors() as e:
            self._give_up()
            raise self._error(e) from None

    def close(self) -> None:
        if self._box is None:  # closed already, or given up after an error
            return
        try:
            for packet in self._stream.encode():  # flush the encoder's delayed frames
                self._box.mux(packet)
            box, self._box = self._box, None
            box.close()
        except _write_errors() as e:
            self._give_up()
            raise self._error(e) from None

    def _give_up(self) -> None:
        """After an error: the container closed without a word (its own error would hide
        the first), and `close` then does nothing."""
        box, self._box = self._box, None
        if box is not None:
            try:
                box.close()
            except _write_errors():
                pass

    def _error(self, e: Exception) -> SlinkyError:
        return cannot_write(self.option, self.path, e)

    def _paletted(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The frame as palette indices. One palette for the whole clip, from its first
        frame (a pass over all frames would hold them all), so the background keeps its
        colours from frame to frame and the GIF stores only what moved; no dithering,
        whose noise would change every pixel of every frame."""
        from PIL import Image

        img = Image.fromarray(frame)
        if self._palette is None:
            self._palette = img.quantize(256, method=Image.Quantize.MEDIANCUT)
            rgba = np.full((256, 4), 255, np.uint8)
            rgb = np.array(self._palette.getpalette(), np.uint8).reshape(-1, 3)[:256]
            rgba[:len(rgb), :3] = rgb
            self._pal8 = np.ascontiguousarray(rgba[:, _pal8_columns()])
        index = img.quantize(palette=self._palette, dither=Image.Dither.NONE)
        return np.asarray(index), self._pal8


def _write_errors() -> tuple[type[Exception], ...]:
    """What PyAV raises when a file cannot be opened or written: OSError (its file
    errors derive from it too) and FFmpeg's other errors."""
    import av

    return (OSError, av.error.FFmpegError)


def _pal8_columns() -> list[int]:
    """Which of R, G, B, A each column of a pal8 palette given to PyAV holds: its byte
    order has changed between PyAV versions, so it is read off a probe frame."""
    import av

    probe = np.zeros((256, 4), np.uint8)
    probe[0] = (0, 1, 2, 3)
    # pal8 takes (indices, palette); PyAV's stubs know only the single array
    seen = av.VideoFrame.from_ndarray((np.zeros((2, 2), np.uint8), probe),  # type: ignore[arg-type]
                                      format="pal8")
    rgba = seen.to_ndarray(format="rgba")[0, 0]  # rgba[c] = the column that became c
    return [int(np.flatnonzero(rgba == j)[0]) for j in range(4)]


def png_path(folder: Path, k: int) -> Path:
    """Frame k of a PNG sequence."""
    return folder / f"frame_{k:05d}.png"


class PngSequence:
    """Frames as DIR/frame_00000.png, DIR/frame_00001.png, ..."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.count = 0

    def write(self, frame: np.ndarray) -> None:
        from PIL import Image

        path = png_path(self.folder, self.count)
        try:
            Image.fromarray(frame).save(path)
        except OSError as e:
            raise cannot_write("--frames", path, e) from None
        self.count += 1

    def close(self) -> None:
        pass


def decode(path: str | Path) -> list[np.ndarray]:
    """Every frame of a film as (h, w, 3) uint8 (for tests and checks: holds them all)."""
    import av

    with av.open(str(path)) as box:
        return [f.to_ndarray(format="rgb24") for f in box.decode(video=0)]
