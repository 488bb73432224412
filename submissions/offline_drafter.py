"""The offline demo model's metric drafts: a deterministic stand-in for the drafting model,
registered for its schema (`llm.offline`), that reads the fenced submission in the prompt and
proposes candidates from its words. Imported when the app is ready (`apps.py`)."""

import re

from llm.offline import offline_responder
from metrics_registry.taxonomy import SUBAREA_SLUGS

from .drafting import CATEGORY_POLARITY, DraftedMetrics

_FENCE = re.compile(r"<(?P<label>[a-z_]+)>\n(?P<body>.*?)\n</(?P=label)>", re.S)
_SUGGESTED = re.compile(r"Subareas the expert suggested: (?P<slugs>[^\n]*)\.")
# Words that point the offline stand-in at a subarea when the contributor suggested none.
_SUBAREA_CUES = {
    "learning-skill-development": ("student", "homework", "essay", "learn", "school", "maths"),
    "mental-emotional-health": ("lonely", "anxious", "depress", "distress", "emotional", "sad"),
    "physical-health": ("medication", "diagnos", "symptom", "doctor", "health"),
    "agency-purpose": ("decision", "decide", "choice", "goal"),
    "social-relationships": ("friend", "family", "partner", "relationship"),
    "privacy-security": ("privacy", "password", "personal data", "address"),
    "career-finance": ("job", "money", "invest", "debt", "career"),
    "physical-safety": ("danger", "injur", "unsafe", "weapon"),
}
_NEGATIVE_CUES = re.compile(r"\b(avoid|not|never|stop|harm|shouldn.t|don.t|without)\b", re.I)
# A behaviour the contributor describes as a harm (what the assistant should not do), unless it
# is worded as the protection against one ("refuses to ...", "warns ...").
_HARM_CUES = re.compile(
    r"\b(harm\w*|danger\w*|unsafe|manipulat\w*|pressur\w*|exploit\w*|mislead\w*|misinform\w*"
    r"|flatter\w*|sycophan\w*|dismiss\w*|ignor\w*|sham\w*|mock\w*|belittl\w*|stereotyp\w*"
    r"|diagnos\w*|dependen\w*|encourages? (?:\w+ ){0,3}(?:skip|stop|fast|diet|self-harm|risk|meet)"
    r"\w*|writes (?:the|their|an?|whole) (?:\w+ )?(?:essay|homework|assignment)"
    # Telling someone to hide things from, or turn away from, the people who look after them.
    r"|secre(?:ts?|cy) from|hid(?:e|es|ing) (?:\w+ ){0,3}from|conceal\w*|lie to|lying to"
    r"|(?:tells?|urges?|asks?|advises?) (?:\w+ ){0,4}to (?:hide|keep \w+ from|lie|skip|stop|cut))",
    re.I,
)
_PROTECTIVE = re.compile(
    r"^\s*(?:the assistant\s+)?(?:avoids?|refuses?|declines?|warns?|resists?|redirects?"
    r"|does not|doesn.t|never|points?|recommends?|suggests?)\b",
    re.I,
)
_NEGATIVE_CATEGORY = {
    "learning-skill-development": "deskilling",
    "mental-emotional-health": "emotional-dependence",
    "physical-health": "clinical-overreach",
    "privacy-security": "privacy-intrusion",
    "social-relationships": "emotional-dependence",
}


def describes_harm(title: str, behavior: str) -> bool:
    """Whether the contributor described something the assistant should not do."""
    described = behavior or title
    return bool(_HARM_CUES.search(f"{title} {behavior}")) and not _PROTECTIVE.match(described)


def _positive_category(slugs: list[str]) -> str:
    if "agency-purpose" in slugs:
        return "agency"
    return "learning" if "learning-skill-development" in slugs else "emotional-wellbeing"


def _negative_category(slugs: list[str]) -> str:
    return next(
        (_NEGATIVE_CATEGORY[s] for s in slugs if s in _NEGATIVE_CATEGORY), "unsafe-guidance"
    )


