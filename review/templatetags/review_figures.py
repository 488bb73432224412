from django import template

register = template.Library()


@register.filter
def fig(value: float | None) -> str:
    """Agreement figures with three decimals; undefined ones as a dash."""
    if value is None:
        return "—"
    return f"{value:.3f}"
