"""Where a configuration's structured-output mode is moved down after its server refused it.

The retry policy (`llm.attempts`) decides to move; this stores it once: a conditional update,
so of several workers that met the same refusal only the first moves the configuration, and
the reason is kept on it (`structured_output_note`) for its page.
"""

from django.utils import timezone

from .models import ModelConfiguration


def structured_mode_downgrade(
    *, configuration: ModelConfiguration, from_mode: str, to_mode: str, reason: str
) -> bool:
    """Store `to_mode` if the configuration still asks for `from_mode`; whether it moved."""
    configuration.structured_output = to_mode
    if configuration.pk is None:
        return False
    note = f"{timezone.now():%Y-%m-%d %H:%M} UTC: {reason}"
    moved = ModelConfiguration.objects.filter(
        pk=configuration.pk, structured_output=from_mode
    ).update(structured_output=to_mode, structured_output_note=note, updated_at=timezone.now())
    if moved:
        configuration.structured_output_note = note
    return bool(moved)
