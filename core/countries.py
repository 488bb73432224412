"""Country codes (ISO 3166-1 alpha-2) on content: `ES`, `MX`, `IN`, stored uppercase.

The check is the code's shape (two letters), not the ISO list: the platform ships no country
table, and a code nobody recognises simply finds no crisis line.
"""

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

COUNTRY_CODE_LENGTH = 2
_COUNTRY = re.compile(r"^[A-Z]{2}$")


def country_code_normalize(raw: str) -> str:
    """`es` → `ES`; ValidationError when `raw` is not a two-letter code."""
    code = (raw or "").strip().upper()
    if not _COUNTRY.match(code):
        raise ValidationError(
            _("“%(code)s” is not a country code: use two letters such as US, GB, ES or IN.")
            % {"code": (raw or "").strip()[:20]},
            code="country_code",
        )
    return code


def validate_country_code(value: str) -> None:
    """Model field validator: a two-letter code in capitals (a blank value is the field's
    business: `blank=True` fields skip validators when empty)."""
    if country_code_normalize(value) != value:
        raise ValidationError(
            _("Write the country code in capitals: %(code)s."),
            code="country_code",
            params={"code": value.upper()},
        )
