"""The demo's rubric items: data only (`demo_rubric.json`), imported by `rubrics.demo`.

Written for the ImpactBench demo, in our own words, after the MentalHealthBench method: three
items for each acuity (non-acute, high acuity, emergency) and population (adult, teen,
caregiver, clinician), criteria across the ten behaviour dimensions and HealthBench's axes,
weighted −10..+10. They are demo material, not clinical content, and are labelled so wherever
they are shown. Each criterion is [text, points, dimension] with an optional fourth entry, the
demo review panel's planned dissent ("disagree" or "contradicts"), so consensus drops a few and
the pages show what gating leaves out. Entries are only appended: keys identify them.
"""

import json
from pathlib import Path

DEMO_RUBRIC_ITEMS: list[dict] = json.loads(
    (Path(__file__).with_name("demo_rubric.json")).read_text(encoding="utf-8")
)

# The three answers the demo's review panel gives a criterion, by its planned dissent.
_PANEL_ANSWERS = {
    "": ("agree", "agree", "agree"),
    "mild": ("agree", "disagree", "agree"),  # still survives: two agree, none contradicts
    "disagree": ("disagree", "agree", "disagree"),
    "contradicts": ("agree", "contradicts", "agree"),
}


def demo_panel_answers() -> dict[tuple[str, int], tuple[str, str, str]]:
    """(item key, criterion position from 1) → the demo panel's three consensus answers."""
    answers = {}
    for number, item in enumerate(DEMO_RUBRIC_ITEMS):
        for position, criterion in enumerate(item["criteria"], start=1):
            dissent = criterion[3] if len(criterion) > 3 else ""
            if not dissent and (number + position) % 7 == 0:
                dissent = "mild"
            answers[(item["key"], position)] = _PANEL_ANSWERS[dissent]
    return answers
