"""A procedural draft written as an app package: ``index.html`` rendered from the Jinja2
template ``app_templates/app.html`` (autoescaped; no HTML is written in Python), the manifest,
``routes.json`` (its pages and the links between them), STAMP's ``task_spec.json`` and
``scenario.json``. The files' bytes depend on the draft alone, so a package's hash does too.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from devices.virtual.packages import Package, check_files

from .procedural import Draft

TEMPLATES = Path(__file__).resolve().parent / "app_templates"


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def json_bytes(value: Any) -> bytes:
    """JSON as a package stores it: indented, keys in their order, UTF-8."""
    return (json.dumps(value, ensure_ascii=False, indent=1) + "\n").encode()


def routes(draft: Draft) -> dict[str, Any]:
    """The app's pages and the links between them (``explore``'s coverage is scored by them)."""
    tabs = [p["id"] for p in draft.pages["pages"]]
    details = draft.pages["details"]
    links = [[a, b] for a in tabs for b in tabs if a != b]
    for detail in details:
        links += [[detail["tab"], detail["id"]], [detail["id"], detail["tab"]]]
        links += [[detail["id"], t] for t in tabs if t != detail["tab"]]
    info = tabs + [d["id"] for d in details]
    links += [[page, "submit"] for page in info] + [["submit", tabs[0]]]
    return {"pages": [*info, "submit"], "links": links}


def html(draft: Draft) -> str:
    gold = draft.task_spec["task"]["grading"]["gold"]
    example = draft.task_spec["task"]["final_action"]["required_output_format"]
    example = example.rpartition("(e.g. ")[2].rstrip(")") or "your answer"
    return (
        _environment()
        .get_template("app.html")
        .render(
            label=draft.pages["label"],
            style=draft.pages["style"],
            pages=draft.pages["pages"],
            details=draft.pages["details"],
            example=example,
            gold_sha256=hashlib.sha256(gold.encode()).hexdigest(),
        )
    )


def package_of(draft: Draft) -> Package:
    """The draft as a checked app package (``devices/virtual/packages.py``)."""
    files = {
        "manifest.json": json_bytes(draft.manifest),
        "index.html": html(draft).encode(),
        "routes.json": json_bytes(routes(draft)),
        "task_spec.json": json_bytes(draft.task_spec),
        "scenario.json": json_bytes(draft.scenario),
    }
    return check_files(files, f"{draft.slug}: ")
