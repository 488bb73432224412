"""What a kind of rated item must provide: its questions, its population, how to show it.

A rating form is data (`Question`s), so one definition drives validation, the rater's screen and
its keyboard shortcuts, and the agreement figures (which questions are nominal or ordinal).
"""

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db import models
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.exceptions import ApplicationError

Level = Literal["nominal", "ordinal"]
LANGUAGE_BATCH = 5_000


@dataclass(frozen=True)
class Choice:
    value: str
    # What the rater reads, in their language; ratings store `value`, never the label.
    label: str | Promise


@dataclass(frozen=True)
class Question:
    name: str
    # Read on the screen in the rater's language; ratings are stored by `name`.
    label: str | Promise
    choices: tuple[Choice, ...]
    # Ordinal questions list their choices from one end of the scale to the other.
    level: Level = "nominal"
    help: str | Promise = ""
    required: bool = True
    # Off the rater's screen: a question that does not apply to this item (the adapter says
    # why), kept in the form only so an answer already recorded stays valid.
    shown: bool = True

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(choice.value for choice in self.choices)

    def rank(self, value: str) -> int:
        """Position of `value` on the scale (ordinal agreement needs numbers)."""
        return self.values.index(value)


YES_NO = (Choice("yes", gettext_lazy("Yes")), Choice("no", gettext_lazy("No")))


@dataclass(frozen=True)
class Candidate:
    """One item a queue could sample, with what sampling and assignment need to know."""

    object_id: int
    strata: Mapping[str, str] = field(default_factory=dict)
    metric_id: int | None = None
    owner_id: int | None = None
    object_id_b: int = 0


class KindAdapter:
    """Base for the per-kind adapters; subclasses set `kind` and implement the three readers.

    Everything else that differs between kinds is an attribute or method here, which the rest
    of the app reads instead of testing which kind it has in hand.
    """

    kind: str = ""
    template_name: str = ""
    # What `queue_create` says when there is nothing to sample.
    nothing_to_sample: str | Promise = gettext_lazy(
        "There is nothing of this kind to sample from yet."
    )
    # Rated without the model's name: the rated conversations' scenarios stay off every public
    # path while a rating may still arrive (`review.blindness`).
    blind: bool = False
    # Rated by a named external panel rather than the project's own experts.
    external_raters: bool = False
    # The fewest ratings per item a queue may ask for, and why when it is more than one.
    min_required_ratings: int = 1
    min_required_reason: str | Promise = ""
    # A completed item decides whether its rubric criterion survives (`CriterionConsensus`).
    decides_criterion_consensus: bool = False
    # Its ratings speak for or against the item's metric (`metric_support`), and the phrase
    # a contested metric's reason uses for the supporting ones: stored in the metric's status
    # history, so it stays English like the rest of that reason (no rater reads it).
    contests_metric: bool = False
    support_phrase: str = ""
    # The stored run figure its ratings feed ("experts", "endorsement"), refreshed when they
    # change; and the part of a release's expert figures they make.
    run_figure: str = ""
    release_figure: str = ""
    # What the queue's page shows besides progress and agreement ("ranking" of simulators,
    # "poor_scenarios", rubric "consensus").
    queue_section: str = ""
    # Where the language a rater reads lives: the rated object's model and the lookup from it
    # to a language tag. A kind without one (or an object with none) is read in English.
    language_source: tuple[type[models.Model], str] | None = None

    def languages(self, object_ids: Sequence[int]) -> dict[int, str]:
        """The language of each rated object, by id; ids with no language are left out."""
        if self.language_source is None:
            return {}
        model, lookup = self.language_source
        found: dict[int, str] = {}
        # In slices, so a queue over a whole population never sends one huge IN list.
        for start in range(0, len(object_ids), LANGUAGE_BATCH):
            rows = model._default_manager.filter(
                pk__in=object_ids[start : start + LANGUAGE_BATCH]
            ).values_list("pk", lookup)
            found.update((pk, language) for pk, language in rows if language)
        return found

    def metric_support(self, rating) -> bool:
        """Whether `rating` supports its item's metric (kinds that `contests_metric`)."""
        raise NotImplementedError

    def questions(self, item) -> list[Question]:
        raise NotImplementedError

    def candidates(self) -> Iterable[Candidate]:
        """Everything a queue of this kind may sample from, in a stable order."""
        raise NotImplementedError

    def check_candidates(self, candidates: Sequence[Candidate]) -> None:
        """Raise when a population handed in (not drawn by `candidates`) holds items this kind
        may not rate; by default any item may be rated."""

    def render_context(self, item, assignment) -> dict[str, Any]:
        """What the rater's screen shows; never the model's identity."""
        raise NotImplementedError

    def presentation(self, item) -> dict[str, Any]:
        """Chosen once per rater and item at claim time (e.g. the order of a pair)."""
        return {}

    def orient_answers(self, item, assignment, answers: Mapping[str, str]) -> dict[str, str]:
        """Map answers between what the rater saw and the stored, canonical form (both ways)."""
        return dict(answers)

    def reference_answers(self, item) -> dict[str, str]:
        """The automated judge's answer per question, where there is one (judge verdicts)."""
        return {}

    def validate_answers(self, item, answers: Mapping[str, Any]) -> dict[str, str]:
        """Answers restricted to this item's questions; raises for missing or unknown values."""
        if not isinstance(answers, Mapping):
            raise ApplicationError(_("Answers must be a set of question → choice pairs."))
        cleaned: dict[str, str] = {}
        problems: list[str] = []
        for question in self.questions(item):
            value = answers.get(question.name)
            if value in (None, ""):
                if question.required:
                    problems.append(_("Answer “%(question)s”.") % {"question": question.label})
                continue
            if value not in question.values:
                problems.append(
                    _("“%(value)s” is not a choice for “%(question)s”.")
                    % {"value": value, "question": question.label}
                )
                continue
            cleaned[question.name] = value
        unknown = set(answers) - {q.name for q in self.questions(item)}
        if unknown:
            problems.append(
                _("Unknown questions: %(names)s.") % {"names": ", ".join(sorted(map(str, unknown)))}
            )
        if problems:
            raise ApplicationError(" ".join(problems))
        return cleaned

    def draft_answers(self, item, answers: Mapping[str, Any]) -> dict[str, str]:
        """Like `validate_answers` but partial: a draft keeps whatever valid choices it has."""
        if not isinstance(answers, Mapping):
            return {}
        valid = {q.name: q.values for q in self.questions(item)}
        return {
            name: value
            for name, value in answers.items()
            if name in valid and isinstance(value, str) and value in valid[name]
        }


