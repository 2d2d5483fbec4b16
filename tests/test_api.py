"""The public API: every name imports, `import slinky3d` stays light, the README's example runs."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import slinky3d

ROOT = Path(__file__).resolve().parent.parent


def first_python_block(path: Path) -> str:
    """The first ```python fenced block of a markdown file."""
    m = re.search(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.M | re.S)
    assert m, f"{path} has no ```python block"
    return m.group(1)


def test_every_public_name_imports():
    for name in slinky3d.__all__:
        assert getattr(slinky3d, name) is not None, name
    assert set(slinky3d.__all__) <= set(dir(slinky3d))


def test_import_is_light_and_the_main_names_load():
    code = ("import sys, slinky3d; heavy = [m for m in ('numba', 'scipy', 'moderngl', "
            "'pyglet', 'matplotlib') if m in sys.modules]; "
            "from slinky3d import load_scene, Simulation, SimThread; print(heavy)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_the_readme_example_runs(capsys):
    namespace: dict = {}
    exec(compile(first_python_block(ROOT / "README.md"), "README.md", "exec"), namespace)
    assert "t = 1.00 s" in capsys.readouterr().out
    sim = namespace["sim"]
    ends = sim.snapshot().slinkies[0].ends
    assert np.all(np.isfinite(ends))
    # The pull moved the bottom end from where it hung toward the target, and the
    # anchored top end stayed where it is held.
    start = sim.scene.slinkies[0]
    from slinky3d.model import chain

    hung = chain.end_points(start.q0, start.params.R)
    target = np.array([0.2, -0.4])
    assert np.linalg.norm(ends[-1] - target) < 0.5 * np.linalg.norm(hung[-1] - target)
    assert np.allclose(ends[0], hung[0])


def test_load_scene_takes_the_documented_keywords():
    # docs/api.md: load_scene(name_or_path, overrides=())
    sc = slinky3d.load_scene(name_or_path="1Pa", overrides=["slinky.C_D=0"])
    assert sc.slinkies[0].params.C_D == 0.0
    assert slinky3d.load_scene("1Pa").slinkies[0].params.C_D > 0.0


def test_citation_names_the_package_version():
    # CITATION.cff cannot read slinky3d/version.py, so this keeps the two in step.
    m = re.search(r'^version:\s*"?([^"\n]+)"?$', (ROOT / "CITATION.cff").read_text(), re.M)
    assert m and m.group(1) == slinky3d.__version__
