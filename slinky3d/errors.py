"""User-facing errors: each carries one clear sentence, printed without a traceback;
and the command line's notes on stderr."""

import sys


def one_line(text: str) -> str:
    """text with its line breaks written as escapes (a user's key or value may hold them)."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def note(text: str) -> None:
    """A one-line note to the user on stderr, `slinky3d: text` (stdout keeps the
    results)."""
    print(f"slinky3d: {one_line(text)}", file=sys.stderr, flush=True)


def error_line(e: BaseException) -> str:
    """An exception as one line for a log or a status: its type and its message, white
    space folded."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class SlinkyError(Exception):
    """Base of the errors the command line prints as one line (exit status 2)."""


class SceneError(SlinkyError, ValueError):
    """A scene file or override is invalid; the message names the file and the key."""

    def __init__(self, where: str, key: str, message: str):
        self.where, self.key = where, key
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        super().__init__(one_line(text))


class ShaderError(SlinkyError):
    """A GLSL program failed to compile or link; the message names the file and line."""
