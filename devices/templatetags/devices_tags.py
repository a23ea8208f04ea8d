from django import template

register = template.Library()


@register.filter
def lease_length(seconds: int) -> str:
    """3600 -> "1 h", 5400 -> "1 h 30 min", 600 -> "10 min"."""
    hours, rest = divmod(int(seconds), 3600)
    minutes = rest // 60
    if hours and minutes:
        return f"{hours} h {minutes} min"
    if hours:
        return f"{hours} h"
    return f"{max(minutes, 1)} min"
