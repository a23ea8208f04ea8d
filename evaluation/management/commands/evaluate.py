from django.core.management.base import BaseCommand, CommandError

from evaluation.cli import JudgeUnset, add_arguments, run
from trajectories.invalid import InvalidData


class Command(BaseCommand):
    help = (
        "Score an agent's predictions against a benchmark export (AMS and TCR with AndroTMem's "
        "rules, M-Acc, task success), by intent, length and app. `python -m evaluation` takes "
        "the same options and gives the same report without starting the whole site."
    )

    def add_arguments(self, parser):
        add_arguments(parser)

    def handle(self, *args, **options):
        try:
            run(options, self.stdout.write)
        except (InvalidData, JudgeUnset) as exc:
            raise CommandError(str(exc)) from None
