"""No HTML is written in Python: pages and their parts are templates, escaped by the engine.

A string constant of the apps' Python that opens an HTML or SVG element, or a call that marks
text safe (``mark_safe``, ``format_html``, ``SafeString``...), fails this test with its place.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.packages import PACKAGES as APPS
from tests.packages import ROOT

# HTML's and SVG's elements, as a tag opens them: ``<div``, ``<svg class=…``, ``<br/>``.
ELEMENTS = (
    "a abbr article aside audio b blockquote body br button canvas caption circle code col "
    "colgroup datalist dd defs details dialog div dl dt ellipse em fieldset figcaption figure "
    "footer form g h1 h2 h3 h4 h5 h6 head header hr html i iframe img input kbd label legend li "
    "line link main marker mark meta nav ol optgroup option p path pattern polygon polyline pre "
    "rect script section select small span strong style sub summary sup svg table tbody td "
    "template text textarea tfoot th thead title tr tspan u ul use video"
).split()
OPENING_TAG = re.compile(rf"<({'|'.join(ELEMENTS)})(?=[\s/>])", re.IGNORECASE)
SAFE_MARKERS = {
    "mark_safe",
    "format_html",
    "format_html_join",
    "SafeString",
    "SafeText",
    "SafeData",
    "html_safe",
}


def python_files() -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
    )


def html_in(source: str, name: str) -> list[str]:
    """Where ``source`` writes HTML or marks text safe, as ``name:line: what``."""
    tree = ast.parse(source, name)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            tag = OPENING_TAG.search(node.value)
            if tag:
                found.append(f"{name}:{node.lineno}: a string opens <{tag.group(1)}>")
        elif isinstance(node, ast.Name | ast.Attribute):
            used = node.id if isinstance(node, ast.Name) else node.attr
            if used in SAFE_MARKERS:
                found.append(f"{name}:{node.lineno}: {used}")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in SAFE_MARKERS:
                    found.append(f"{name}:{node.lineno}: imports {alias.name}")
    return found


def test_no_python_module_of_the_apps_writes_html():
    files = python_files()
    assert len(files) > 100  # the apps were found
    found = []
    for path in files:
        found += html_in(path.read_text(), str(path.relative_to(ROOT)))
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        'ROW = "<tr><td>{}</td></tr>"',
        "def f(x):\n    return f'<li class=\"a\">{x}</li>'",
        "SHAPE = '<svg xmlns=\"http://www.w3.org/2000/svg\"/>'",
        "SHAPE = (\n    '<rect x=\"1\"'\n    ' y=\"2\"/>'\n)",
        "from django.utils.html import format_html\n",
        "from django.utils.safestring import SafeString\n",
        "import django.utils.safestring as s\nvalue = s.mark_safe(x)",
        "def f(x):\n    return format_html_join('', '{}', x)",
    ],
)
def test_it_finds_html_written_in_python(source):
    assert html_in(source, "app.py")


@pytest.mark.parametrize(
    "source",
    [
        '"""A page: ``<div id="x">`` is in the template."""',
        'LIMIT = "keep a < b and b > c"',
        'ARROW = "a <- b"',
        "prompt = 'Answer in <think>…</think> then <tool_call>{}</tool_call>'",
        'render(request, "annotate/workspace.html", context)',
    ],
)
def test_it_leaves_text_that_is_not_html_alone(source):
    assert html_in(source, "app.py") == []
