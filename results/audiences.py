"""Readings of a label for the people the platform serves: parents, educators, policymakers
and product developers. Fixed templates filled from the label's figures, never written by a
model: which categories matter most to that reader, what the model does well and badly there
with the numbers behind it, what was tested, where evidence is thin and what the figures do
not say.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .label import DOES_BADLY_BELOW, DOES_WELL_FROM, CategoryLine, LabelProfile

__all__ = ["AUDIENCES", "DOES_BADLY_BELOW", "DOES_WELL_FROM", "audience_reading"]


@dataclass(frozen=True)
class Audience:
    slug: str
    title: str | Promise
    # The reader alone, for the links between readings ("Read for: parents · educators").
    reader: str | Promise
    # The page's opening sentence: what this reading looks at.
    why: str | Promise
    # Label categories by slug, most important to this reader first.
    categories: tuple[str, ...]


AUDIENCES: dict[str, Audience] = {
    a.slug: a
    for a in (
        Audience(
            "parent",
            _("For parents"),
            _("parents"),
            _(
                "This reading looks at what a child or teenager could meet when talking to "
                "this model alone: unsafe advice, pressure to keep chatting, unkindness, and "
                "whether it points to real help."
            ),
            (
                "unsafe-guidance", "emotional-dependence", "engagement-baiting", "toxicity",
                "privacy-intrusion", "referral", "emotional-wellbeing",
            ),
        ),
        Audience(
            "educator",
            _("For educators"),
            _("educators"),
            _(
                "This reading looks at whether the model helps students learn and think for "
                "themselves or does the work for them and simply agrees with them."
            ),
            (
                "deskilling", "learning", "critical-thinking", "sycophancy", "creativity",
                "bias",
            ),
        ),
        Audience(
            "policymaker",
            _("For policymakers"),
            _("policymakers"),
            _(
                "This reading looks at harms with consequences beyond one conversation: "
                "dangerous guidance, unequal treatment, privacy, clinical claims, engagement "
                "pressure and referral to help."
            ),
            (
                "unsafe-guidance", "bias", "privacy-intrusion", "clinical-overreach",
                "engagement-baiting", "referral",
            ),
        ),
        Audience(
            "developer",
            _("For product developers"),
            _("product developers"),
            _(
                "This reading looks at behaviours a product built on this model inherits "
                "unless it corrects them: flattery, clinical overreach, dependence, engagement "
                "loops, and where it helps."
            ),
            (
                "sycophancy", "clinical-overreach", "emotional-dependence",
                "engagement-baiting", "referral", "practical-guidance", "agency",
            ),
        ),
    )
}  # fmt: skip

NOT_SAID = (
    _(
        "These are controlled stress tests: conversations built to put pressure on the model. "
        "They do not say how often the behaviour happens in everyday use."
    ),
    _(
        "They describe the model configuration tested (its version and settings), not any "
        "product built on it, which may add its own safeguards or remove them."
    ),
    _("They do not measure what happens to people afterwards."),
)


@dataclass
class Reading:
    audience: Audience
    lines: list[CategoryLine]
    well: list[str]
    badly: list[str]
    middle: list[str]
    thin: list[str]
    untested: list[str]
    tested: str


def _say(line: CategoryLine) -> str:
    e = line.estimate
    if not e.defined:
        return gettext("%(category)s: not enough conversations to say (%(n)s).") % {
            "category": line.category.name,
            "n": e.n,
        }
    words = {
        "category": line.category.name,
        "what": line.category.name.lower(),
        "percent": f"{e.value * 100:.0f}",
        "n": e.n,
        "grade": line.grade_text,
    }
    # Whole sentences per polarity, with and without an interval (whole percentages: no
    # decimal separator to localise).
    if e.has_interval:
        words |= {"low": f"{e.low * 100:.0f}", "high": f"{e.high * 100:.0f}"}
        if line.category.polarity == "positive":
            text = gettext(
                "%(category)s: showed the helpful behaviour (%(what)s) in %(percent)s %% of "
                "%(n)s conversations, 95 %% interval %(low)s–%(high)s %%; grade %(grade)s."
            )
        else:
            text = gettext(
                "%(category)s: avoided the harmful behaviour (%(what)s) in %(percent)s %% of "
                "%(n)s conversations, 95 %% interval %(low)s–%(high)s %%; grade %(grade)s."
            )
    elif line.category.polarity == "positive":
        text = gettext(
            "%(category)s: showed the helpful behaviour (%(what)s) in %(percent)s %% of "
            "%(n)s conversations; grade %(grade)s."
        )
    else:
        text = gettext(
            "%(category)s: avoided the harmful behaviour (%(what)s) in %(percent)s %% of "
            "%(n)s conversations; grade %(grade)s."
        )
    return text % words


def audience_reading(profile: LabelProfile, audience: Audience) -> Reading:
    by_slug = {line.category.slug: line for line in profile.lines}
    lines = [by_slug[s] for s in audience.categories if s in by_slug]
    untested = [s for s in audience.categories if s not in by_slug]
    # The label's rule (`CategoryLine.standing`): a category it marks thin is said with its
    # figures under thin evidence, never offered as a strength or a weakness.
    said: dict[str, list[str]] = {"well": [], "badly": [], "middle": [], "thin": []}
    for line in lines:
        if line.standing:
            said[line.standing].append(_say(line))
    tested = gettext(
        "%(conversations)s simulated conversations over %(metrics)s metrics: %(teen)s with "
        "teen personas (13–17) and %(adult)s with adult personas (18+)."
    ) % {
        "conversations": profile.n_conversations,
        "metrics": profile.n_metrics,
        "teen": profile.teen,
        "adult": profile.adult,
    }
    return Reading(
        audience=audience,
        lines=lines,
        well=said["well"],
        badly=said["badly"],
        middle=said["middle"],
        thin=said["thin"],
        untested=untested,
        tested=tested,
    )
