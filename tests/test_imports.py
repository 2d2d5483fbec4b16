"""The package's imports: every module imports, and no module reaches itself again
through the modules it imports (a cycle), whether it imports them at the top or inside
a function (docs/architecture.md, "Import direction")."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "slinky3d"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, known: set[str]) -> set[str]:
    """The package's modules that `path` imports anywhere in it (the top, functions,
    TYPE_CHECKING blocks): `from a.b import c` names a.b.c when that is a module, else
    a.b; a relative import is resolved against the module's own package."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            targets = [f"{base}.{a.name}" for a in node.names]
            targets = [t if t in known else base for t in targets]
        else:
            continue
        for t in targets:
            while t and t not in known:  # `import a.b.c` of a name inside a module
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports(p, known) for m, p in mods.items()}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `g` as a path a -> ... -> a, or None (depth-first, three colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(g.get(m, ())):
            if n == m.rpartition(".")[0]:
                continue  # a module naming its own package's __init__ (a docstring only)
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_checker_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_imports_inside_functions():
    g = graph()
    assert set(g) == set(modules())
    # cli imports the viewer's jobs inside its command functions (no pyglet, no GL for
    # the commands that need neither)
    assert "slinky3d.viewer.jobs" in g["slinky3d.cli"]


def test_no_import_cycle_in_the_package():
    cycle = find_cycle(graph())
    assert cycle is None, " -> ".join(cycle or ())


def test_every_module_imports():
    for name in modules():
        if not name.endswith("__main__"):  # runs the command line
            importlib.import_module(name)


def test_viewer_classes_inherit_at_most_one_project_class():
    """The viewer composes its parts: no class of it has two project base classes (the
    mixins the window was once made of), and the kiosk is not a kind of window."""
    import inspect

    from slinky3d.viewer.app.window import Viewer
    from slinky3d.viewer.kiosk.exhibit import Kiosk

    for name in modules():
        if not name.startswith("slinky3d.viewer"):
            continue
        module = importlib.import_module(name)
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name:
                continue
            ours = [b for b in cls.__bases__ if b.__module__.startswith("slinky3d")]
            assert len(ours) <= 1, (name, cls_name, ours)
    assert not issubclass(Kiosk, Viewer)
    assert Viewer.__bases__ == (object,)
