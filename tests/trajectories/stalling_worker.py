"""A real Celery worker whose jobs stall halfway, until it is killed.

An export stalls once its files are written; an import once it has written its first trajectory.

``python tests/trajectories/stalling_worker.py -A config worker ...``: the fault tests start it,
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

from trajectories import formats, jobs  # noqa: E402

export_for_real = jobs.export_trajectories


def export_then_stall(*args, **kwargs):
    counts = export_for_real(*args, **kwargs)
    print("stalling_worker: export written, stalling", flush=True)
    time.sleep(3600)
    return counts


jobs.export_trajectories = export_then_stall

import_for_real = formats.do_import_trajectory


def import_then_stall(*args, **kwargs):
    written = import_for_real(*args, **kwargs)
    print("stalling_worker: one trajectory imported, stalling", flush=True)
    time.sleep(3600)
    return written


formats.do_import_trajectory = import_then_stall

if __name__ == "__main__":
    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
