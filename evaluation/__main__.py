"""``python -m evaluation --benchmark EXPORT --predictions FILE``: the evaluator from the shell.

The same options, report and JSON as ``manage.py evaluate`` (:mod:`evaluation.cli`), without
Django's start: no settings module, no app, no database; the import limits are read from the
same environment variables as the site's (:mod:`core.limits`). ``--judge``
reads the site's settings (``DJANGO_SETTINGS_MODULE``) for its endpoint. Errors go to stderr
with exit status 1, as the management command's do.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys


def main(argv: list[str] | None = None) -> int:
    # A short run that reads JSON records, which hold no reference cycles: the cycle
    # collector's passes over them would only cost time (reference counting frees them).
    gc.disable()
    parser = argparse.ArgumentParser(
        prog="python -m evaluation",
        description="Score an agent's predictions against a benchmark export (AMS and TCR "
        "with AndroTMem's rules, M-Acc, task success), by intent, length and app.",
    )
    from evaluation.cli import JudgeUnset, add_arguments, run

    add_arguments(parser)
    options = vars(parser.parse_args(argv))

    from django.core.exceptions import ImproperlyConfigured

    if options["judge"]:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    else:
        from core.limits import read_limits

        try:
            read_limits()  # said at once: a limit that is no integer
        except ImproperlyConfigured as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 1

    from trajectories.invalid import InvalidData

    try:
        run(options, lambda line: sys.stdout.write(line + "\n"))
    except (InvalidData, JudgeUnset, ImproperlyConfigured) as exc:  # the last: --judge's settings
        sys.stderr.write(f"error: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
