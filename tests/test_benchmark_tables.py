"""benchmarks/tables.py: JSON results become the generated tables of a markdown file."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(name: str):
    """A script of benchmarks/ as a module (that folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as a plain import would: dataclasses look themselves up
    spec.loader.exec_module(module)
    return module


DOC = """# Benchmarks

Intro stays.

<!-- begin generated: fast -->
old text, replaced
<!-- end generated: fast -->

Between stays.

<!-- begin generated: missing -->
kept: no JSON for this one
<!-- end generated: missing -->
"""


def test_tables_fill_the_regions_from_json(tmp_path, capsys):
    report, tables = load("report"), load("tables")
    results = tmp_path / "results"
    figures = {"speed_x": 66.5, "steps": 750, "ok": True, "scene": "4S",
               "per_n": [{"N": 75, "factor": 120.5}, {"N": 157, "factor": 66.5, "note": "a|b"}],
               "scenes": {"1Pa": {"wall_s": 0.02}, "4S": {"wall_s": 0.045}},
               "versus_n": {"scene": "steel", "rows": [{"N": 300, "us": 7.5}]}}
    report.write("fast", figures, out_dir=results)
    doc = json.loads((results / "fast.json").read_text())
    assert doc["benchmark"] == "fast" and doc["figures"] == figures
    assert {"date", "commit", "machine"} <= set(doc)
    md = tmp_path / "benchmarks.md"
    md.write_text(DOC)
    assert tables.main(["--results", str(results), "--doc", str(md)]) == 0
    out = md.read_text()
    assert "old text" not in out
    assert "Intro stays." in out and "Between stays." in out
    assert "kept: no JSON for this one" in out
    region = out.split("<!-- begin generated: fast -->\n")[1].split("<!-- end generated")[0]
    assert f"commit `{doc['commit']}`" in region and doc["date"] in region
    assert "| speed x | 66.5 |" in region and "| steps | 750 |" in region
    assert "| ok | yes |" in region and "| scene | 4S |" in region
    # A list of records: one column per key, missing cells empty, pipes escaped.
    assert "| N | factor | note |" in region
    assert "| 75 | 120.5 |  |" in region and "| 157 | 66.5 | a\\|b |" in region
    # A dict of records: its keys make the first column.
    assert "| scenes | wall (s) |" in region and "| 1Pa | 0.02 |" in region
    # Any other dict is a section of its own: its scalars, then its tables.
    section = region[region.index("**versus n**"):]
    assert "| scene | steel |" in section and "| N | us |" in section
    assert "| 300 | 7.5 |" in section
    # Running again changes nothing.
    tables.main(["--results", str(results), "--doc", str(md)])
    assert md.read_text() == out
    assert "1 table region(s) rewritten (fast)" in capsys.readouterr().out


def test_every_result_fills_its_region_of_the_benchmarks_page(tmp_path, capsys):
    """Each benchmarks/results/NAME.json is named for its benchmark and has a region in
    docs/benchmarks.md, and the page is as tables.py writes it (no table by hand)."""
    tables = load("tables")
    for path in tables.RESULTS.glob("*.json"):
        assert json.loads(path.read_text(encoding="utf-8"))["benchmark"] == path.stem
    page = tmp_path / "benchmarks.md"
    page.write_text(tables.DOC.read_text(encoding="utf-8"), encoding="utf-8")
    assert tables.main(["--doc", str(page)]) == 0
    assert "no generated region" not in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == tables.DOC.read_text(encoding="utf-8")
