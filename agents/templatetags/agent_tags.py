from django import template

from ..models import FailureKind

register = template.Library()


@register.filter
def failure_label(kind: str) -> str:
    """A failure kind as people read it: ``step_cap`` -> ``step cap``."""
    try:
        return FailureKind(kind).label.lower()
    except ValueError:
        return kind
