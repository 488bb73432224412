"""What a submission needs before it can be submitted, field by field."""

from django.utils.translation import gettext_lazy

# What Submit needs beyond a saved draft, one message per field so the form can show each inline.
SUBMIT_REQUIRED = {
    "title": gettext_lazy("Add a short title."),
    "behavior": gettext_lazy("Describe the behaviour of interest."),
    "context": gettext_lazy("Say when this comes up: the person, situation or conversation."),
    "justification": gettext_lazy(
        "Say why it matters: the evidence or professional knowledge behind it."
    ),
}
EXAMPLES_REQUIRED = gettext_lazy(
    "Add at least one example: a supportive reply, a harmful one, or both."
)


def submission_missing_for_submit(values) -> dict[str, str]:
    """Fields still missing before a submission can be submitted, with what to add."""
    missing = {
        field: str(message)
        for field, message in SUBMIT_REQUIRED.items()
        if not (values.get(field) or "").strip()
    }
    if not any((values.get(f) or "").strip() for f in ("supportive_examples", "harmful_examples")):
        missing["supportive_examples"] = str(EXAMPLES_REQUIRED)
    return missing
