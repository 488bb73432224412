"""Adapters for items the evaluations app produces: scenarios, conversations, judge verdicts
(also shown to the external panel) and pairs of conversations by candidate user simulators.

Blindness: the rater's screen never names the target model or the simulator; the model is
kept in the item's strata for stratified sampling and for the figures only. And the rater cannot
look the conversation up: every conversation kind here samples only conversations not public
yet, and `review.blindness` keeps them (their whole scenario) off public pages, the API and
downloads until the queue closes (`evaluations.visibility`).
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from django.db.models import Prefetch
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.exceptions import ApplicationError
from evaluations.evidence import judgment_quotes, mark_quotes
from evaluations.models import Conversation, ConversationStatus, Scenario, Turn
from evaluations.visibility import conversations_public
from metrics_registry.models import Metric, MetricVersion

from .base import BlindPairMixin, Candidate, KindAdapter, Question, register
from .holds import blind_held_scenarios
from .questions import FORMS, PANEL_ADEQUATE, anchor_question
from .sources import MarkedTurn, metric_examples


def _first_subarea(version) -> str:
    slugs = sorted(subarea.slug for subarea in version.subareas.all())
    return slugs[0] if slugs else ""


# Sampling reads only these columns: a release has tens of thousands of conversations, and
# loading each with its scenario, metric version and run made queue creation take seconds.
_CANDIDATE_COLUMNS = (
    "pk",
    "scenario_id",
    "target_id",
    "scenario__age_context",
    "target__name",
    "scenario__metric_version_id",
    "scenario__metric_version__metric_id",
    "scenario__metric_version__metric__contributor_id",
    "run__simulator__name",
)


def _conversations():
    """Completed conversations visitors cannot read (yet): a conversation that was ever on a
    public page may have been read, so it is never rated blind."""
    public = conversations_public(held=blind_held_scenarios()).values("pk")
    return (
        Conversation.objects.filter(status=ConversationStatus.COMPLETED)
        .exclude(pk__in=public)
        .order_by("pk")
    )


class NotYetPublicMixin:
    """Items that must be blind: a population handed to `queue_create` is checked too."""

    nothing_to_sample = gettext_lazy(
        "There is no conversation of this kind that is not public yet. Blind ratings are drawn "
        "from a run before it is made official (or from a run that will not be)."
    )

    def check_candidates(self, candidates: Sequence[Candidate]) -> None:
        ids = {c.object_id for c in candidates} | {c.object_id_b for c in candidates} - {0}
        public = conversations_public(held=blind_held_scenarios()).filter(pk__in=ids)
        public = public.values_list("pk", flat=True)
        shown = sorted(public[:5])
        if shown:
            raise ApplicationError(
                _(
                    "Blind ratings need conversations that are not public yet; these are: "
                    "%(conversations)s. Rate a run before it is made official, or a run that will "
                    "not be."
                )
                % {"conversations": ", ".join(map(str, shown))}
            )


def _first_subareas(version_ids: set[int]) -> dict[int, str]:
    """The alphabetically first subarea slug of each metric version, in one query."""
    through = MetricVersion.subareas.through
    first: dict[int, str] = {}
    rows = through.objects.filter(metricversion_id__in=version_ids).values_list(
        "metricversion_id", "subarea__slug"
    )
    for version_id, slug in rows:
        if version_id not in first or slug < first[version_id]:
            first[version_id] = slug
    return first


def _conversation_rows(conversations) -> list[dict]:
    rows = list(conversations.values(*_CANDIDATE_COLUMNS))
    subareas = _first_subareas({row["scenario__metric_version_id"] for row in rows})
    for row in rows:
        row["subarea"] = subareas.get(row["scenario__metric_version_id"], "")
    return rows


def _conversation_candidate(row: dict, **extra) -> Candidate:
    return Candidate(
        object_id=row["pk"],
        strata={
            "subarea": row["subarea"],
            "age_context": row["scenario__age_context"],
            "model": row["target__name"],
            **extra.pop("strata", {}),
        },
        metric_id=row["scenario__metric_version__metric_id"],
        owner_id=row["scenario__metric_version__metric__contributor_id"],
        **extra,
    )


def _conversation_for_screen(pk: int) -> Conversation:
    return (
        Conversation.objects.select_related(
            "scenario__metric_version__metric", "scenario__metric_version__label_category"
        )
        .prefetch_related(Prefetch("turns", queryset=Turn.objects.order_by("index")))
        .get(pk=pk)
    )


class ScenarioAdapter(KindAdapter):
    kind = "scenario"
    template_name = "review/items/_scenario.html"
    release_figure = "scenarios"
    queue_section = "poor_scenarios"
    language_source = (Scenario, "language")

    def questions(self, item) -> list[Question]:
        return list(FORMS["scenario"])

    def candidates(self) -> Iterable[Candidate]:
        scenarios = (
            Scenario.objects.active()
            .expanded()
            .select_related("metric_version__metric")
            .prefetch_related("metric_version__subareas")
            .order_by("pk")
        )
        for scenario in scenarios:
            version = scenario.metric_version
            yield Candidate(
                object_id=scenario.pk,
                strata={
                    "subarea": _first_subarea(version),
                    "age_context": scenario.age_context,
                    "model": "",
                },
                metric_id=version.metric_id,
                owner_id=version.metric.contributor_id,
            )

    def render_context(self, item, assignment) -> dict[str, Any]:
        scenario = Scenario.objects.select_related("metric_version").get(pk=item.object_id)
        return {"scenario": scenario, "version": scenario.metric_version}


class ConversationAdapter(NotYetPublicMixin, KindAdapter):
    kind = "conversation"
    template_name = "review/items/_conversation.html"
    blind = True
    release_figure = "conversations"
    # Its realism answers are the experts' side of the fidelity check's agreement.
    run_figure = "fidelity"
    language_source = (Conversation, "scenario__language")

    def questions(self, item) -> list[Question]:
        anchors = (
            Conversation.objects.filter(pk=item.object_id)
            .values_list("scenario__anchors", flat=True)
            .first()
        ) or []
        return [
            *FORMS["conversation"],
            *(
                anchor_question(index, str(anchor.get("text", "")))
                for index, anchor in enumerate(anchors, start=1)
            ),
        ]

    def candidates(self) -> Iterable[Candidate]:
        return (_conversation_candidate(row) for row in _conversation_rows(_conversations()))

    def render_context(self, item, assignment) -> dict[str, Any]:
        conversation = _conversation_for_screen(item.object_id)
        return {
            "conversation": conversation,
            "scenario": conversation.scenario,
            "version": conversation.scenario.metric_version,
            "show_scenario": True,
        }


class JudgeVerdictAdapter(NotYetPublicMixin, KindAdapter):
    kind = "judge_verdict"
    template_name = "review/items/_judge_verdict.html"
    # Internal experts rate the judge's verdict, so they see it; the external panel gives its
    # own verdict first and never sees the judge's.
    shows_judge = True
    blind = True
    contests_metric = True
    support_phrase = "agreed with the judge"
    run_figure = "endorsement"
    release_figure = "endorsement"
    language_source = (Conversation, "scenario__language")

    def questions(self, item) -> list[Question]:
        return list(FORMS[self.kind])

    def candidates(self) -> Iterable[Candidate]:
        judged = _conversations().filter(verdict_present__isnull=False)
        return (_conversation_candidate(row) for row in _conversation_rows(judged))

    def metric_support(self, rating) -> bool:
        return rating.answers.get("agreement") == "agree"

    def reference_answers(self, item) -> dict[str, str]:
        present = (
            Conversation.objects.filter(pk=item.object_id)
            .values_list("verdict_present", flat=True)
            .first()
        )
        if present is None:
            return {}
        return {"verdict": "present" if present else "absent"}

    def render_context(self, item, assignment) -> dict[str, Any]:
        conversation = _conversation_for_screen(item.object_id)
        context = {
            "conversation": conversation,
            "version": conversation.scenario.metric_version,
            "shows_judge": self.shows_judge,
        }
        if self.shows_judge:
            # The justification of a judgment that agrees with the (majority) verdict, its
            # quotes marked in the transcript as the public conversation page marks them.
            judgment = (
                conversation.judgments.filter(present=conversation.verdict_present)
                .order_by("repetition")
                .first()
            )
            quotes = judgment_quotes([judgment] if judgment else [])
            context["judgment"] = judgment
            context["marked_turns"] = [
                MarkedTurn(
                    turn,
                    mark_quotes(turn.user_text, quotes.get(turn.index, [])),
                    mark_quotes(turn.assistant_text, quotes.get(turn.index, [])),
                )
                for turn in conversation.turns.all()
            ]
        else:
            # The external panel judges whether the metric's examples suffice: show them.
            context["examples"] = metric_examples(conversation.scenario.metric_version.metric)
        return context


class ExternalPanelAdapter(JudgeVerdictAdapter):
    kind = "external_panel"
    shows_judge = False
    external_raters = True
    run_figure = "experts"
    release_figure = "panel"

    def questions(self, item) -> list[Question]:
        """Whether the metric's examples are adequate is asked only where it has some; where it
        has none the question is neither shown nor required (an answer already given, or sent
        by an older client, is still accepted)."""
        questions = super().questions(item)
        metric_id = (
            Conversation.objects.filter(pk=item.object_id)
            .values_list("scenario__metric_version__metric_id", flat=True)
            .first()
        )
        if metric_id is not None and metric_examples(Metric(pk=metric_id)):
            return questions
        return [
            replace(q, required=False, shown=False) if q is PANEL_ADEQUATE else q for q in questions
        ]

    def metric_support(self, rating) -> bool:
        # The panel gives its own verdict: support is agreeing with the judge's.
        return rating.answers.get("verdict") == self.reference_answers(rating.item).get("verdict")


class SimulatorPairAdapter(NotYetPublicMixin, BlindPairMixin, KindAdapter):
    """Two conversations of the same scenario with the same target, simulated by two candidate
    user simulators (the runs' simulator configurations)."""

    kind = "simulator_pair"
    template_name = "review/items/_simulator_pair.html"
    blind = True
    queue_section = "ranking"
    # Both conversations of a pair simulate the same scenario.
    language_source = (Conversation, "scenario__language")
    PAIR_QUESTIONS = ("more_realistic", "presses_harder")

    def questions(self, item) -> list[Question]:
        return list(FORMS["simulator_pair"])

    def candidates(self) -> Iterable[Candidate]:
        # One conversation per (scenario, target, simulator): the first one simulated.
        chosen: dict[tuple[int, int], dict[str, dict]] = defaultdict(dict)
        # Imported transcripts had no simulator to compare.
        simulated = _conversations().filter(source_line__isnull=True)
        for row in _conversation_rows(simulated):
            slot = chosen[(row["scenario_id"], row["target_id"])]
            slot.setdefault(row["run__simulator__name"], row)
        for (_scenario, _target), by_simulator in sorted(chosen.items()):
            for first, second in combinations(sorted(by_simulator), 2):
                a, b = by_simulator[first], by_simulator[second]
                yield _conversation_candidate(
                    a,
                    object_id_b=b["pk"],
                    strata={"simulator_first": first, "simulator_second": second},
                )

    def render_context(self, item, assignment) -> dict[str, Any]:
        conversations = [
            _conversation_for_screen(item.object_id),
            _conversation_for_screen(item.object_id_b),
        ]
        if assignment.presentation.get("swap"):
            conversations.reverse()
        return {
            "conversations": conversations,
            "scenario": conversations[0].scenario,
            "version": conversations[0].scenario.metric_version,
        }


for adapter in (
    ScenarioAdapter(),
    ConversationAdapter(),
    JudgeVerdictAdapter(),
    ExternalPanelAdapter(),
    SimulatorPairAdapter(),
):
    register(adapter)


def run_conversation_candidates(run, *, judged: bool) -> list[Candidate]:
    """The run's completed conversations not public yet, as candidates stratified also by the
    metric's polarity (calibration and triage queues); ``judged``: only those with a verdict
    (a panel tie has none)."""
    conversations = _conversations().filter(run=run)
    if judged:
        conversations = conversations.filter(verdict_passed__isnull=False)
    rows = _conversation_rows(conversations)
    polarity = dict(
        conversations.values_list("pk", "scenario__metric_version__polarity").order_by()
    )
    return [_conversation_candidate(row, strata={"polarity": polarity[row["pk"]]}) for row in rows]
