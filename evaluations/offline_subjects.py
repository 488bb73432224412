"""What each metric of the demo catalogue is about, for the offline demo model.

The offline scenario writer, simulated user, targets and judge read this table so that a demo
conversation is about its metric's subject: the situation names the `topic`, the simulated user
opens with `say` in their own words, a careful target answers with `good` and an agreeable one
with `bad`, and the judge finds the behaviour where the sentence that shows it was said.

`good` is the reply that passes the metric and `bad` the one that fails it, whatever the
polarity: for a behaviour to promote `good` shows it, for a behaviour to avoid `bad` does.
Each is one sentence, so the judge can quote it whole. Metrics not listed here (made in the
demo by a contributor, or by tests) get a subject built from their own criterion.
"""

import json
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple


class Subject(NamedTuple):
    topic: str  # a noun phrase, as the situation and the first anchor name the subject
    say: str  # the user's opening, first person, informal
    good: str  # one sentence of the reply that passes the metric
    bad: str  # one sentence of the reply that fails it


# The table itself is data, kept beside this module (one entry per catalogue metric name).
SUBJECTS: dict[str, Subject] = {
    name: Subject(**fields)
    for name, fields in json.loads(
        (Path(__file__).with_name("offline_subjects.json")).read_text(encoding="utf-8")
    ).items()
}


_STOP_WORDS = frozenset(
    """about after again also because been before being between both could does doing down
    each even every from have having here into just like make many more most much must need
    only other over same should some such than that their them then there these they this
    those through under until very want what when where which while will with without would
    your yours user users assistant someone something people person asks says tells gives
    help helps""".split()  # noqa: SIM905 - a word list reads better as text
)


@lru_cache(maxsize=16384)  # the same turns and anchors are read again and again
def content_stems(text: str) -> frozenset[str]:
    """Lower-cased content words of four letters or more, stop words left out, with a plain
    suffix stripped ("weeks" and "week", "worried" and "worry" meet)."""
    stems = set()
    for word in "".join(c if c.isalnum() else " " for c in text.casefold()).split():
        if len(word) < 4 or word in _STOP_WORDS:
            continue
        for suffix, replacement in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("s", "")):
            if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)] + replacement
                break
        if word not in _STOP_WORDS:
            stems.add(word)
    return frozenset(stems)


def subject_for(name: str, criterion: str = "") -> Subject:
    """The listed subject of the metric named `name`, or one built from its own words."""
    listed = SUBJECTS.get(name.strip())
    if listed is not None:
        return listed
    focus = (criterion or name or "the behaviour under test").strip().rstrip(".")
    focus = focus[0].lower() + focus[1:] if focus else "the behaviour under test"
    return Subject(
        topic=f"a question where this could come up: {focus}",
        say="hi, can i ask you about something that's been on my mind",
        good="",
        bad="",
    )


# The listed subjects by topic, longest first, to find the one a situation names.
_BY_TOPIC = sorted(SUBJECTS.values(), key=lambda s: -len(s.topic))
_SAY_STEMS = [(subject, content_stems(subject.say)) for subject in SUBJECTS.values()]


def subject_in_situation(situation: str) -> Subject | None:
    """The listed subject whose topic the situation names (the offline writer puts it there)."""
    return next((s for s in _BY_TOPIC if s.topic in situation), None)


def subject_of_opening(text: str) -> Subject | None:
    """The listed subject a user's opening message is about: most shared content words with its
    `say` (three quarters of them, so typing slips do not lose it), or None."""
    words = content_stems(text)
    best, best_share = None, 0.75
    for subject, stems in _SAY_STEMS:
        share = len(words & stems) / len(stems) if stems else 0
        if share >= best_share and (best is None or share > best_share):
            best, best_share = subject, share
    return best
