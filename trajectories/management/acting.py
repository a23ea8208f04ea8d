"""Who a management command acts as in a project."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from trajectories.models import Project


def acting_user(project: Project, username: str | None, doing: str = "runs it"):
    """The user named with ``--user``, else the project's creator; CommandError saying which
    is missing (``doing``: what the user does, for the message)."""
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        return user
    if project.created_by is None:
        raise CommandError(f"the project has no creator: name who {doing} with --user")
    return project.created_by
