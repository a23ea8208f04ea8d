"""The schema class of the API (``DEFAULT_SCHEMA_CLASS``): drf-spectacular's, saying a little more.

Its own module: ``config.schema`` imports drf-spectacular's views, which need this class.
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

# What Python's str.strip() removes: a text field that is trimmed is blank when all of it is this.
SPACE = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0"
    "\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
NOT_BLANK = f"^[^\\x00]*[^\\x00{SPACE}][^\\x00]*$"


class WaypointAutoSchema(AutoSchema):
    """drf-spectacular's, saying also that a trimmed text field refuses spaces alone (DRF trims
    it, then finds it blank: a 400), which ``minLength: 1`` does not say."""

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        result = super()._map_serializer_field(field, direction, bypass_extensions)
        if (
            direction == "request"
            and isinstance(field, serializers.CharField)
            and field.trim_whitespace
            and not field.allow_blank
            and result.get("type") == "string"
            and not ({"format", "enum", "pattern"} & set(result))
        ):
            result["pattern"] = NOT_BLANK
        return result
