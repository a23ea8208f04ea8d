"""Which scripted solver plays a template: its own (``agents/solvers.py``) or its family's (every
``chain-*`` template, ``agents/chains.py``). Importing both here registers every script."""

from __future__ import annotations

from . import (
    chains,  # noqa: F401  (registers the chain-* family)
    solvers,
)
from .base import Agent


def has_solver(template_id: str) -> bool:
    """Whether a script solves the template (its own, or its family's)."""
    return template_id in solvers.SOLVERS or any(
        template_id.startswith(prefix) and len(template_id) > len(prefix)
        for prefix in solvers.FAMILIES
    )


def solver_for(template_id: str) -> Agent:
    """A new solver agent for the template; KeyError names the templates that have one."""
    if template_id in solvers.SOLVERS:
        return solvers.SOLVERS[template_id]()
    for prefix, script in solvers.FAMILIES.items():
        if template_id.startswith(prefix) and len(template_id) > len(prefix):
            return solvers.ScriptedSolver(template_id, script)
    families = "".join(f", and every {prefix}* one" for prefix in solvers.FAMILIES)
    raise KeyError(
        f"no scripted solver for template {template_id!r} (there are "
        f"{len(solvers.SOLVERS)}{families})"
    )
