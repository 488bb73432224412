"""The XSS corpus reaches every text field people (or models) write and others read.

`xss_fields.COVERED` and `xss_fields.NOT_USER_WRITTEN` together must name every text field of
the platform's models (a new field fails here until it is planted or explained); the hostile
world used by the Chromium test (`tests/browser/test_security.py`) must really hold a payload
in every covered field, planted through the platform's forms and services.
"""

import pytest

from tests.security import xss_fields, xss_world
from tests.security.xss_fields import COVERED, NOT_USER_WRITTEN


def test_every_text_field_is_covered_by_the_corpus_or_explained():
    labels = xss_fields.field_labels()
    unexplained = sorted(labels - set(COVERED) - set(NOT_USER_WRITTEN))
    assert unexplained == [], (
        "New text fields: plant them in tests/security/xss_world.py and list them in COVERED, "
        "or say in NOT_USER_WRITTEN why no visitor's markup can reach them"
    )
    assert not set(COVERED) & set(NOT_USER_WRITTEN)
    # Stale entries would make the tables lie about what is checked.
    assert sorted((set(COVERED) | set(NOT_USER_WRITTEN)) - labels) == []


@pytest.mark.django_db
def test_the_hostile_world_holds_a_payload_in_every_covered_field():
    xss_world.build()
    missing = sorted(set(COVERED) - xss_fields.planted_fields())
    assert missing == [], missing
