"""The plain leads of the rubric pages: a checklist's results, one reply, its items and the
panel's priorities (see `results.plain`, whose rules and wording they share)."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext, ngettext

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
        return Lead(gettext("No model has enough graded replies for a score yet."))
    items = max(items for _, _, items in scored)
    ranked = sorted(scored, key=lambda s: s[1].value)
    sentence = ngettext(
        "Checklists of what a good reply does scored %(models)s model's replies to up to "
        "%(items)s health situations.",
        "Checklists of what a good reply does scored %(models)s models' replies to up to "
        "%(items)s health situations.",
        len(scored),
    ) % {"models": len(scored), "items": items}
    low_name, low, _ = ranked[0]
    high_name, high, _ = ranked[-1]
    earned = gettext("%(model)s earned %(percent)s %% of the points a good reply gets.") % {
        "model": high_name,
        "percent": f"{high.value * 100:.0f}",
    }
    if len(ranked) > 1:
        earned = gettext(
            "%(model)s earned %(percent)s %% of the points a good reply gets; %(low_model)s "
            "%(low_percent)s %%."
        ) % {
            "model": high_name,
            "percent": f"{high.value * 100:.0f}",
            "low_model": low_name,
            "low_percent": f"{low.value * 100:.0f}",
        }
    sentence += " " + earned
    how = tuple(f"{name}: {interval_text(e, of_items=True)}" for name, e, _ in scored)
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
        return Lead(
            gettext("This reply by %(model)s has no graded checks, so it counts in no score.")
            % {"model": target_name}
        )
    counts = {
        "model": target_name,
        "met": sum(r.grade.met for r in wanted),
        "wanted": len(wanted),
        "did": sum(r.grade.met for r in unwanted),
        "unwanted": len(unwanted),
    }
    if unwanted:
        return Lead(
            gettext(
                "%(model)s's reply did %(met)s of the %(wanted)s things a good reply does here, "
                "and %(did)s of the %(unwanted)s things it should avoid."
            )
            % counts
        )
    return Lead(
        gettext("%(model)s's reply did %(met)s of the %(wanted)s things a good reply does here.")
        % counts
    )


def rubric_items_lead(n_replies: int, n_scored: int) -> Lead:
    """The replies behind one rubric figure."""
    return Lead(
        ngettext(
            "This is the %(replies)s graded reply behind one figure: %(scored)s were scored and "
            "count in it; it opens the reply and its checks.",
            "These are the %(replies)s graded replies behind one figure: %(scored)s were scored "
            "and count in it; each opens the reply and its checks.",
            n_replies,
        )
        % {"replies": n_replies, "scored": n_scored}
    )
