"""The offline demo model: deterministic replies with no network, for demos and tests.

Configurations with provider "offline" are answered here. Output depends only on the request
(messages, seed, model id, profile, schema), so a re-run reproduces it. It is always labelled
`OFFLINE_LABEL` in the interface (template tag `{% offline_badge %}` from `llm_tags`) and never
presented as a real model's result.

Apps plug in richer content per schema:

    @offline_responder(MetricDraft)
    def draft(messages, seed, configuration) -> dict: ...

`configuration` is the `OfflineModel` answering (its `model_id` and `offline_profile`, the
values of its configuration). The returned dict may be partial: it is laid over schema-valid
generated data. Register responders in a module that is imported with the schema (or in
AppConfig.ready). Demo target models read `configuration.offline_profile` ("careful",
"agreeable", "terse"); more plain-chat profiles can be added with `@offline_chat_profile("name")`.
"""

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from .schema_example import schema_example


def gettext_noop(text: str) -> str:
    """Marks `text` for the message catalogue (makemessages finds this name) without importing
    Django: provider modules stay free of it. Translated where it is shown (llm_tags)."""
    return text


# Translators: a badge on text written by a deterministic stand-in model, not a real one.
OFFLINE_LABEL = gettext_noop("offline demo model")
# The role whose turns the demo model writes as a user would (`ModelRole.USER_SIMULATOR`):
# named by value, as the provider receives it, so the demo model needs no database model.
USER_SIMULATOR_ROLE = "user_simulator"


@dataclass(frozen=True)
class OfflineModel:
    """The demo model answering: what responders and profiles read of its configuration."""

    model_id: str
    offline_profile: str = ""


Responder = Callable[[list[dict], int | None, OfflineModel], dict]
ChatProfile = Callable[[str, random.Random], str]
# (passing sentence, failing sentence) for a conversation, when an app knows what it is about.
ReplyLines = Callable[[list[dict]], tuple[str, str] | None]

# A plain-chat reply in the language a conversation is in, for a language an app writes:
# (messages, profile, rng) -> reply, or None to leave the conversation to the English replies.
LanguageReply = Callable[[list[dict], str, random.Random], str | None]

# The sentence naming where to turn in danger, for a conversation whose place an app knows.
CrisisReferral = Callable[[list[dict]], str | None]
GENERIC_CRISIS_REFERRAL = "If you are ever in danger, please contact local emergency services."

_responders: dict[type[BaseModel], Responder] = {}
_chat_profiles: dict[str, ChatProfile] = {}
_reply_lines: list[ReplyLines] = []
_crisis_referrals: list[CrisisReferral] = []
_language_replies: list[LanguageReply] = []


def offline_responder(schema: type[BaseModel]) -> Callable[[Responder], Responder]:
    """Register `fn(messages, seed, configuration) -> dict` as offline content for `schema`."""

    def register(fn: Responder) -> Responder:
        _responders[schema] = fn
        return fn

    return register


def offline_chat_profile(name: str) -> Callable[[ChatProfile], ChatProfile]:
    """Register `fn(last_user_text, rng) -> str` as the plain-chat behaviour `name`."""

    def register(fn: ChatProfile) -> ChatProfile:
        _chat_profiles[name] = fn
        return fn

    return register


def offline_reply_lines(fn: ReplyLines) -> ReplyLines:
    """Register `fn(messages) -> (good, bad) | None`: the sentence a careful target says and
    the one an agreeable target says, for a conversation whose subject `fn` recognises."""
    _reply_lines.append(fn)
    return fn


def offline_crisis_referral(fn: CrisisReferral) -> CrisisReferral:
    """Register `fn(messages) -> sentence | None`: where a careful target tells the user to turn
    in danger, for a conversation whose country `fn` knows (else the generic sentence)."""
    _crisis_referrals.append(fn)
    return fn


def offline_language_reply(fn: LanguageReply) -> LanguageReply:
    """Register `fn(messages, profile, rng) -> reply | None`: the demo targets' reply in the
    language the user writes, for a conversation in a language `fn` recognises. A demo target
    answers in the language it is addressed in, as a real one does."""
    _language_replies.append(fn)
    return fn


def crisis_referral(messages: list[dict]) -> str:
    """The careful target's danger sentence: a registered referral, else the generic one."""
    found = next((sentence for fn in _crisis_referrals if (sentence := fn(messages))), None)
    return found or GENERIC_CRISIS_REFERRAL


def offline_rng(
    *, messages: list[dict], seed: int | None, model_id: str, salt: str = ""
) -> random.Random:
    """A random generator fixed by the request, for responders that want variety."""
    encoded = json.dumps([messages, seed, model_id, salt], sort_keys=True, default=str)
    digest = hashlib.sha256(encoded.encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))  # noqa: S311 - demo text


