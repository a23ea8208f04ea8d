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


@register.filter
def levelled(summary: dict) -> bool:
    """Whether a run's scores are worth showing level by level: it plays another level than
    L3 (STAMP's L1 or L2), or more than one."""
    levels = [row["level"] for row in summary.get("by_level", [])]
    return levels not in ([], [3])
