"""Permission-checked getters: an exploration is seen by its project's members; only the
project's admins (and site admins) may allow what its deny-lists forbid."""

from __future__ import annotations

from typing import Any

from django.http import Http404

from devices.access import is_site_admin
from trajectories.access import AccessDenied, projects_of, role_in
from trajectories.models import Project, Role
from trajectories.validation import InvalidData

from .elements import check_deny_entries
from .models import Exploration

ALLOW_DENIED = (
    "allow: only the project's admins may allow what its deny-lists forbid; start the "
    "exploration without allow, or ask an admin"
)


def access_exploration(user, exploration_id) -> Exploration:
    try:
        return Exploration.objects.select_related("project", "graph", "job", "created_by").get(
            pk=exploration_id, project__in=projects_of(user)
        )
    except (Exploration.DoesNotExist, ValueError, TypeError, OverflowError):
        raise Http404("No such exploration") from None


def may_allow(user, project: Project) -> bool:
    """Whether the user may start an exploration that allows deny-listed elements: the deny-lists
    are the admins' (``PUT .../deny-lists/<app>``), and so is overriding them."""
    return is_site_admin(user) or role_in(project, user) == Role.ADMIN


def check_allow(user, project: Project, allow: Any) -> None:
    """Refuse a non-empty ``allow`` (a list, or texts by commas) from anyone but an admin."""
    try:
        given = bool(check_deny_entries(allow, "allow"))
    except InvalidData:  # not a valid allow-list, but not nothing either
        given = True
    if given and not may_allow(user, project):
        raise AccessDenied(ALLOW_DENIED)
