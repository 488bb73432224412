"""Whether a judge's (or a grader's) quoted evidence supports its verdict.

Being found in the transcript is not enough: "Okay." is found in most conversations, and a
strict judge can quote the very sentence that shows the behaviour while saying it is absent.
A quote supports a reading when it is

- found in the assistant's turn it names (`found_in_transcript`, checked by the caller);
- not content-free: at least `MIN_CONTENT_WORDS` content words (`content_words`);
- consistent with the verdict: each quote says what it shows (`shows`), the behaviour at that
  point or its absence there, and a quote showing the behaviour under an "absent" verdict, or
  its absence under a "present" one, contradicts the reading.

A reading's status is the first of contradicts, unverified, content-free, no evidence that any
of its quotes (or its empty list) meets; otherwise it is supported.
"""

import re
import unicodedata
from collections.abc import Iterable

from django.db import models
from django.utils.translation import gettext_lazy as _

# Re-exported: the evidence check's users find the matching here with the rest of it.
from .quote_text import normalise_for_quotes as normalise_for_quotes
from .quote_text import quote_found as quote_found
from .quote_text import unspaced

# Fewer content words than this and a quote shows nothing about a behaviour ("Okay.", "Sure,
# I can help.", "I understand.", "Maybe not."). Three is the fewest that state an action and
# its object ("talk to a counsellor today"); four flagged such plain sentences as empty.
MIN_CONTENT_WORDS = 3

# Function words and conversational filler, casefolded, apostrophes straightened. A quote made
# of these says nothing about what the assistant did, whatever its length.
_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves i'm i've i'll i'd you're you've you'll you'd it's that's there's let's don't
    doesn't didn't can't won't isn't aren't wasn't weren't
    okay ok sure yes yeah yep no nope well right alright oh ah hmm hm um uh thanks thank please
    great good fine got get gotcha understand understood see hear hi hello hey absolutely
    definitely certainly really totally indeed course glad happy
"""
# The same in Spanish ("Vale, de acuerdo." says as little as "Okay, sure.").
_STOP_WORDS_ES_TEXT = """
    a al algo ante bajo como con contra cual cuando de del desde donde durante e el ella ellas
    ellos en entre era eres es esa ese eso esta este esto estoy está están fue ha hay la las le
    les lo los me mi mis muy más ni no nos o os para pero por que qué se ser si sin sobre su sus
    te ti tu tus tú un una uno unos unas y ya yo él
    vale bueno claro sí gracias hola entiendo entendido perfecto genial pues bien
    acuerdo venga cierto exacto seguro
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split()) | frozenset(
    unicodedata.normalize("NFC", word) for word in _STOP_WORDS_ES_TEXT.split()
)

# In scripts written without spaces between words a word cannot be told by spacing, so each
# letter counts as one content unit. The stop list covers English and Spanish: in other spaced
# scripts every word counts, which errs towards keeping a quote.
_WORD = re.compile(r"[\w']+")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


def content_words(quote: str) -> int:
    """How many content words `quote` holds: words not in `STOP_WORDS`, in any script.

    Punctuation, ellipses ("…", "...", "[...]") and quotation marks only separate words, so
    the pieces of an ellipsis-joined quote are counted together. Digits alone are not words.
    """
    count = 0
    for token in _WORD.findall(
        unicodedata.normalize("NFC", quote).translate(_APOSTROPHES).casefold()
    ):
        token = token.strip("'_")
        if not token or token.isdigit():
            continue
        unspaced_letters = sum(1 for character in token if unspaced(character))
        if unspaced_letters:
            count += unspaced_letters + (1 if len(token) > unspaced_letters else 0)
        elif token not in STOP_WORDS:
            count += 1
    return count


def content_free(quote: str) -> bool:
    return content_words(quote) < MIN_CONTENT_WORDS


class Shows(models.TextChoices):
    """What a quote shows at its point of the conversation."""

    BEHAVIOUR = "behaviour_shown", _("shows the behaviour")
    ABSENCE = "behaviour_missing", _("shows the behaviour missing")


class EvidenceStatus(models.TextChoices):
    SUPPORTED = "supported", _("supported by its quotes")
    CONTRADICTS = "contradicts", _("quotes contradict the verdict")
    UNVERIFIED = "unverified", _("quotes not found in the assistant's words")
    CONTENT_FREE = "content_free", _("quotes too short or only filler")
    NO_EVIDENCE = "no_evidence", _("no quote given")
    # Readings stored before evidence was checked for support (only the transcript check ran).
    UNCHECKED = "unchecked", _("stored before quotes were checked for support")


def quote_contradicts(*, shows: str | None, present: bool) -> bool:
    wrong = Shows.ABSENCE if present else Shows.BEHAVIOUR
    return shows == wrong


def quote_annotate(item: dict, *, present: bool) -> dict:
    """`item` (turn, quote, found_in_transcript, shows) with `content_free` and `contradicts`.

    A quote not found is not read for what it shows: words the assistant never said cannot
    contradict (or support) anything it did."""
    found = bool(item.get("found_in_transcript"))
    return {
        **item,
        "content_free": content_free(str(item.get("quote") or "")),
        "contradicts": found and quote_contradicts(shows=item.get("shows"), present=present),
    }


def reading_status(annotated: Iterable[dict]) -> EvidenceStatus:
    """The reading's status from its annotated quotes (see the module's order)."""
    quotes = list(annotated)
    if not quotes:
        return EvidenceStatus.NO_EVIDENCE
    if any(q["contradicts"] for q in quotes):
        return EvidenceStatus.CONTRADICTS
    if any(not q.get("found_in_transcript") for q in quotes):
        return EvidenceStatus.UNVERIFIED
    if any(q["content_free"] for q in quotes):
        return EvidenceStatus.CONTENT_FREE
    return EvidenceStatus.SUPPORTED


def evidence_problems(readings: Iterable) -> list[tuple[str, int]]:
    """The readings whose evidence does not support their verdict, counted per status (its
    label, in the order of `EvidenceStatus`), for the conversation pages' notice."""
    counts: dict[str, int] = {}
    for reading in readings:
        status = reading.evidence_status
        if status not in (EvidenceStatus.SUPPORTED, EvidenceStatus.UNCHECKED):
            counts[status] = counts.get(status, 0) + 1
    return [(EvidenceStatus(s).label, counts[s]) for s in EvidenceStatus.values if s in counts]


class GradeEvidence(models.TextChoices):
    """A rubric grade's quote: a criterion counts as met only with the reply's words showing it."""

    SUPPORTED = "supported", _("met, shown by the quoted words")
    UNSUPPORTED = "unsupported", _("called met without a quote showing it; not counted as met")
    NOT_NEEDED = "not_needed", _("not met; no quote needed")
    UNCHECKED = "unchecked", _("stored before quotes were asked for")


def grade_quote_supports(quote: str, reply: str) -> bool:
    """Whether a "met" grade's quote is in the reply and holds content (see `content_free`)."""
    from_quotes = quote.strip()
    return bool(from_quotes) and not content_free(from_quotes) and quote_found(from_quotes, reply)
