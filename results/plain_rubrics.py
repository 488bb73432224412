"""The plain leads of the rubric pages: a checklist's results, one reply, its items and the
panel's priorities (see `results.plain`, whose rules and wording they share)."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import ngettext

from core.plain import Lead

from .plain import interval_text


def rubric_lead(targets: Sequence) -> Lead:
    """Rubric results: the share of a checklist's points each model earned, lowest and highest."""
    scored = [
        (t.target, t.overall.estimate, t.items)
        for t in targets
        if t.overall is not None and t.overall.estimate.defined
    ]
    if not scored:
        return Lead("No model has enough graded replies for a score yet.")
    items = max(items for _, _, items in scored)
    ranked = sorted(scored, key=lambda s: s[1].value)
    models = "1 model's" if len(scored) == 1 else f"{len(scored)} models'"
    sentence = (
        f"Checklists of what a good reply does scored {models} replies to up to {items} "
        "health situations."
    )
    low_name, low, _ = ranked[0]
    high_name, high, _ = ranked[-1]
    if len(ranked) > 1:
        sentence += (
            f" {high_name} earned {high.value * 100:.0f} % of the points a good reply gets; "
            f"{low_name} {low.value * 100:.0f} %."
        )
    else:
        sentence += f" {high_name} earned {high.value * 100:.0f} % of the points a good reply gets."
    how = tuple(f"{name}: {interval_text(e)}" for name, e, _ in scored)
    return Lead(sentence, how)


def priorities_lead(users: int, clinicians: int) -> Lead:
    """Users against clinicians: who was asked; the rank correlation stays behind "how we know"."""
    asked = ngettext(
        "%(users)s user said what matters to them in a reply.",
        "%(users)s users said what matters to them in a reply.",
        users,
    ) % {"users": users}
    compared = ngettext(
        "We compared it with what %(clinicians)s clinician rewards, behaviour by behaviour; the "
        "table shows where they agree and where they differ.",
        "We compared it with what %(clinicians)s clinicians reward, behaviour by behaviour; the "
        "table shows where they agree and where they differ.",
        clinicians,
    ) % {"clinicians": clinicians}
    return Lead(f"{asked} {compared}")


def rubric_reply_lead(target_name: str, criteria: Sequence) -> Lead:
    """One graded reply: the checks it met, the things to avoid it did, in counts."""
    counted_rows = [r for r in criteria if r.counted and r.grade is not None]
    wanted = [r for r in counted_rows if r.criterion.points > 0]
    unwanted = [r for r in counted_rows if r.criterion.points < 0]
    if not counted_rows:
        return Lead(f"This reply by {target_name} has no graded checks, so it counts in no score.")
    sentence = (
        f"{target_name}'s reply did {sum(r.grade.met for r in wanted)} of the {len(wanted)} "
        "things a good reply does here"
    )
    if unwanted:
        sentence += (
            f", and {sum(r.grade.met for r in unwanted)} of the {len(unwanted)} things it "
            "should avoid"
        )
    return Lead(sentence + ".")


def rubric_items_lead(n_replies: int, n_scored: int) -> Lead:
    """The replies behind one rubric figure."""
    return Lead(
        f"These are the {n_replies} graded repl{'y' if n_replies == 1 else 'ies'} behind one "
        f"figure: {n_scored} were scored and count in it; each opens the reply and its checks."
    )
