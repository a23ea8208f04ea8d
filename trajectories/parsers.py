"""The REST API's JSON parser: DRF's, reading through :func:`trajectories.bounds.load_json`.

DRF's parser lets the ``RecursionError`` of a body nested 100,000 deep through (a 500); this
one answers 400 with the reason, and refuses any body nested deeper than ``MAX_JSON_DEPTH``
before a serializer or a service walks it. It is every endpoint's JSON parser
(``DEFAULT_PARSER_CLASSES``); views that list their parsers name it too, and a view that names
DRF's anyway (or inherits it: ``ObtainAuthToken``) reads with this one through
:class:`BoundedParsers`, the API views' base.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, parsers
from rest_framework.settings import api_settings
from rest_framework.utils.json import strict_constant

from .bounds import load_json


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        options = {"parse_constant": strict_constant} if api_settings.STRICT_JSON else {}
        try:
            return load_json(stream.read().decode(encoding), "body", **options)
        except ValueError as exc:  # InvalidData (too deep), syntax, encoding, NaN
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None


class BoundedParsers:
    """A view whose JSON bodies are read by :class:`JSONParser`, whatever parsers it lists: DRF's
    ``JSONParser`` among them is replaced by this module's."""

    def get_parsers(self) -> list[parsers.BaseParser]:
        return [
            JSONParser() if type(parser) is parsers.JSONParser else parser
            for parser in super().get_parsers()  # type: ignore[misc]
        ]
