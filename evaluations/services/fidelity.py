"""The fidelity check: a checker model reads a finished simulation and says, criterion by
criterion, whether the simulated user did its job (`models.FidelityReading`).

It runs after the simulation, beside the anchor check, on the run's fidelity checker (its judge
unless one is named), in the engine like judging (`fidelity_steps`) or one call at a time
(`conversation_fidelity_check`). Two things are not left to the model: repeated user lines are
counted here, and a repeat fails "no stock or repeated lines" whatever the checker said; and a
quote counts as evidence only if it is found in the user turn it names.

The check measures, it does not decide a verdict: if its output stays unusable the conversation
goes on without a reading, and the fidelity figures count it as not checked.
"""

import logging
import re

from core.rows import stable_seed
from llm.exceptions import LLMError
from llm.models import ModelConfiguration, ModelRole

from ..evidence_support import normalise_for_quotes, quote_found
from ..fidelity_prompts import fidelity_check_messages
from ..models import CRITERION_FIELDS, Conversation, FidelityCriterion, FidelityReading, Turn
from ..schemas import FidelityCheck
from .claims import Claim
from .simulation import conversation_attribution, conversation_seed
from .steps import Ask, Steps, Store, drive_sync

logger = logging.getLogger(__name__)

REASON_LIMIT = 1200  # characters; a longer reason is cut at its last full sentence
_WORDS = re.compile(r"\w+")


def fidelity_checker(run) -> ModelConfiguration:
    """The configuration that checks a run's simulated users: its own, else the judge."""
    return run.fidelity_checker or run.judge


def repeated_lines(turns: list[Turn]) -> list[int]:
    """The user turns that repeat an earlier one word for word (case, spacing and punctuation
    aside): the numbers of the repeats, not of the first occurrences."""
    seen: set[str] = set()
    repeats = []
    for turn in turns:
        key = " ".join(_WORDS.findall(normalise_for_quotes(turn.user_text_clean)))
        if key and key in seen:
            repeats.append(turn.index)
        seen.add(key)
    return repeats


def whole_sentences(text: str, limit: int = REASON_LIMIT) -> str:
    """`text` within `limit` characters, cut after its last full sentence, never mid-sentence."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    return head[: end + 1] if end > 0 else head.rsplit(" ", 1)[0] + " …"


def fidelity_reading(
    check: FidelityCheck,
    *,
    conversation: Conversation,
    turns: list[Turn],
    checker: ModelConfiguration,
    seed: int,
    is_offline: bool,
) -> FidelityReading:
    """The stored reading of a checker's answer: one entry per criterion, in order, quotes
    verified against the user's turns, the counted repeats applied."""
    answers = {answer.criterion: answer for answer in check.criteria}
    by_turn = {turn.index: turn.user_text_clean for turn in turns}
    repeats = repeated_lines(turns)
    entries, held = [], {}
    for criterion in FidelityCriterion:
        answer = answers.get(criterion.value)
        if answer is None:
            entry = {
                "criterion": criterion.value,
                "held": False,
                "turn": None,
                "quote": "",
                "found": False,
                "reason": "The checker gave no answer for this criterion.",
            }
        else:
            turn = answer.turn if answer.turn in by_turn else None
            quote = answer.quote.strip()[:2000]
            entry = {
                "criterion": criterion.value,
                "held": answer.held,
                "turn": turn,
                "quote": quote,
                "found": bool(turn and quote and quote_found(quote, by_turn[turn])),
                "reason": whole_sentences(answer.reason),
            }
        if criterion == FidelityCriterion.FRESH and repeats and entry["held"]:
            first = repeats[0]
            entry.update(
                held=False,
                turn=first,
                quote=by_turn[first][:2000],
                found=True,
                reason=f"Turn {first} repeats an earlier user turn word for word "
                f"({len(repeats)} repeated in all); the checker had not flagged it.",
            )
        entries.append(entry)
        held[CRITERION_FIELDS[criterion]] = entry["held"]
    return FidelityReading(
        conversation=conversation,
        checker=checker,
        seed=seed,
        passed=all(held.values()),
        repeated_lines=len(repeats),
        criteria=entries,
        is_offline=is_offline,
        **held,
    )


def fidelity_steps(*, conversation: Conversation, turns: list[Turn]) -> Steps:
    """Ask the checker and yield the reading (the caller checked none is stored)."""
    if not turns or conversation.is_imported:
        # An imported transcript has no simulated user whose fidelity could be read.
        return None
    checker = fidelity_checker(conversation.run)
    seed = stable_seed(conversation_seed(conversation), "fidelity")
    try:
        result = yield Ask(
            configuration=checker,
            messages=fidelity_check_messages(scenario=conversation.scenario, turns=turns),
            schema=FidelityCheck,
            role=ModelRole.FIDELITY_CHECKER,
            purpose="evaluations.fidelity_check",
            seed=seed,
        )
    except LLMError as error:
        # Unusable output or an endpoint error alike: the figures count it as not checked.
        logger.warning("Fidelity check of conversation %s failed: %s", conversation.pk, error)
        return None
    reading = fidelity_reading(
        result.output,
        conversation=conversation,
        turns=turns,
        checker=checker,
        seed=seed,
        is_offline=result.is_offline,
    )
    stored = yield Store(rows=[reading], unique=("conversation",), calls={"call_ids": result.calls})
    return stored[0] if stored else None


def conversation_fidelity_check(
    *, conversation: Conversation, claim: Claim | None = None
) -> FidelityReading | None:
    """Check and store the conversation's fidelity; a stored reading is kept."""
    conversation = Conversation.objects.select_related(
        "run__judge", "run__fidelity_checker", "scenario"
    ).get(pk=conversation.pk)
    stored = FidelityReading.objects.filter(conversation=conversation).first()
    if stored is not None:
        return stored
    turns = list(conversation.turns.order_by("index"))
    with conversation_attribution(conversation, claim):
        drive_sync(fidelity_steps(conversation=conversation, turns=turns), claim)
    return FidelityReading.objects.filter(conversation=conversation).first()
