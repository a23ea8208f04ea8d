"""``manage.py env_server`` refuses what it cannot serve, saying what is wrong."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"project": 999_999}, "no project 999999"),
        ({"tasks": "weather-temp-now,nope"}, "--tasks: unknown templates 'nope'"),
        ({"tasks": "app:nothing"}, "templates: no template uses an app 'nothing'"),
        ({"max_sessions": 0}, "--max-sessions: must be more than 0"),
        ({"idle": 0}, "--idle: must be more than 0"),
        ({"virtual": 17}, "--virtual: from 0 to 16"),
    ],
)
def test_the_server_refuses_options_it_cannot_serve(project, options, message):
    with pytest.raises(CommandError) as refused:
        call_command("env_server", **{"project": project.pk, **options})
    assert str(refused.value) == message
