"""``manage.py endpoints``: register, list and remove named model endpoints.

manage.py endpoints add NAME --url https://models.example/v1 --model M [--project ID]
                        [--key-env VAR | --key-stdin]
manage.py endpoints list [--project ID]
manage.py endpoints remove NAME [--project ID]

The key is read from an environment variable or standard input, never from the command line
(where a process list or a shell history would keep it), and is never printed.
"""

from __future__ import annotations

import os
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from agents.endpoints import (
    access_endpoint,
    do_register_endpoint,
    do_remove_endpoint,
    endpoint_row,
    endpoints_for,
)
from trajectories.access import AccessDenied
from trajectories.models import Project
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Register, list and remove the model endpoints agent specs name (endpoint=NAME)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["add", "list", "remove"])
        parser.add_argument("name", nargs="?", help="add, remove: the endpoint's name")
        parser.add_argument("--url", help="add: the API's base URL, e.g. https://host/v1")
        parser.add_argument("--model", help="add: the model its requests name")
        parser.add_argument("--project", type=int, help="a project's endpoint, not the site's")
        parser.add_argument("--key-env", help="add: read the key from this environment variable")
        parser.add_argument("--key-stdin", action="store_true", help="add: read it from stdin")
        parser.add_argument("--user", help="the site admin acting (default: the first one)")

    def handle(self, *args, action, name, **options):
        project = None
        if options["project"] is not None:
            project = Project.objects.filter(pk=options["project"]).first()
            if project is None:
                raise CommandError(f"no project {options['project']}")
        if action == "list":
            for endpoint in endpoints_for(project):
                row = endpoint_row(endpoint)
                key = "key" if row["has_key"] else "no key"
                self.stdout.write(
                    f"{row['name']}\t{row['scope']}\t{row['url']}\t{row['model']}\t{key}"
                )
            return
        if not name:
            raise CommandError(f"{action}: give the endpoint's NAME")
        user = self.site_admin(options["user"])
        try:
            if action == "add":
                endpoint = do_register_endpoint(
                    user,
                    name=name,
                    url=options["url"],
                    model=options["model"],
                    api_key=self.key(options),
                    project=project,
                )
                self.stdout.write(f"Registered {endpoint.scope} endpoint {endpoint.name}")
            else:
                do_remove_endpoint(user, access_endpoint(project, name))
                self.stdout.write(f"Removed endpoint {name}")
        except (InvalidData, AccessDenied) as exc:
            raise CommandError(str(exc)) from None

    def site_admin(self, username: str | None):
        users = get_user_model().objects.filter(Q(is_staff=True) | Q(is_superuser=True))
        users = users.filter(is_active=True)
        user = users.filter(username=username).first() if username else users.order_by("pk").first()
        if user is None:
            raise CommandError(
                f"no site admin {username!r}" if username else "no site admin: create one first"
            )
        return user

    def key(self, options) -> str:
        if options["key_env"] and options["key_stdin"]:
            raise CommandError("add: give --key-env or --key-stdin, not both")
        if options["key_env"]:
            if options["key_env"] not in os.environ:
                raise CommandError(f"add: the environment has no {options['key_env']}")
            return os.environ[options["key_env"]]
        if options["key_stdin"]:
            return sys.stdin.readline().strip()
        return ""
