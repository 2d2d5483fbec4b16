"""GLSL files -> compiled programs, with errors that name the file and line.

One file per program; `#if defined VERTEX_SHADER` / `FRAGMENT_SHADER` sections pick the
stage and `#include "x.glsl"` pastes shared code. `preprocess` is plain text (tested
without GL) and keeps a map from every line it emits back to (file, line): drivers
disagree on `#line` with a source-string number (Mesa drops it), so we map ourselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from slinky3d.errors import ShaderError
from slinky3d.resources import shader_path

VERSION = "#version 330 core"
STAGES = {"vertex": "VERTEX_SHADER", "fragment": "FRAGMENT_SHADER"}
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
# Mesa: "0:12(5): error: ..."; NVIDIA: "0(12) : error C0000: ..."; others similar.
_LOG = [re.compile(r"^\s*\d+:(\d+)\(\d+\):\s*(.*)$"), re.compile(r"^\s*\d+\((\d+)\)\s*:\s*(.*)$"),
        re.compile(r"^\s*ERROR:\s*\d+:(\d+):\s*(.*)$")]


@dataclass(frozen=True)
class Source:
    """One stage's GLSL text and, for line i (1-based), where it came from: origin[i-1]."""

    text: str
    origin: tuple[tuple[str, int], ...]
    main: str  # the program's own file

    def locate(self, line: int) -> tuple[str, int]:
        if 1 <= line <= len(self.origin):
            return self.origin[line - 1]
        return (self.main, line)


def preprocess(
    name: str, stage: str, defines: dict[str, str] | None = None, root: Path | None = None
) -> Source:
    """The `stage` ("vertex" | "fragment") source of shader file `name`, includes pasted."""
    if stage not in STAGES:
        raise ValueError(f"unknown shader stage {stage!r}")
    lines = [VERSION, f"#define {STAGES[stage]}"]
    lines += [f"#define {k} {v}".rstrip() for k, v in (defines or {}).items()]
    origin = [("<generated>", i + 1) for i in range(len(lines))]
    _paste(name, root, lines, origin, seen=set())
    main = str((root / name) if root else shader_path(name))
    return Source("\n".join(lines) + "\n", tuple(origin), main)


def _paste(name: str, root: Path | None, lines: list, origin: list, seen: set) -> None:
    path = (root / name) if root else shader_path(name)
    if name in seen:
        return  # each include once: shared code has no guards of its own
    seen.add(name)
    try:
        text = path.read_text()
    except OSError as e:
        raise ShaderError(f"shader file {path}: cannot read ({e.strerror})") from None
    for i, line in enumerate(text.splitlines(), start=1):
        m = _INCLUDE.match(line)
        if m:
            _paste(m.group(1), root, lines, origin, seen)
            continue
        if line.lstrip().startswith("#version"):
            raise ShaderError(f"{path}:{i}: #version is added by the loader; remove it")
        lines.append(line)
        origin.append((str(path), i))


def explain(log: str, source: Source, stage: str) -> str:
    """The driver's compile log as 'file:line: stage shader: message' (first error)."""
    found = []
    for raw in log.splitlines():
        for pat in _LOG:
            m = pat.match(raw)
            if m:
                file, line = source.locate(int(m.group(1)))
                found.append(f"{file}:{line}: {stage} shader: {m.group(2).strip()}")
                break
    if not found:
        return f"{source.main}: {stage} shader: {log.strip() or 'compile failed'}"
    errors = [f for f in found if "error" in f.lower()] or found
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return errors[0] + more


def program(ctx, name: str, defines: dict[str, str] | None = None,
            varyings: tuple[str, ...] = (), root: Path | None = None):
    """Compile and link shader file `name`; a failure raises ShaderError (file:line: ...)."""
    import moderngl

    vs = preprocess(name, "vertex", defines, root)
    fs = None if varyings else preprocess(name, "fragment", defines, root)
    try:
        return ctx.program(vertex_shader=vs.text, fragment_shader=fs.text if fs else None,
                           varyings=varyings)
    except moderngl.Error as e:
        msg = str(e)
    # moderngl's log: "GLSL Compiler failed\n\nfragment_shader\n=====\n<driver log>".
    if "Compiler failed" in msg:
        stage = "fragment" if "fragment_shader" in msg.split("=")[0] else "vertex"
        src = fs if stage == "fragment" and fs else vs
        raise ShaderError(explain(msg.split("=\n", 1)[-1], src, stage))
    raise ShaderError(f"{vs.main}: linking {name} failed: {_first_line(msg)}")


def _first_line(msg: str) -> str:
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip() and not ln.startswith("=")]
    return " ".join(lines[:3])
