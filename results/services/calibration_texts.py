"""What the pages and the API say of calibrated rates while they cannot yet be shown: the
publication threshold, why a run has none, and the steps that fill them in."""

from __future__ import annotations

from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext as _

from stats.ppi import LABEL_MIN_BASE_SCENARIOS, LABEL_MIN_EXPERT_VERDICTS

# Stored nowhere: the pages say it in the reader's language (`threshold_text`), the API in
# English.
THRESHOLD_MESSAGE = gettext_noop(
    "A calibrated rate is published (here, on the model's label and in the API) once at least "
    "%(verdicts)s of its conversations, from at least %(base_scenarios)s base scenarios, carry "
    "a blind expert verdict: the interval is then about ±0.1 or narrower for a rate near one "
    "half, and the suite's simulation showed it keeping its 95 %% coverage from there, at true "
    "rates of 0 %% and 100 %% too; with fewer it covered less often (91–92 %%), so below that "
    "the table says how many verdicts it has. A published rate and its interval always lie "
    "between 0 %% and 100 %%."
)
_THRESHOLDS = {"verdicts": LABEL_MIN_EXPERT_VERDICTS, "base_scenarios": LABEL_MIN_BASE_SCENARIOS}
THRESHOLD_TEXT = THRESHOLD_MESSAGE % _THRESHOLDS
# Stored with a run's calibration and translated where a page shows it (`results.stored_words`).
NOT_DRAWN = gettext_noop("No calibration sample has been drawn for this run yet.")
NOT_RATED = gettext_noop("The calibration sample of this run is drawn; no expert has rated it yet.")


def threshold_text() -> str:
    """When a calibrated rate is published, in the reader's language."""
    return gettext(THRESHOLD_MESSAGE) % _THRESHOLDS


def calibration_steps() -> list[str]:
    """How the calibrated figures get filled, step by step: pages list them, the API joins
    them. Said wherever a calibrated figure would appear while none can yet; in the reader's
    language (the API's in the request's)."""
    return [
        _(
            "Before a run is made official, the project's researchers draw its calibration "
            "sample: a random sample of the run's judged conversations, stratified by target and "
            "polarity, each with its chance of inclusion recorded. An official run's "
            "conversations are public and cannot be rated blind, so a run already official is "
            "calibrated through the next one."
        ),
        _(
            "Expert reviewers give their own verdict on each sampled conversation, blind "
            "(without the model's name or the judge's verdict); the same verdicts count toward "
            "the judge's trust badges."
        ),
        _(
            "The calibrated rates fill in as ratings arrive: a model's appears on the "
            "methodology page, its label and the API once at least %(verdicts)s of its "
            "conversations, from at least %(base_scenarios)s base scenarios, carry a blind "
            "expert verdict."
        )
        % {"verdicts": LABEL_MIN_EXPERT_VERDICTS, "base_scenarios": LABEL_MIN_BASE_SCENARIOS},
    ]


def calibration_how_to_fill() -> str:
    """The steps as one text, numbered (the API's ``how_to_fill``)."""
    return " ".join(f"({i}) {step}" for i, step in enumerate(calibration_steps(), 1))
