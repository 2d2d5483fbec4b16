"""Rewrite docs/benchmarks.md's generated tables from benchmarks/results/*.json.

    python benchmarks/tables.py [--results benchmarks/results] [--doc docs/benchmarks.md]

Each `NAME.json` (written by report.write) fills the region between
`<!-- begin generated: NAME -->` and `<!-- end generated: NAME -->`: a line with the
date, the commit and the machine, then its figures. Scalar figures make one two-column
table; a list of records (dicts) makes a table with a column per key; a dict of
records makes the same with the dict's keys as the first column; any other dict is a
section of its own, rendered the same way under its name. Anything else is written
as one value. Regions without a JSON file are left as they are.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
_REGION = re.compile(r"(<!-- begin generated: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)"
                     r"(<!-- end generated: (?P=name) -->)", re.S)


def cell(v: Any) -> str:
    """One value as table text."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if v is None:
        return ""
    if isinstance(v, list | tuple):
        return ", ".join(cell(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k} {cell(x)}" for k, x in v.items())
    return str(v).replace("|", "\\|").replace("\n", " ")


UNITS = ("m", "s", "ms", "us", "J", "Hz", "R")  # a key's last word in these is its unit


def label(key: str) -> str:
    """A JSON key as a column heading: words, not underscores, the unit in brackets
    ("time_s" -> "time (s)")."""
    words = key.split("_")
    if len(words) > 1 and words[-1] in UNITS:
        return " ".join(words[:-1]) + f" ({words[-1]})"
    return " ".join(words)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def records(rows: list[dict[str, Any]], first: str | None = None,
            keys: list[str] | None = None) -> str:
    """A table of records, one column per key (in order of first appearance)."""
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    header = ([first] if first else []) + [label(c) for c in cols]
    body = [([keys[i]] if keys else []) + [cell(r.get(c)) for c in cols]
            for i, r in enumerate(rows)]
    return table(header, body)


def _is_records(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(r, dict) for r in v)


def _is_record_map(v: Any) -> bool:
    return isinstance(v, dict) and bool(v) and all(isinstance(r, dict) for r in v.values())


def machine_line(doc: dict[str, Any]) -> str:
    m = doc.get("machine") or {}
    what = ", ".join(str(x) for x in (
        m.get("cpu"), f"{m['cores']} cores" if m.get("cores") else None,
        f"Python {m['python']}" if m.get("python") else None, m.get("system")) if x)
    return (f"Measured {doc.get('date', '?')} at commit `{doc.get('commit', '?')}` on "
            f"{what or 'an unknown machine'}.\n")


def section(figures: dict[str, Any]) -> list[str]:
    """Markdown parts for a dict of figures: its scalars, then its tables and sections."""
    def nested(v: Any) -> bool:
        return isinstance(v, dict) and not _is_record_map(v)

    scalars = {k: v for k, v in figures.items()
               if not (_is_records(v) or _is_record_map(v) or nested(v))}
    parts = []
    if scalars:
        parts.append(table(["figure", "value"], [[label(k), cell(v)] for k, v in
                                                 scalars.items()]))
    for k, v in figures.items():
        if _is_records(v):
            parts.append(f"**{label(k)}**\n\n" + records(v))
        elif _is_record_map(v):
            parts.append(f"**{label(k)}**\n\n" + records(list(v.values()), first=label(k),
                                                       keys=list(v)))
        elif nested(v):
            parts.append(f"**{label(k)}**\n")
            parts += section(v)
    return parts


def render(doc: dict[str, Any]) -> str:
    """The markdown for one benchmark's JSON document."""
    return "\n".join([machine_line(doc), *section(doc.get("figures") or {})])


def rewrite(markdown: str, blocks: dict[str, str]) -> tuple[str, list[str]]:
    """`markdown` with each named region's body replaced; also the names filled."""
    filled: list[str] = []

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in blocks:
            return m.group(0)
        filled.append(name)
        return m.group(1) + blocks[name].rstrip("\n") + "\n" + m.group(4)

    return _REGION.sub(fill, markdown), filled


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of NAME.json files")
    ap.add_argument("--doc", type=Path, default=DOC, help="markdown file to rewrite")
    a = ap.parse_args(argv)
    blocks = {}
    for path in sorted(a.results.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        blocks[doc.get("benchmark") or path.stem] = render(doc)
    text, filled = rewrite(a.doc.read_text(encoding="utf-8"), blocks)
    a.doc.write_text(text, encoding="utf-8")
    for name in sorted(set(blocks) - set(filled)):
        print(f"{a.doc}: no generated region for {name}", file=sys.stderr)
    print(f"{a.doc}: {len(filled)} table region(s) rewritten ({', '.join(filled) or 'none'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
