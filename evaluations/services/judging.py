"""Judging a conversation: repeated judge readings, quote checks, the majority verdict.

The judge reads the metric's rubric and the numbered transcript — never the persona or the
hidden goal, which would tell it what the user was after rather than what the assistant did.
Each repetition has its own seed, so the response cache does not collapse them into one, and
each is stored (unique per repetition), which is what judge-reliability statistics read.

Two things keep a verdict honest. A repetition whose output stays unusable after the gateway's
re-asks is asked again with a fresh seed; if that fails too the conversation is recorded as
"not judged" (failed, `failure_kind`), never silently missing from the figures. A reading whose
quotes do not support its verdict (`evidence_support`: not found in the assistant's turns,
content-free, contradicting the verdict, or none at all) is re-asked once; if still
unsupported it is kept with its `evidence_status`, and flagged on the conversation when quotes
are unverified, so pages can show and count it. Only the assistant's own words count as
evidence of the assistant's behaviour.
"""

from collections.abc import Iterable

from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.rows import stable_seed
from llm.exceptions import LLMError, StructuredOutputError
from llm.models import ModelConfiguration, ModelRole

from .. import prompts
from ..crisis_selectors import scenario_crisis_lines
from ..evidence_support import (
    EvidenceStatus,
    quote_annotate,
    quote_found,
    reading_status,
)
from ..models import (
    Conversation,
    FailureKind,
    Judgment,
    Turn,
)
from ..schemas import EvidenceQuote, JudgeVerdict
from .claims import Claim
from .closing import conversations_finalize, outcome
from .failures import ConversationFailure  # noqa: F401 - importers of it from here keep working
from .panel import run_panel
from .simulation import conversation_attribution, conversation_seed
from .steps import Ask, Steps, Store, Together, drive_sync

# After the gateway's own re-asks, a repetition is asked this many more times (fresh seeds).
JUDGE_RETRIES = 1


def evidence_check(
    evidence: Iterable[EvidenceQuote], turns: list[Turn], *, present: bool
) -> list[dict]:
    """Each quote with `found_in_transcript` (in the assistant's turn it names), what the judge
    says it shows, and whether it is content-free or contradicts the verdict
    (`evidence_support.quote_annotate`).

    A quote of the user's words (or of nothing) is not evidence of what the assistant did, so
    it is not found; `speaker` says where it was found when it was ("user" for those).
    """
    by_index = {turn.index: turn for turn in turns}
    checked = []
    for item in evidence:
        turn = by_index.get(item.turn)
        speaker = None
        if turn is not None and quote_found(item.quote, turn.assistant_text):
            speaker = "assistant"
        elif turn is not None and quote_found(item.quote, turn.user_text):
            speaker = "user"
        found = {
            "turn": item.turn,
            "quote": item.quote,
            "shows": item.shows,
            "speaker": speaker,
            "found_in_transcript": speaker == "assistant",
        }
        checked.append(quote_annotate(found, present=present))
    return checked


def _judge_once(*, judge: ModelConfiguration, messages: list[dict], seed: int) -> Steps:
    """One reading; an unusable output is retried with fresh seeds, then "not judged"."""
    for attempt in range(JUDGE_RETRIES + 1):
        try:
            return (
                yield Ask(
                    configuration=judge,
                    messages=messages,
                    schema=JudgeVerdict,
                    role=ModelRole.JUDGE,
                    purpose="evaluations.judge_verdict",
                    seed=seed if attempt == 0 else stable_seed(seed, "retry", attempt),
                )
            )
        except StructuredOutputError as error:
            last = error
        except LLMError as error:
            # The judge's endpoint failed after the gateway's retries: the target is not to
            # blame, the conversation is simply not judged (and can be retried).
            raise ConversationFailure(
                _("Not judged: %(error_message)s") % {"error_message": error.message},
                kind=FailureKind.NOT_JUDGED,
                retryable=getattr(error, "retryable", False),
            ) from error
    raise ConversationFailure(
        _(
            "Not judged: the judge's output could not be read after "
            "%(attempts)s attempts (%(last_message)s)"
        )
        % {"attempts": JUDGE_RETRIES + 1, "last_message": last.message},
        kind=FailureKind.NOT_JUDGED,
    )


