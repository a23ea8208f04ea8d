"""Named model endpoints: the only way an agent spec reaches a model other than the default.

A site admin registers an endpoint (name, URL, model, key) for every project; where
``WAYPOINT_PROJECT_ENDPOINTS`` allows it, a project's admin registers one for that project. An
agent spec names it (``openai:mobile_use,endpoint=NAME``): the project's endpoint of that name,
else the site's. Without ``endpoint=`` an agent uses the environment's ``LLM_*``. Nobody types a
URL into a spec, so no member can send the server's keys (or its requests) where they like; the
key is sent to its own endpoint only (:mod:`core.llm`) and no API, page or log shows it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet

from core.llm import LLMError, check_url
from devices.access import is_site_admin
from trajectories import events
from trajectories.access import AccessDenied, role_in
from trajectories.models import Project, Role
from trajectories.services import record_event
from trajectories.validation import InvalidData, check_length, check_no_nul

from .models import ModelEndpoint

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Endpoint:
    """What a chat agent is built from: a registered endpoint, or the environment's default
    (``name`` empty)."""

    name: str
    url: str
    model: str
    api_key: str = field(default="", repr=False)
    registered: bool = False


def default_endpoint() -> Endpoint:
    return Endpoint("", settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY)


def check_may_register(user, project: Project | None) -> None:
    """Site admins register the site's endpoints and any project's; a project's admins their
    project's, where the site allows it."""
    if is_site_admin(user):
        return
    if project is None:
        raise AccessDenied("Only site admins register the site's model endpoints")
    if not settings.WAYPOINT_PROJECT_ENDPOINTS:
        raise AccessDenied(
            "Only site admins register model endpoints here (WAYPOINT_PROJECT_ENDPOINTS is off)"
        )
    if role_in(project, user) != Role.ADMIN:
        raise AccessDenied("Only the project's admins register its model endpoints")


def check_endpoint_url(url: Any) -> str:
    """An endpoint's base URL, refused as :func:`core.llm.check_url` would refuse a request."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidData("url: give the API's base URL, e.g. https://models.example/v1")
    url = url.strip().rstrip("/")
    try:
        check_url(url, registered=True)
    except LLMError as exc:
        raise InvalidData(f"url: {exc}") from None
    return url


def _text(value: Any, name: str, longest: int, *, required: bool = True) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidData(f"{name}: must be text")
    value = value.strip()
    if required and not value:
        raise InvalidData(f"{name}: must not be empty")
    check_no_nul(value, name)
    return check_length(value, longest, name)


def do_register_endpoint(
    actor,
    *,
    name: Any,
    url: Any,
    model: Any,
    api_key: Any = "",
    project: Project | None = None,
) -> ModelEndpoint:
    """Register an endpoint (checked), with an audit event that never holds its key."""
    check_may_register(actor, project)
    if not isinstance(name, str) or not NAME.fullmatch(name.strip()):
        raise InvalidData(
            "name: 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter or digit"
        )
    name = name.strip()
    url = check_endpoint_url(url)
    model = _text(model, "model", 200)
    api_key = _text(api_key, "api_key", 500, required=False)
    where = f"project {project.name}" if project else "the site"
    try:
        with transaction.atomic(durable=True):
            endpoint = ModelEndpoint.objects.create(
                project=project,
                name=name,
                url=url,
                model=model,
                api_key=api_key,
                created_by=actor if actor.is_authenticated else None,
            )
            record_event(
                events.ENDPOINT_REGISTERED,
                actor=actor,
                project=project,
                obj=endpoint,
                after={**endpoint_row(endpoint), "created_at": None},
            )
    except IntegrityError:
        raise InvalidData(
            f"name: {where} already has an endpoint {name!r} (remove it first to replace it)"
        ) from None
    return endpoint


def do_remove_endpoint(actor, endpoint: ModelEndpoint) -> None:
    check_may_register(actor, endpoint.project)
    with transaction.atomic(durable=True):
        record_event(
            events.ENDPOINT_REMOVED,
            actor=actor,
            project=endpoint.project,
            obj=endpoint,
            before={**endpoint_row(endpoint), "created_at": None},
        )
        endpoint.delete()


def endpoints_for(project: Project | None) -> QuerySet[ModelEndpoint]:
    """The endpoints a project's specs may name: its own and the site's (the site's alone for
    ``None``)."""
    found = Q(project__isnull=True)
    if project is not None:
        found |= Q(project=project)
    return ModelEndpoint.objects.filter(found).select_related("project")


def access_endpoint(project: Project | None, name: str) -> ModelEndpoint:
    """The endpoint ``name`` registered for ``project`` (the site's for ``None``), for removal."""
    found = ModelEndpoint.objects.filter(project=project, name=str(name)).first()
    if found is None:
        raise InvalidData(f"endpoint: no endpoint named {name!r} here")
    return found


def endpoint_named(project: Project, name: str) -> ModelEndpoint:
    """The project's endpoint ``name``, else the site's."""
    rows = {(e.project_id is not None, e.name): e for e in endpoints_for(project).filter(name=name)}
    found = rows.get((True, name)) or rows.get((False, name))
    if found is None:
        known = sorted({e.name for e in endpoints_for(project)})
        listed = ", ".join(known) if known else "none registered"
        raise InvalidData(f"agent: no model endpoint named {name!r} (the project's: {listed})")
    return found


def endpoint_row(endpoint: ModelEndpoint) -> dict[str, Any]:
    """An endpoint as every API shows it: never its key, only whether it has one."""
    return {
        "name": endpoint.name,
        "scope": endpoint.scope,
        "url": endpoint.url,
        "model": endpoint.model,
        "has_key": bool(endpoint.api_key),
        "created_at": endpoint.created_at.isoformat() if endpoint.created_at else None,
    }


def resolve_endpoint(project: Project, name: str | None) -> Endpoint:
    """What ``endpoint=NAME`` (or its absence: the environment's default) stands for."""
    if not name:
        return default_endpoint()
    found = endpoint_named(project, name)
    return Endpoint(found.name, found.url, found.model, found.api_key, registered=True)
