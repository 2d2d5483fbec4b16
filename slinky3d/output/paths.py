"""Output paths, checked before any work: every command that writes a file (a
trajectory, a figure, a screenshot, a film, a sweep's table and map, a session) asks
here first, so a missing folder or a bad name costs no simulation, and each failure
reads the same whichever command met it:

    OPTION: folder F does not exist
    OPTION: F is a file, not a folder
    OPTION: cannot write P: REASON          (REASON: it is a folder, permission denied...)
    OPTION: unknown KIND extension '.x' of P (known: .a, .b)
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from slinky3d.errors import SlinkyError, one_line

# The reasons a write fails, in words (not Python's "[Errno 13] ..."); others take the
# operating system's own sentence for the error number.
REASONS = {
    errno.EISDIR: "it is a folder",
    errno.ENOTDIR: "a folder on its path is a file",
}


def reason(e: BaseException) -> str:
    """Why a write failed, in one line: a few cases in words, else the operating
    system's sentence for the error (os.strerror), else the message."""
    if isinstance(e, OSError) and e.errno is not None:
        return REASONS.get(e.errno) or one_line(os.strerror(e.errno))
    return one_line(str(getattr(e, "strerror", None) or e))


def cannot_write(option: str, path: Path | str, e: BaseException) -> SlinkyError:
    """The one error of a write that failed, for the checks here and the writers
    (`option` "" where no option named the file)."""
    where = f"{option}: " if option else ""
    return SlinkyError(f"{where}cannot write {path}: {reason(e)}")


def check_folder(folder: Path, option: str, create: bool = False) -> None:
    """A one-line SlinkyError unless `folder` exists (or, with `create`, can be made).
    Whether a file can be written in it is `check_writable`'s question."""
    folder = folder if str(folder) else Path(".")
    if create and not folder.exists():
        try:
            folder.mkdir(parents=True)
        except OSError as e:
            raise SlinkyError(f"{option}: cannot create {folder}: {reason(e)}") from None
    if folder.exists() and not folder.is_dir():
        raise SlinkyError(f"{option}: {folder} is a file, not a folder")
    if not folder.is_dir():
        parent = next((p for p in folder.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            raise SlinkyError(f"{option}: {parent} is a file, not a folder")
        raise SlinkyError(f"{option}: folder {folder} does not exist")


def check_writable(path: Path, option: str) -> None:
    """A one-line SlinkyError unless `path` can be opened for writing now. Tried, not
    guessed: os.access says yes to root everywhere, even on a read-only file system, and
    a writer may open its file only after the simulation has run. A file this creates is
    removed again; an existing one is left as it was (not truncated)."""
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: a FIFO cannot hang it
    created = True
    try:
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            created = False
            fd = os.open(path, flags)
    except OSError as e:
        raise cannot_write(option, path, e) from None
    os.close(fd)
    if created:
        path.unlink()


def check_extension(path: Path, option: str, extensions: Sequence[str], kind: str) -> None:
    """A one-line SlinkyError unless `path` ends in one of `extensions` (lower case,
    with the dot), the format being chosen by it. A device or pipe that exists
    (/dev/null, a FIFO) is taken whatever its name: the bytes go where it says."""
    if path.exists() and not path.is_file() and not path.is_dir():
        return
    if path.suffix.lower() not in extensions:
        raise SlinkyError(f"{option}: unknown {kind} extension {path.suffix or '(none)'!r} "
                          f"of {path} (known: {', '.join(extensions)})")


def check_output(path: Path, option: str, extensions: Sequence[str] = (),
                 kind: str = "file") -> None:
    """Everything about an output file that can be known before the work: its extension
    (when the format follows it), its folder, and that it can be opened for writing."""
    check_folder(path.parent, option)
    if path.is_dir():
        raise cannot_write(option, path, IsADirectoryError(errno.EISDIR, ""))
    if extensions:
        check_extension(path, option, extensions, kind)
    check_writable(path, option)
