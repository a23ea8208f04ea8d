"""The Jinja2 pages' ``|date`` writes what Django's templates write with theirs, in any time
zone: a Django template shows a date in the current time zone, then formats it."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.template.defaultfilters import date as django_date
from django.utils import timezone

from config.jinja import date

MOMENTS = [
    datetime(2026, 1, 2, 3, 4, 5, tzinfo=ZoneInfo("UTC")),
    datetime(999, 12, 31, 23, 59, 59, tzinfo=ZoneInfo("UTC")),
    datetime(2026, 7, 14, 0, 0, 0),  # naive
]
FORMATS = ["H:i:s", "Y-m-d H:i", "d/m/Y {H}", "N j, Y", "Y-m-d\\TH:i"]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata", "America/St_Johns"])
def test_the_dates_are_those_of_django_s_filter(zone):
    with timezone.override(zone):
        for moment in MOMENTS:
            for format_string in FORMATS:
                shown = timezone.template_localtime(moment)
                assert date(moment, format_string) == django_date(shown, format_string)


def test_no_date_is_empty():
    assert date(None, "H:i") == ""
