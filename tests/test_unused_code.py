"""Every function and class of ours is used somewhere: code nothing calls is removed."""

from __future__ import annotations

import ast
import re
from collections import Counter

from tests.packages import PACKAGES, ROOT

SUFFIXES = (".py", ".html", ".js", ".toml", ".cfg")


def test_every_function_and_class_is_used_somewhere():
    places = [ROOT / folder for folder in (*PACKAGES, "tests", "bench")]
    texts = [
        path.read_text(encoding="utf-8", errors="ignore")
        for folder in places
        for path in folder.rglob("*")
        if path.suffix in SUFFIXES and path.is_file() and "migrations" not in path.parts
    ]
    texts += [path.read_text(encoding="utf-8") for path in ROOT.glob("*.toml")]
    words = Counter(word for text in texts for word in re.findall(r"\w+", text))
    unused = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    continue
                if node.decorator_list or node.name.startswith("__"):
                    continue  # registered by its decorator (tags, signals, tasks)
                if isinstance(node, ast.ClassDef) and any(
                    ast.unparse(base).endswith("AppConfig") for base in node.bases
                ):
                    continue  # Django finds it in the app's module
                if words[node.name] <= 1:
                    unused.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert unused == []
