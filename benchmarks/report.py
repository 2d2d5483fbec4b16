"""Benchmarks write their figures as JSON beside what they print.

Each run writes `benchmarks/results/NAME.json`: the date, the commit, the machine and
the figures. `docs/benchmarks.md`'s tables are made from these files
(`python benchmarks/tables.py`).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _commit() -> str:
    """The checkout's commit, with "+dirty" when it has uncommitted changes."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": platform.system()}


def write(name: str, figures: dict[str, Any], out_dir: Path | None = None) -> Path:
    """Write one benchmark's figures; returns the file's path."""
    folder = out_dir or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": name,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": machine(),
        "figures": figures,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"figures written to {path}")
    return path
