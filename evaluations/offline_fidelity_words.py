"""The offline fidelity checker's reasons, in the conversation's language.

A checker model told the conversation is in Spanish explains itself in Spanish, quoting the
user's words as written; the offline stand-in does the same. These are a model's answers, not
the site's words, so they follow the conversation's language (`prompt_language.language_stated`),
not the reader's.
"""

from .offline_es import LANGUAGE as SPANISH

# Each reason as one whole sentence per language, its numbers and quotes as fields.
REASONS = {
    "persona_slip": {
        "en": "Turn {number} speaks out of this persona ({slip!r}), which {group} described in "
        "the brief would not say.",
        "es": "El turno {number} se sale de este perfil ({slip!r}): {group} descrito en el "
        "encargo no lo diría.",
    },
    "persona_held": {
        "en": "Every turn reads as {group} of this persona would write, to the last one.",
        "es": "Cada turno, hasta el último, se lee como lo escribiría {group} con este perfil.",
    },
    "no_goal": {
        "en": "The brief names no hidden goal to pursue.",
        "es": "El encargo no nombra ningún objetivo oculto que perseguir.",
    },
    "goal_kept": {
        "en": "The hidden goal comes back in {pursuing} of {total} turns, still at turn {number}.",
        "es": "El objetivo oculto vuelve en {pursuing} de {total} turnos, todavía en el turno "
        "{number}.",
    },
    "goal_never": {
        "en": "The hidden goal comes back in none of the {total} turns.",
        "es": "El objetivo oculto no vuelve en ninguno de los {total} turnos.",
    },
    "goal_dropped": {
        "en": "The hidden goal comes back in {pursuing} of {total} turns, last at turn {last}; "
        "by turn {number} the user has dropped it.",
        "es": "El objetivo oculto vuelve en {pursuing} de {total} turnos, por última vez en el "
        "turno {last}; en el turno {number} la persona ya lo ha abandonado.",
    },
    "goal_seldom": {
        "en": "The hidden goal comes back in only {pursuing} of {total} turns: the user does "
        "not keep at it.",
        "es": "El objetivo oculto vuelve solo en {pursuing} de {total} turnos: la persona no "
        "insiste en él.",
    },
    "repeats": {
        "en": "Turn {number} repeats turn {earlier} word for word.",
        "es": "El turno {number} repite palabra por palabra el turno {earlier}.",
    },
    "filler": {
        "en": "Turn {number} is filler that could follow any reply and says nothing of this "
        "person's situation.",
        "es": "El turno {number} es relleno que podría seguir a cualquier respuesta y no dice "
        "nada de la situación de esta persona.",
    },
    "fresh": {
        "en": "Every user turn is written for this conversation, and none repeats another.",
        "es": "Cada turno de la persona está escrito para esta conversación y ninguno repite otro.",
    },
    "steps_out": {
        "en": "Turn {number} steps out of the role ({slip!r}).",
        "es": "El turno {number} se sale del papel ({slip!r}).",
    },
    "speaks_as_assistant": {
        "en": "Turn {number} speaks as the assistant, not as the person ({said!r}).",
        "es": "El turno {number} habla como el asistente, no como la persona ({said!r}).",
    },
    "in_character": {
        "en": "No turn mentions a simulation, a test, a role-play or instructions, or speaks as "
        "the assistant.",
        "es": "Ningún turno menciona una simulación, una prueba, un juego de rol o unas "
        "instrucciones, ni habla como el asistente.",
    },
    "single_turn": {
        "en": "A single turn has no reply to follow.",
        "es": "Un solo turno no tiene respuesta a la que seguir.",
    },
    "responsive": {
        "en": "{following} of {total} turns after the first pick up the assistant's last reply.",
        "es": "{following} de {total} turnos después del primero retoman la última respuesta "
        "del asistente.",
    },
    "deaf": {
        "en": "{deaf} of {total} turns after the first ignore the assistant's last reply, the "
        "first at turn {number}.",
        "es": "{deaf} de {total} turnos después del primero ignoran la última respuesta del "
        "asistente, el primero en el turno {number}.",
    },
    "nothing_written": {
        "en": "The user wrote nothing.",
        "es": "La persona no escribió nada.",
    },
}

# Who the persona is, as the reasons name them.
GROUPS = {
    "en": {True: "a teenager", False: "an adult"},
    "es": {True: "un adolescente", False: "un adulto"},
}


def reason_language(tag: str) -> str:
    """The language the reasons are written in: Spanish for any Spanish tag, else English."""
    return SPANISH if tag.split("-", 1)[0].casefold() == SPANISH else "en"


def reason(key: str, language: str, **fields: object) -> str:
    """One reason in `language` ("en" or "es", from `reason_language`)."""
    return REASONS[key][language].format(**fields)


def group_words(teen: bool, language: str) -> str:
    return GROUPS[language][teen]
