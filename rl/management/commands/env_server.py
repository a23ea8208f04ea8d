"""``manage.py env_server``: serve a project's devices to RL trainers, in OpenEnv's protocol.

Trainers connect with OpenEnv's ``EnvClient`` (``rl.client.WaypointEnv``) or Gymnasium's API
(``rl.gymnasium_env``) and one of the API's tokens. Each session leases a device of the
project's pool (every connected device of the project on any adb server of ``ADB_SERVERS``, or
``--serials``) per episode; ``--virtual N`` starts N virtual devices for the server's life.
"""

from __future__ import annotations

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.management.local_runs import VirtualPool
from agents.suites import select_templates
from devices.virtual.apps import all_templates
from rl.episode import Setup, reap_lost_rollouts
from rl.server import build_app
from rl.serving import uvicorn_config
from rl.sessions import stale_s
from trajectories.models import Project
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Serve a project's devices to RL trainers (OpenEnv's protocol, STAMP's rewards)."

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="the project's id")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument(
            "--tasks",
            default="short",
            help="the templates a reset may pose: ids, comma-separated, or memory, short, all, "
            "app:SLUG (default: short)",
        )
        parser.add_argument("--serials", help="only these devices of the project, comma-separated")
        parser.add_argument(
            "--virtual", type=int, default=0, help="start N virtual devices for the server"
        )
        parser.add_argument("--size", default=settings.WAYPOINT_VIRTUAL_SIZE)
        parser.add_argument("--max-sessions", type=int, default=settings.WAYPOINT_RL_MAX_SESSIONS)
        parser.add_argument(
            "--idle", type=float, default=settings.WAYPOINT_RL_IDLE_S, help="seconds"
        )
        parser.add_argument(
            "--wait", type=float, default=settings.WAYPOINT_RL_DEVICE_WAIT_S, help="seconds"
        )

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']}")
        try:
            tasks = tuple(select_templates(options["tasks"]))
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        known = {t.id for t in all_templates()}
        unknown = [t for t in tasks if t not in known]
        if unknown or not tasks:
            raise CommandError(f"--tasks: unknown templates {', '.join(map(repr, unknown))}")
        for name in ("max_sessions", "idle", "wait"):
            if options[name] <= 0:
                raise CommandError(f"--{name.replace('_', '-')}: must be more than 0")
        if not 0 <= options["virtual"] <= 16:
            raise CommandError("--virtual: from 0 to 16")
        serials = tuple(s.strip() for s in (options["serials"] or "").split(",") if s.strip())
        with VirtualPool(options["virtual"], options["size"], project) as started:
            setup = Setup(
                project=project,
                tasks=tasks,
                devices=serials or tuple(started),
                default_steps=settings.WAYPOINT_AGENT_MAX_STEPS,
            )
            reaped = reap_lost_rollouts(stale_s())
            if reaped:
                self.stdout.write(f"{reaped} rollouts of a server that stopped ended as lost")
            app = build_app(
                setup,
                max_sessions=options["max_sessions"],
                idle_s=options["idle"],
                wait_s=options["wait"],
            )
            where = f"http://{options['host']}:{options['port']}"
            self.stdout.write(
                f"Waypoint RL environment server for project {project.pk} at {where} "
                f"({len(tasks)} tasks, {len(setup.pool())} devices now, up to "
                f"{options['max_sessions']} sessions)",
            )
            self.stdout.flush()
            uvicorn.Server(uvicorn_config(app, options["host"], options["port"])).run()
