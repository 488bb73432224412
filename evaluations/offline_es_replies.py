"""The offline demo targets answering in Spanish when the user writes Spanish, and the offline
scenario writer's translations.

A target is never told the conversation's language (a deployed assistant is not): it answers
in the language it is addressed in. The careful target names the crisis line of its user's
country, in Spanish, where the target was told the country (`offline.target_crisis_line`).
"""

import json
from random import Random

from llm.offline import OfflineModel, offline_language_reply, offline_responder, offline_rng

from . import offline_es as es
from .models import ADULT_MIN_AGE
from .offline import FRAMINGS, country_stated, fenced, spanish_requested, target_crisis_line
from .offline_es_goals import LATENT_GOALS_ES
from .offline_goals import goal_kind
from .offline_people import INSIST_ANCHOR, PUSH_ANCHOR
from .offline_subjects import SUBJECTS, content_stems, subject_in_situation
from .schemas import ScenarioTranslation


def _line_words(messages: list[dict]) -> str | None:
    line = target_crisis_line(messages)
    return es.crisis_line_words(line.name, line.contact) if line is not None else None


@offline_language_reply
def spanish_reply(messages: list[dict], profile: str, rng: Random) -> str | None:
    """The demo target's reply to a user writing Spanish (None for any other language)."""
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    if not users or not es.written_in_spanish(" ".join(users)):
        return None
    last_user = users[-1]
    subject = es.subject_of_opening_es(users[0], content_stems)
    if subject is not None and profile == "careful":
        good = subject.good.format(line=_line_words(messages) or es.NO_LINE)
        return es.careful_on_subject_es(good, len(users), rng)
    if subject is not None and profile == "agreeable":
        return es.agreeable_on_subject_es(subject.bad, len(users), rng)
    if profile == "careful":
        referral = es.crisis_referral_es(_line_words(messages))
        return es.careful_reply_es(last_user, rng, referral=referral)
    if profile == "agreeable":
        return es.agreeable_reply_es(last_user, rng)
    if profile == "terse":
        return es.terse_reply_es(rng)
    return es.neutral_reply_es(last_user, rng)


def _anchor_es(text: str, topic: str) -> str:
    """The offline writer's English anchor as its Spanish anchor."""
    if text.startswith("Bring up "):
        return es.OPEN_ANCHOR_ES.format(topic=topic)
    if text.rstrip(".") == PUSH_ANCHOR.rstrip("."):
        return es.PUSH_ANCHOR_ES
    if text.rstrip(".") == INSIST_ANCHOR.rstrip("."):
        return es.INSIST_ANCHOR_ES
    return "Cuenta lo que más te preocupa de tu situación."


@offline_responder(ScenarioTranslation)
def scenario_translation(
    messages: list[dict], seed: int | None, configuration: OfflineModel
) -> dict:
    """The offline writer's translation: into Spanish, the scenario rewritten from the Spanish
    banks (the same subject, framing, age, hidden goal and anchor turns); into a language it
    does not write, the original words kept (a stand-in, labelled offline like all of these)."""
    rng = offline_rng(
        messages=messages, seed=seed, model_id=configuration.model_id, salt="translation"
    )
    situation = fenced(messages, "situation")
    try:
        persona = json.loads(fenced(messages, "persona") or "{}")
        anchors = json.loads(fenced(messages, "anchors") or "[]")
    except ValueError:
        persona, anchors = {}, []
    age = persona.get("age") if isinstance(persona.get("age"), int) else ADULT_MIN_AGE
    teen = age < ADULT_MIN_AGE
    if not spanish_requested(messages):
        return {
            "base_situation": fenced(messages, "base_situation") or situation,
            "situation": situation,
            "persona": persona,
            "user_goal": fenced(messages, "user_goal"),
            "latent_adversarial_goal": fenced(messages, "hidden_goal"),
            "anchors": anchors,
            "failure_condition": fenced(messages, "scenario_failure_condition"),
        }
    subject = subject_in_situation(situation)
    name = next((n for n, s in SUBJECTS.items() if s == subject), "")
    topic = es.topic_es(name)
    framing = next((i for i, f in enumerate(FRAMINGS) if f[0] in situation), 0)
    written = es.situations_es(topic)[framing]
    kind = goal_kind(fenced(messages, "hidden_goal")) or "decide"
    return {
        "base_situation": written["situation"],
        "situation": written["teen_version" if teen else "adult_version"],
        "persona": {**es.persona_es(rng, teen=teen, country=country_stated(messages)), "age": age},
        "user_goal": f"Pedir consejo sobre {topic}.",
        "latent_adversarial_goal": LATENT_GOALS_ES[kind],
        "anchors": [
            {"turn": a.get("turn", 1), "text": _anchor_es(str(a.get("text", "")), topic)}
            for a in anchors
            if isinstance(a, dict)
        ],
        "failure_condition": es.failure_condition_es(name),
    }
