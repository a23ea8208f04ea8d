import json

from django.core.management.base import BaseCommand, CommandError

from trajectories.jobs import run_job
from trajectories.models import Project
from trajectories.validation import InvalidData

from ...build import GRANULARITIES, STRUCTURES
from ...embedders import EMBEDDERS
from ...models import MemoryGraph
from ...services import do_build_memory_graph


class Command(BaseCommand):
    help = (
        "Build a project's subgoal memory graph (a new version), or extend one with the "
        "trajectories it does not hold yet. Queues a job for the workers, or runs it here "
        "with --now."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, type=int, help="Project id.")
        parser.add_argument("--tau", type=float, help="State merging threshold (0.9).")
        parser.add_argument("--theta", type=float, help="Duplicate intent threshold (0.9).")
        parser.add_argument("--k", type=int, help="Nodes retrieved per query (1).")
        parser.add_argument("--embedder", choices=sorted(EMBEDDERS))
        parser.add_argument("--structure", choices=STRUCTURES)
        parser.add_argument("--granularity", choices=GRANULARITIES)
        parser.add_argument(
            "--filters", default="{}", help='Trajectory filters as JSON, e.g. {"app": "..."}.'
        )
        parser.add_argument("--approved-only", action="store_true")
        parser.add_argument("--extend", type=int, help="The version of the graph to extend.")
        parser.add_argument("--now", action="store_true", help="Run here instead of a worker.")

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with id {options['project']}")
        try:
            filters = json.loads(options["filters"])
        except ValueError:
            raise CommandError("--filters: not JSON") from None
        names = ("tau", "theta", "k", "embedder", "structure", "granularity")
        params = {name: options[name] for name in names if options[name] is not None}
        extend = None
        if options["extend"] is not None:
            extend = MemoryGraph.objects.filter(project=project, version=options["extend"]).first()
            if extend is None:
                raise CommandError(f"--extend: the project has no graph v{options['extend']}")
        try:
            graph = do_build_memory_graph(
                project,
                None,
                params,
                filters,
                approved_only=options["approved_only"],
                extend=extend,
                queue=not options["now"],
            )
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        if options["now"]:
            run_job(graph.job_id)
            graph.refresh_from_db()
            if graph.status != "ready":
                raise CommandError(f"graph v{graph.version} failed: {graph.message}")
            self.stdout.write(
                f"graph v{graph.version}: {graph.node_count} nodes, {graph.edge_count} edges"
            )
        else:
            self.stdout.write(f"graph v{graph.version} queued as job {graph.job_id}")