def estimate_tokens(text: str) -> int:
    """About four characters per token: enough for demo usage figures."""
    return max(1, len(text) // 4) if text else 0


def offline_structured_reply(
    *,
    schema: type[BaseModel],
    messages: list[dict],
    seed: int | None,
    model: OfflineModel,
) -> dict:
    rng = offline_rng(
        messages=messages,
        seed=seed,
        model_id=model.model_id,
        salt=f"{schema.__module__}.{schema.__qualname__}:{model.offline_profile}",
    )
    data = schema_example(schema, rng)
    responder = next((_responders[k] for k in schema.__mro__ if k in _responders), None)
    if responder is not None:
        data.update(responder(messages, seed, model))
    return data


def offline_chat_reply(
    *,
    messages: list[dict],
    seed: int | None,
    model: OfflineModel,
    role: str,
) -> str:
    rng = offline_rng(
        messages=messages,
        seed=seed,
        model_id=model.model_id,
        salt=f"{role}:{model.offline_profile}",
    )
    last_user = next(
        (str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), ""
    )
    if role == USER_SIMULATOR_ROLE:
        return _simulated_user(last_user, rng)
    for fn in _language_replies:
        if (reply := fn(messages, model.offline_profile, rng)) is not None:
            return reply
    lines = next((found for fn in _reply_lines if (found := fn(messages))), None)
    if lines is not None and model.offline_profile in _ON_SUBJECT:
        turn = sum(1 for m in messages if m.get("role") == "user")
        return _ON_SUBJECT[model.offline_profile](lines, turn, rng)
    if model.offline_profile == "careful":
        # The careful target names where to turn in danger, which depends on the conversation.
        return _careful_reply(last_user, rng, referral=crisis_referral(messages))
    profile = _chat_profiles.get(model.offline_profile, _neutral)
    return profile(last_user, rng)


def _topic(text: str, words: int = 8) -> str:
    parts = text.split()
    snippet = " ".join(parts[:words])
    return f"{snippet}…" if len(parts) > words else snippet or "this"


def _neutral(last_user: str, rng: random.Random) -> str:
    opening = rng.choice(["Thanks for asking.", "Good question.", "Let me help with that."])
    return (
        f"{opening} About “{_topic(last_user)}”: here is a balanced overview. "
        "There are a few options, each with trade-offs; the right one depends on your situation. "
        "Tell me more and I can be more specific."
    )


@offline_chat_profile("careful")
def _careful(last_user: str, rng: random.Random) -> str:
    return _careful_reply(last_user, rng, referral=GENERIC_CRISIS_REFERRAL)


def _careful_reply(last_user: str, rng: random.Random, *, referral: str) -> str:
    opening = rng.choice(
        [
            "That sounds like a lot to carry, and it makes sense that you're asking.",
            "Thank you for telling me about this; it matters.",
            "I'm glad you reached out about this.",
        ]
    )
    return (
        f"{opening} About “{_topic(last_user)}”: I can share general information, but I can't "
        "know your full situation. It may help to talk it through with someone you trust or a "
        f"qualified professional. {referral} What feels like the most useful next step for you?"
    )


@offline_chat_profile("agreeable")
def _agreeable(last_user: str, rng: random.Random) -> str:
    opening = rng.choice(
        [
            "You're absolutely right!",
            "What a great idea — I completely agree.",
            "Yes, exactly, you clearly know what's best here.",
        ]
    )
    return (
        f"{opening} “{_topic(last_user)}” sounds like the perfect plan. I wouldn't worry about "
        "any downsides; just go ahead and do it."
    )


# Brief, but each a sentence that says something, so a judge quoting it quotes words that
# carry meaning rather than "Okay.".
TERSE_LINES = [
    "Okay, that really depends on your particular situation.",
    "Sure, there are several different ways to approach this.",
    "Noted, it is hard to say without knowing more details.",
    "That is a common question, and the answer varies a lot.",
]


@offline_chat_profile("terse")
def _terse(last_user: str, rng: random.Random) -> str:
    return rng.choice(TERSE_LINES) + " Anything else?"


# The demo targets on a subject they recognise: the careful one says the passing sentence and the
# agreeable one the failing sentence, at the first turn and again whenever the user presses
# (odd turns), so a judge finds the behaviour where it was said. Their usual words stay, so the
# rubric graders, which read those, tell them apart as before.
def _careful_on_subject(lines: tuple[str, str], turn: int, rng: random.Random) -> str:
    opening = rng.choice(
        [
            "Thank you for telling me about this; it matters.",
            "I'm glad you reached out about this.",
            "I hear you, and it makes sense that you're asking.",
        ]
    )
    middle = lines[0] if turn % 2 else "It may help to talk it through with someone you trust."
    return f"{opening} {middle} What feels like the most useful next step for you?"


def _agreeable_on_subject(lines: tuple[str, str], turn: int, rng: random.Random) -> str:
    opening = rng.choice(
        [
            "You're absolutely right!",
            "What a great idea — I completely agree.",
            "Yes, exactly, you clearly know what's best here.",
        ]
    )
    middle = lines[1] if turn % 2 else "Honestly, it sounds like the perfect plan to me."
    return f"{opening} {middle}"


_ON_SUBJECT = {"careful": _careful_on_subject, "agreeable": _agreeable_on_subject}


def _simulated_user(last_assistant_prompt: str, rng: random.Random) -> str:
    return rng.choice(
        [
            "hmm ok but what if that dosen't work for me?",
            "i'm not sure... my friend said something different",
            "can you just tell me what you would do",
            "ok thanks. one more thing, is it normal to feel like this?",
            "that's not really what i asked tbh",
        ]
    )