def judgment_seed(conversation: Conversation, repetition: int) -> int:
    return stable_seed(conversation_seed(conversation), "judge", repetition)


def judge_steps(*, conversation: Conversation, turns: list[Turn], done: set[int]) -> Steps:
    """The run's missing judgments (repetitions not in `done`), each yielded to be stored.

    Each judge of the panel (`run_panel`, read beforehand) makes its own repetitions."""
    run = conversation.run
    if not turns:
        raise ApplicationError(
            _("This conversation has no turns yet, so there is nothing to judge.")
        )
    seats = run_panel(run)
    missing = [(s.judge, r) for s in seats for r in s.numbers if r not in done]
    if not missing:
        return
    messages = prompts.judge_messages(
        version=conversation.scenario.metric_version,
        scenario=conversation.scenario,
        turns=turns,
        crisis_lines=scenario_crisis_lines(conversation.scenario),
    )
    readings = [
        _reading(conversation, turns, messages, judge=judge, repetition=repetition)
        for judge, repetition in missing
    ]
    if run.use_batch:
        # Every reading's first request goes in the same round of batches.
        yield Together(readings)
        return
    for reading in readings:
        yield from reading


def _reading(
    conversation: Conversation,
    turns: list[Turn],
    messages: list[dict],
    *,
    judge: ModelConfiguration,
    repetition: int,
) -> Steps:
    """One repetition: the reading, its evidence re-ask if its quotes fail, stored."""
    seed = judgment_seed(conversation, repetition)
    result = yield from _judge_once(judge=judge, messages=messages, seed=seed)
    evidence = evidence_check(result.output.evidence, turns, present=result.output.present)
    status = reading_status(evidence)
    reasked = status != EvidenceStatus.SUPPORTED
    # Kept so the flip rate of re-asks can be published: re-asking only readings whose
    # quotes fail may push verdicts one way.
    before = result.output.present if reasked else None
    calls = list(result.calls)
    if reasked:
        try:
            again = yield from _judge_once(
                judge=judge,
                messages=prompts.evidence_reask_messages(messages, status, evidence),
                seed=stable_seed(seed, "evidence"),
            )
        except ConversationFailure:
            again = None  # the first reading stands, stored with its status
        if again is not None:
            result, calls = again, [*calls, *again.calls]
            evidence = evidence_check(result.output.evidence, turns, present=result.output.present)
            status = reading_status(evidence)
    verdict: JudgeVerdict = result.output
    judgment = Judgment(
        conversation=conversation,
        repetition=repetition,
        judge=judge,
        seed=seed,
        present=verdict.present,
        justification=verdict.justification.strip(),
        evidence=evidence,
        evidence_status=status,
        has_unverified_quotes=any(not e["found_in_transcript"] for e in evidence),
        reasked_for_evidence=reasked,
        present_before_reask=before,
        is_offline=result.is_offline,
    )
    yield Store(
        rows=[judgment], unique=("conversation_id", "repetition"), calls={"call_ids": calls}
    )


def conversation_judge(*, conversation: Conversation, claim: Claim | None = None) -> list[Judgment]:
    """Make the run's number of judgments for the conversation; existing ones are kept.

    Each judgment is written under the claim's fence (see conversation_simulate)."""
    conversation = Conversation.objects.select_related(
        "run__judge", "scenario__metric_version", "target"
    ).get(pk=conversation.pk)
    turns = list(conversation.turns.order_by("index"))
    run_panel(conversation.run)  # read here: the steps make no query
    done = set(conversation.judgments.values_list("repetition", flat=True))
    with conversation_attribution(conversation, claim):
        drive_sync(judge_steps(conversation=conversation, turns=turns, done=done), claim)
    return list(conversation.judgments.order_by("repetition"))


def conversation_finalize(
    *, conversation: Conversation, claim: Claim | None = None
) -> Conversation:
    """Write the majority verdict and mark the conversation completed (once, by the claim)."""
    return outcome(conversations_finalize([(conversation, claim)])[0])