class BlindPairMixin:
    """Two objects shown unlabeled in an order drawn per rater; answers are stored as
    "first"/"second" of the item's canonical order (object_id, object_id_b), so the order a
    rater saw never leaks into the results."""

    PAIR_QUESTIONS: tuple[str, ...] = ()

    def presentation(self, item) -> dict[str, Any]:
        return {"swap": secrets.randbelow(2) == 1}

    def orient_answers(self, item, assignment, answers: Mapping[str, str]) -> dict[str, str]:
        if not assignment.presentation.get("swap"):
            return dict(answers)
        flip = {"first": "second", "second": "first"}
        return {
            name: flip.get(value, value) if name in self.PAIR_QUESTIONS else value
            for name, value in answers.items()
        }


_ADAPTERS: dict[str, KindAdapter] = {}


def register(adapter: KindAdapter) -> KindAdapter | None:
    """Install `adapter` for its kind; returns the one it replaces (tests put it back)."""
    previous = _ADAPTERS.get(adapter.kind)
    _ADAPTERS[adapter.kind] = adapter
    return previous


def unregister(kind: str, *, restore: KindAdapter | None = None) -> None:
    if restore is not None:
        _ADAPTERS[kind] = restore
    else:
        _ADAPTERS.pop(kind, None)


def adapter_for(kind: str) -> KindAdapter:
    try:
        return _ADAPTERS[kind]
    except KeyError:
        raise ApplicationError(
            _("Items of kind “%(kind)s” cannot be rated yet: their adapter is not available.")
            % {"kind": kind}
        ) from None


def available_kinds() -> list[str]:
    return list(_ADAPTERS)


def kinds_with(attribute: str, value: Any = None) -> tuple[str, ...]:
    """The kinds whose adapter sets `attribute` (to `value`, or to anything true or non-empty),
    in registration order."""
    return tuple(
        kind
        for kind, adapter in _ADAPTERS.items()
        if (
            getattr(adapter, attribute) == value
            if value is not None
            else getattr(adapter, attribute)
        )
    )
