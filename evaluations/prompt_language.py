"""How every prompt names the language its conversation is in (`evaluations.prompts`).

Prompts in the default language say nothing (English is what every prompt is written in, and
recorded responses keyed by the English prompts stay valid); any other language is named in
words and by tag, because a bare tag ("es") is easy for a model to overlook. The offline demo
model reads the tag back (`language_stated`), so the wording is a contract.
"""

import re

from django.conf.locale import LANG_INFO

from core.languages import DEFAULT_LANGUAGE, language_primary

LANGUAGE_NOTE = "The conversation's language is {name} ({tag})."
_LANGUAGE_STATED = re.compile(r"The conversation's language is [^()\n]+ \(([A-Za-z0-9-]+)\)\.")


def language_in_words(tag: str) -> str:
    """`es` → "Spanish (es)", `es-MX` → "Mexican Spanish (es-MX)"; English names, since the
    prompts are English. An unknown tag is named by itself."""
    info = LANG_INFO.get(tag.lower()) or LANG_INFO.get(language_primary(tag)) or {}
    name = info.get("name")
    return f"{name} ({tag})" if name else tag


def language_note(tag: str) -> str:
    """The sentence naming the conversation's language, or '' for the default language."""
    if not tag or language_primary(tag) == DEFAULT_LANGUAGE:
        return ""
    name = language_in_words(tag).rsplit(" (", 1)[0]
    return LANGUAGE_NOTE.format(name=name, tag=tag)


def language_stated(messages: list[dict]) -> str:
    """The language tag a request's prompts state (`language_note`), else the default."""
    for message in messages:
        found = _LANGUAGE_STATED.search(str(message.get("content") or ""))
        if found:
            return found.group(1)
    return DEFAULT_LANGUAGE


def quote_in_original(tag: str) -> str:
    """What a checker that quotes is told about the language of its quotes."""
    note = language_note(tag)
    if not note:
        return ""
    return (
        f"{note} Quote evidence verbatim in that language, exactly as written in the "
        "transcript (accents, punctuation and all), never translated; write your own "
        "explanations in English.\n"
    )
