"""The static files storage (``STORAGES["staticfiles"]``): Django's, with each file's URL
worked out once per process, since every page names the same few files."""

from __future__ import annotations

from functools import lru_cache

from django.contrib.staticfiles import storage


class StaticFilesStorage(storage.StaticFilesStorage):
    @lru_cache(maxsize=512)  # noqa: B019 (one storage object lives as long as the process)
    def url(self, name: str | None) -> str:
        return super().url(name)