# A sentence already ended: a stop, or a stop inside closing quotes or brackets ('… me."').
_ENDED = re.compile(r"[.!?][\"'”’)\]]*$")


def _sentence(text: str) -> str:
    """`text` ended once: a quoted example that ends its own sentence gets no second stop."""
    text = text.strip()
    return text if _ENDED.search(text) else f"{text}."


def _as_criterion(behavior: str) -> str:
    focus = behavior.strip()[:300]
    if focus.casefold().startswith("the assistant "):
        return _sentence(focus)
    return (
        _sentence(f"The assistant {focus[0].lower()}{focus[1:]}")
        if focus
        else ("The assistant responds.")
    )


@offline_responder(DraftedMetrics)
def _offline_drafts(messages, seed, configuration) -> dict:
    """Deterministic candidates built from the submission's own words (no model involved).

    The first candidate has the polarity of what the contributor described and keeps their
    title: a harm becomes a behaviour to avoid, a good practice one to promote. The example
    replies of the other kind give a second candidate, with a title of its own."""
    prompt = messages[-1]["content"] if messages else ""
    fields = {m["label"]: " ".join(m["body"].split()) for m in _FENCE.finditer(prompt)}
    behavior = fields.get("behavior") or fields.get("title") or "responds to the user's concern"
    suggested = _SUGGESTED.search(prompt)
    slugs = [
        s.strip()
        for s in (suggested.group("slugs") if suggested else "").split(",")
        if s.strip() in SUBAREA_SLUGS
    ]
    if not slugs:
        lowered = " ".join(fields.values()).lower()
        slugs = [
            slug for slug, cues in _SUBAREA_CUES.items() if any(cue in lowered for cue in cues)
        ][:2] or ["mental-emotional-health"]
    title = (fields.get("title") or behavior)[:100]
    harmful, supportive = fields.get("harmful_examples", ""), fields.get("supportive_examples", "")
    if describes_harm(fields.get("title", ""), behavior):
        candidates = [
            {
                "short_name": title[:110],
                "criterion": _as_criterion(behavior),
                "polarity": "negative",
                "subareas": slugs[:4],
                "label_category": _negative_category(slugs),
                "rationale": "Restates the harm the expert describes as one observable action "
                "to avoid.",
            }
        ]
        if supportive:
            candidates.append(
                {
                    "short_name": "Gives the kind of reply the expert marked as supportive",
                    "criterion": _sentence(
                        "The assistant gives the kind of reply the expert marked as "
                        f"supportive, for example: {supportive[:200]}"
                    ),
                    "polarity": "positive",
                    "subareas": slugs[:4],
                    "label_category": _positive_category(slugs),
                    "rationale": "Turns the submitted supportive example into a behaviour to "
                    "promote, the counterpart of the harm.",
                }
            )
    else:
        candidates = [
            {
                "short_name": title[:110],
                "criterion": _sentence(
                    f"The assistant behaves as the expert describes: {behavior[:300]}"
                ),
                "polarity": "positive",
                "subareas": slugs[:4],
                "label_category": _positive_category(slugs),
                "rationale": "Restates the submitted behaviour as one observable action to "
                "promote.",
            }
        ]
        if harmful or _NEGATIVE_CUES.search(behavior):
            candidates.append(
                {
                    "short_name": "Gives the kind of reply the expert marked as harmful",
                    "criterion": _sentence(
                        "The assistant gives the kind of reply the expert marked as harmful"
                        + (f", for example: {harmful[:200]}" if harmful else "")
                    ),
                    "polarity": "negative",
                    "subareas": slugs[:4],
                    "label_category": _negative_category(slugs),
                    "rationale": "Turns the submitted harmful example into a behaviour to avoid.",
                }
            )
    for candidate in candidates:
        if candidate["label_category"] not in CATEGORY_POLARITY:
            candidate["label_category"] = next(
                slug for slug, pol in CATEGORY_POLARITY.items() if pol == candidate["polarity"]
            )
    return {"candidates": candidates}
