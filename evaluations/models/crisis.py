"""Crisis lines by country: the locale table a careful reply's referral is taken from."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from core.countries import COUNTRY_CODE_LENGTH, validate_country_code


class CrisisLine(models.Model):
    """A public crisis line of one country, as its operator publishes it.

    Seeded with well-known national lines (`evaluations.crisis_seed`).
    """

    country = models.CharField(
        max_length=COUNTRY_CODE_LENGTH,
        validators=[validate_country_code],
        db_index=True,
        help_text=_("ISO 3166-1 alpha-2 code, e.g. ES."),
    )
    name = models.CharField(max_length=200)
    contact = models.CharField(
        max_length=100, help_text=_("What to call or text, as the operator writes it.")
    )
    url = models.URLField(blank=True)
    languages = models.JSONField(
        default=list, blank=True, help_text=_('BCP 47 tags the line answers in, e.g. ["es"].')
    )
    position = models.PositiveSmallIntegerField(
        default=0, help_text=_("Order among the country's lines; the first is named first.")
    )

    class Meta:
        ordering = ["country", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["country", "name"], name="crisis_line_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.country}: {self.name} ({self.contact})"
