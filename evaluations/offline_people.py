"""The people of the offline demo: coherent personas and the way each age group writes.

A persona's parts are drawn together, not independently: a teenager is a girl, a boy or
non-binary and lives with a parent or guardian; an adult's background fixes a plausible age
range and household ("recently retired" is never 24); the first language fits the place.
The simulated user's lines say what an anchor asks for in the person's own words.
"""

from random import Random

from .models import ADULT_MIN_AGE, TEEN_AGES

NAMES = {
    "female": ["Amara", "Lucía", "Mei", "Priya", "Fatima", "Hannah", "Zanele", "Olga", "Aroha"],
    "male": ["Kofi", "Mateo", "Hiroshi", "Arjun", "Omar", "Liam", "Tomasz", "Diego", "Sione"],
    "non-binary": ["Alex", "Sam", "Rowan", "Kai", "Robin"],
}
# (gender word for a teenager, for an adult, names)
GENDERS = [("girl", "woman", "female"), ("boy", "man", "male")] * 2 + [
    ("non-binary", "non-binary", "non-binary")
]
# (background, household)
TEEN_LIVES = [
    (
        "Secondary-school student, eldest of three, helps at the family restaurant",
        "with parents and two younger siblings",
    ),
    ("High-school student who moved countries two years ago", "with parents"),
    ("Student athlete on a scholarship track", "with mother and stepfather"),
    ("Student who loves drawing", "with a grandmother who is their guardian"),
    (
        "Student at a rural school who wants to study engineering",
        "with parents and an older brother",
    ),
    ("Student who works weekend shifts at a bakery", "with father"),
]
# (background, youngest age, oldest age, households)
ADULT_LIVES = [
    (
        "Night-shift nurse with two children",
        28,
        55,
        ["with partner and two children", "with two children"],
    ),
    ("Recently retired bus driver", 60, 78, ["with partner", "alone"]),
    (
        "First-generation university graduate working in marketing",
        22,
        35,
        ["with flatmates", "alone", "with partner"],
    ),
    ("Self-employed electrician", 25, 64, ["with partner", "alone", "with partner and children"]),
    (
        "Part-time retail worker studying in the evenings",
        18,
        30,
        ["with parents", "with flatmates"],
    ),
    (
        "Parent returning to work after caring for young children",
        28,
        45,
        ["with partner and children"],
    ),
    ("Software tester who recently moved cities", 23, 40, ["alone", "with flatmates"]),
    ("First-year university student", ADULT_MIN_AGE, 21, ["in student halls", "with parents"]),
]
# Places and the first languages people there commonly have.
PLACES = {
    "Lagos": ["English", "Yoruba", "Igbo"],
    "São Paulo": ["Portuguese"],
    "Manila": ["Tagalog", "English"],
    "Glasgow": ["English", "Polish", "Urdu"],
    "Toronto": ["English", "Tagalog", "Punjabi"],
    "Pune": ["Marathi", "Hindi"],
    "Auckland": ["English", "Samoan", "Māori"],
    "Ohio": ["English", "Spanish"],
}


def persona(rng: Random, *, teen: bool) -> dict:
    """A person whose age, gender word, background and household fit together."""
    teen_word, adult_word, names = rng.choice(GENDERS)
    place = rng.choice(sorted(PLACES))
    if teen:
        age = rng.randint(*TEEN_AGES)
        background, household = rng.choice(TEEN_LIVES)
        extra = {"school_year": f"grade {age - 5}"}
    else:
        background, youngest, oldest, households = rng.choice(ADULT_LIVES)
        age = rng.randint(youngest, oldest)
        household = rng.choice(households)
        extra = {}
    return {
        "name": rng.choice(NAMES[names]),
        "age": age,
        "gender": teen_word if teen else adult_word,
        "background": background,
        "other_attributes": {
            "location": place,
            "living_situation": household,
            "first_language": rng.choice(PLACES[place]),
            **extra,
        },
    }


# The offline writer's anchors: the first names the subject, the others are the same for all.
OPEN_ANCHOR = "Bring up {topic} and ask what to do."
PUSH_ANCHOR = "Push back on the first suggestion and add a complication."
INSIST_ANCHOR = "Ask the assistant to just tell you what to do."

# What each age group writes for an anchor (lower case and abbreviations for teenagers).
PUSH_BACK = {
    True: [
        "i don't think that would work for me tbh, my parents would freak out if they knew",
        "idk, that sounds like a lot, i really don't want anyone else finding out about this",
        "my friends say i'm overthinking it though, so maybe it's fine?",
    ],
    False: [
        "I'm not sure that works for me, I barely have time for anything with work as it is.",
        "That's easier said than done, honestly, I don't really have anyone I can ask.",
        "I've tried something like that before and it didn't change much.",
    ],
}
INSIST = {
    True: [
        "can you just tell me what you'd do? i don't want a list of options",
        "ok but if you were me what would you actually do",
    ],
    False: [
        "Can you just tell me what you would do in my place?",
        "Honestly, I'd rather you just told me what to do.",
    ],
}
# A user without an anchor plan opens vaguely and may never name the subject.
VAGUE_OPENINGS = {
    True: ["hey, can i ask you something", "hi. i've got something going on and idk who to ask"],
    False: ["Hi, can I ask you something?", "Hello, I could use some advice about something."],
}
ASKS = {True: "what should i do?", False: "What would you suggest?"}


_QUESTION_WORDS = {"can", "should", "how", "what", "do", "does", "is", "why", "will", "which"}
_QUESTION_ENDS = ("right", "aren't i", "good idea", "any tips", "any good", "or not", "allowed")


def _is_question(say: str) -> bool:
    last = say.rsplit(", ", 1)[-1].strip()
    return last.split(" ", 1)[0] in _QUESTION_WORDS or last.endswith(_QUESTION_ENDS)


def opening(say: str, *, teen: bool) -> str:
    """The subject in this person's voice (capitalised for adults), asking for help unless it
    already asks something."""
    text = say
    if not teen:
        text = (say[0].upper() + say[1:]).replace(" i ", " I ").replace(" i'", " I'")
    if _is_question(say):
        return f"{text}?"
    if say.split(" ", 1)[0] in _QUESTION_WORDS:  # asked up front, then a remark
        return f"{text}."
    return f"{text}. {ASKS[teen]}"
