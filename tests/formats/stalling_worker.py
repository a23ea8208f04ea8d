"""A real Celery worker whose jobs stall halfway, until it is killed.

An export stalls once its files are written; an import once it has written its first trajectory.

``python tests/formats/stalling_worker.py -A config worker ...``: the fault tests start it,
wait until a job has written its files, and SIGKILL it, as a crash or an OOM kill would.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from celery.bin.celery import main  # noqa: E402

from formats import catalogue, jobs  # noqa: E402


def then_stall(real, done: str):
    """``real``, after which the worker says ``done`` and stalls (until it is killed)."""

    def stalling(*args, **kwargs):
        result = real(*args, **kwargs)
        print(f"stalling_worker: {done}, stalling", flush=True)
        time.sleep(3600)
        return result

    return stalling


jobs.export_trajectories = then_stall(jobs.export_trajectories, "export written")
catalogue.do_import_trajectory = then_stall(
    catalogue.do_import_trajectory, "one trajectory imported"
)

if __name__ == "__main__":
    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
