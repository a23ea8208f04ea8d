"""Which scripted solver plays a template: its own (``agents/solvers.py``), its family's (every
``chain-*`` template, ``agents/chains.py``), or for the task of an installed app package (a
generated environment) the generic solver following its plan (``agents/spec_solver.py``).
Importing them here registers every script."""

from __future__ import annotations

from devices.services.packages import package_plan

from . import (
    chains,  # noqa: F401  (registers the chain-* family)
    solvers,
)
from .base import Agent
from .spec_solver import spec_solver


def has_solver(template_id: str) -> bool:
    """Whether a script solves the template (its own, or its family's)."""
    return (
        template_id in solvers.SOLVERS
        or any(
            template_id.startswith(prefix) and len(template_id) > len(prefix)
            for prefix in solvers.FAMILIES
        )
        or package_plan(template_id) is not None
    )


def solver_for(template_id: str) -> Agent:
    """A new solver agent for the template; KeyError names the templates that have one."""
    if template_id in solvers.SOLVERS:
        return solvers.SOLVERS[template_id]()
    for prefix, script in solvers.FAMILIES.items():
        if template_id.startswith(prefix) and len(template_id) > len(prefix):
            return solvers.ScriptedSolver(template_id, script)
    plan = package_plan(template_id)
    if plan is not None:
        return spec_solver(template_id, plan)
    families = "".join(f", and every {prefix}* one" for prefix in solvers.FAMILIES)
    raise KeyError(
        f"no scripted solver for template {template_id!r} (there are "
        f"{len(solvers.SOLVERS)}{families})"
    )
