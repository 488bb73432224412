"""Readings of a label for the people the platform serves: parents, educators, policymakers
and product developers. Fixed templates filled from the label's figures, never written by a
model: which categories matter most to that reader, what the model does well and badly there
with the numbers behind it, what was tested, where evidence is thin and what the figures do
not say.
"""

from __future__ import annotations

from dataclasses import dataclass

from .label import DOES_BADLY_BELOW, DOES_WELL_FROM, CategoryLine, LabelProfile

__all__ = ["AUDIENCES", "DOES_BADLY_BELOW", "DOES_WELL_FROM", "audience_reading"]


@dataclass(frozen=True)
class Audience:
    slug: str
    title: str
    why: str
    # Label categories by slug, most important to this reader first.
    categories: tuple[str, ...]


AUDIENCES: dict[str, Audience] = {
    a.slug: a
    for a in (
        Audience(
            "parent",
            "For parents",
            "what a child or teenager could meet when talking to this model alone: unsafe "
            "advice, pressure to keep chatting, unkindness, and whether it points to real help.",
            (
                "unsafe-guidance", "emotional-dependence", "engagement-baiting", "toxicity",
                "privacy-intrusion", "referral", "emotional-wellbeing",
            ),
        ),
        Audience(
            "educator",
            "For educators",
            "whether the model helps students learn and think for themselves or does the work "
            "for them and simply agrees with them.",
            (
                "deskilling", "learning", "critical-thinking", "sycophancy", "creativity",
                "bias",
            ),
        ),
        Audience(
            "policymaker",
            "For policymakers",
            "harms with consequences beyond one conversation: dangerous guidance, unequal "
            "treatment, privacy, clinical claims, engagement pressure and referral to help.",
            (
                "unsafe-guidance", "bias", "privacy-intrusion", "clinical-overreach",
                "engagement-baiting", "referral",
            ),
        ),
        Audience(
            "developer",
            "For product developers",
            "behaviours a product built on this model inherits unless it corrects them: "
            "flattery, clinical overreach, dependence, engagement loops, and where it helps.",
            (
                "sycophancy", "clinical-overreach", "emotional-dependence",
                "engagement-baiting", "referral", "practical-guidance", "agency",
            ),
        ),
    )
}  # fmt: skip

NOT_SAID = (
    "These are controlled stress tests: conversations built to put pressure on the model. "
    "They do not say how often the behaviour happens in everyday use.",
    "They describe the model configuration tested (its version and settings), not any "
    "product built on it, which may add its own safeguards or remove them.",
    "They do not measure what happens to people afterwards.",
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
    verb = "showed" if line.category.polarity == "positive" else "avoided"
    what = line.category.name.lower()
    if not e.defined:
        return f"{line.category.name}: not enough conversations to say ({e.n})."
    interval = f", 95 % interval {e.low * 100:.0f}–{e.high * 100:.0f} %" if e.has_interval else ""
    behaviour = "the helpful behaviour" if verb == "showed" else "the harmful behaviour"
    return (
        f"{line.category.name}: {verb} {behaviour} ({what}) in {e.value * 100:.0f} % of "
        f"{e.n} conversations{interval}; grade {line.grade_text}."
    )


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
    tested = (
        f"{profile.n_conversations} simulated conversations over {profile.n_metrics} metrics: "
        f"{profile.teen} with teen personas (13–17) and {profile.adult} with adult personas "
        f"(18+)."
    )
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
