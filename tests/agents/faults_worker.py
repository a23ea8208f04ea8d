"""A real Celery worker for the lost-worker test, on the test session's own faults queue only
(``FAULTS_QUEUE``: out of reach of any other worker); with ``STALL_AFTER_STEPS=n`` its
episodes stall after n recorded steps, until it is killed.

``FAULTS_QUEUE=q python tests/agents/faults_worker.py -A config worker -Q q ...``
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

from agents import runner  # noqa: E402
from agents.tasks import run_episode_task  # noqa: E402
from trajectories import jobs  # noqa: E402
from trajectories.tasks import run_job_task  # noqa: E402

QUEUE = os.environ["FAULTS_QUEUE"]
jobs._send = lambda job_id: run_job_task.apply_async((job_id,), queue=QUEUE)
runner.send_episode = lambda episode_id: run_episode_task.apply_async((episode_id,), queue=QUEUE)

stall_after = int(os.environ.get("STALL_AFTER_STEPS", "0"))
if stall_after:
    real_record_step = runner.record_step

    def stalling_record_step(trajectory, *args, **kwargs):
        step = real_record_step(trajectory, *args, **kwargs)
        if step.index + 1 >= stall_after:
            print(f"faults_worker: {step.index + 1} steps recorded, stalling", flush=True)
            time.sleep(3600)
        return step

    runner.record_step = stalling_record_step

if __name__ == "__main__":
    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
