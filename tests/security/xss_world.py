"""A world whose every user-written text field (`xss_fields.COVERED`) holds XSS payloads.

People's text goes in through the platform's own forms and services (the contact form, the
admin's forms, submission, candidate, metric, release, scenario, queue, rating and model
configuration services, the rubric importer); model output and the platform's error texts are
written onto rows the pipeline shape produces, since the pipeline stores them verbatim. Long
fields hold the whole corpus; short ones one payload that fits.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from itertools import count

from django.apps import apps
from django.contrib import admin
from django.db import models
from django.forms.models import model_to_dict
from django.test import RequestFactory

from core.roles import Role
from evaluations.models import (
    AnchorCoverage,
    Conversation,
    EvaluationRun,
    Judgment,
    RubricDimension,
    RubricGrade,
    RubricItem,
    RubricResponse,
    Turn,
)
from evaluations.services.rubric_imports import rubric_items_import
from evaluations.services.scenarios import scenario_update
from llm.models import CallOutcome, LLMCall, LLMResponseCache, ModelConfiguration, ModelRole
from llm.services import configuration_save
from metrics_registry.models import Area, LabelCategory, Release, Subarea
from metrics_registry.services import (
    benchmark_get_or_create,
    metric_status_change,
    metric_version_create,
    release_create,
    release_publish,
    release_update,
)
from results.services import summaries_refresh
from review.services import assignment_claim, queue_create, rating_submit
from review.services.assignments import rating_draft_save
from review.services.feedback import contested_metric_keep
from submissions import enquiries
from submissions.citations import citations_parse
from submissions.forms import EnquiryForm
from submissions.models import CandidateChange, MetricCandidate
from submissions.services import (
    candidate_reject,
    candidate_return,
    candidate_update,
    submission_create,
    submission_withdraw,
)
from tests.evaluations.factories import ScenarioFactory, current_version
from tests.factories import UserFactory
from tests.metrics_registry.factories import MetricFactory
from tests.results.factories import completed_run
from tests.security.xss_corpus import CORPUS, PAYLOADS

from .xss_fields import APPS

PASSWORD = "correct-horse-battery"
# Evidence that a stored value came from the corpus.
MARKERS = ("lert(1)", "alert&#40;", "__xss", "base64,")
_next = count()


def fit(limit: int) -> str:
    """The next payload that fits in `limit` characters (cycling through the corpus)."""
    while True:
        payload = PAYLOADS[next(_next) % len(PAYLOADS)]
        if len(payload) <= limit:
            return payload


def inline(limit: int = 10_000) -> str:
    """Several payloads on one line (for single-line fields), within `limit` characters."""
    parts, size = [], 0
    for payload in PAYLOADS:
        if size + len(payload) + 1 > limit:
            break
        parts.append(payload)
        size += len(payload) + 1
    return " ".join(parts)


@dataclass
class World:
    users: dict[str, object] = field(default_factory=dict)
    objects: dict[str, object] = field(default_factory=dict)


def _admin_save(instance: models.Model, user, **changes) -> models.Model:
    """Save `changes` through the model's own admin form, as a maintainer would."""
    model_admin = admin.site._registry[type(instance)]
    request = RequestFactory().post("/admin/")
    request.user = user
    form_class = model_admin.get_form(request, instance, change=True)
    initial = {}
    for name, value in model_to_dict(instance).items():
        if name not in form_class.base_fields:
            continue
        if isinstance(value, list) and value and isinstance(value[0], models.Model):
            value = [obj.pk for obj in value]  # many-to-many: the form takes ids
        elif isinstance(instance._meta.get_field(name), models.JSONField):
            value = json.dumps(value)
        initial[name] = value
    data = {**initial, **changes}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    form = form_class(data=data, instance=instance)
    assert form.is_valid(), (type(instance).__name__, form.errors)
    return form.save()


def _users() -> dict[str, object]:
    make = UserFactory
    return {
        "contributor": make(
            email="c@example.org", username="c@example.org", roles=[Role.CONTRIBUTOR]
        ),
        "expert": make(
            email="e@example.org",
            username="e@example.org",
            roles=[Role.CONTRIBUTOR, Role.EXPERT_REVIEWER],
        ),
        "maintainer": make(
            email="m@example.org",
            username="m@example.org",
            roles=[Role.CONTRIBUTOR, Role.RESEARCHER, Role.MAINTAINER],
        ),
    }


def _taxonomy(maintainer) -> None:
    for model in (Area, Subarea, LabelCategory):
        obj = model.objects.order_by("pk").first()
        _admin_save(obj, maintainer, name=fit(100), description=CORPUS)
    dimension = RubricDimension.objects.get(slug="context_seeking")  # the native item's
    _admin_save(
        dimension,
        maintainer,
        name=fit(120),
        description=CORPUS,
        frameworks=json.dumps(PAYLOADS[:5]),
    )


def _registry(w: World) -> None:
    maintainer = w.users["maintainer"]
    benchmark = benchmark_get_or_create(
        slug="hostile-bench",
        name=fit(200),
        citation=CORPUS,
        url="https://bench.example/?q=<svg/onload=alert(1)>",
        description=CORPUS,
        license=fit(200),
    )
    metrics = [
        MetricFactory(
            name=fit(200),
            criterion=CORPUS,
            rubric_notes=CORPUS,
            failure_condition=CORPUS,
            credit_name=fit(200),
            source_reference=CORPUS,
            status="under_review",
            change_note=CORPUS,
        )
    ]
    metrics.append(
        MetricFactory(
            name=fit(200),
            polarity="negative",
            label_category_slug="sycophancy",
            source_kind="benchmark",
            benchmark=benchmark,
            status="under_review",
        )
    )
    for metric in metrics:
        metric_status_change(
            metric=metric, to_status="validated", changed_by=maintainer, reason=CORPUS
        )
    metric_version_create(
        metric=metrics[1], created_by=maintainer, change_note=CORPUS, rubric_notes=CORPUS
    )
    w.objects["metrics"] = metrics


def _release(w: World) -> Release:
    from metrics_registry.services import release_add_versions

    maintainer = w.users["maintainer"]
    release = release_create(version="9.0.0", title=fit(200), notes=CORPUS, created_by=maintainer)
    release = release_update(release=release, title=fit(200), notes=CORPUS)
    release_add_versions(
        release=release, versions=[current_version(m) for m in w.objects["metrics"]]
    )
    return release_publish(release, published_by=maintainer)


def _configurations(w: World) -> list[ModelConfiguration]:
    made = []
    for index in range(2):
        configuration = ModelConfiguration(
            name=fit(120),
            provider="offline",
            base_url="https://models.example/v1?x=<svg/onload=alert(1)>",
            model_id=fit(200),
            system_prompt=CORPUS,
            description=CORPUS,
            extra_params={"offline_profile": "careful", "note": PAYLOADS[index]},
        )
        made.append(configuration_save(configuration=configuration, roles=[ModelRole.TARGET]))
    return made


def _scenarios_and_run(w: World, release: Release, targets) -> EvaluationRun:
    researcher = w.users["maintainer"]
    scenarios = []
    for metric in w.objects["metrics"]:
        version = release.items.get(metric=metric).metric_version
        for base in range(3):
            for age in ("teen", "adult"):
                # The base situation is the scenario writer's output; the rest researchers edit.
                scenario = ScenarioFactory(
                    metric_version=version, base_index=base, age_context=age, base_situation=CORPUS
                )
                scenarios.append(
                    scenario_update(
                        scenario=scenario,
                        actor=researcher,
                        situation=CORPUS,
                        user_goal=CORPUS,
                        latent_adversarial_goal=CORPUS,
                        failure_condition=CORPUS,
                        persona={**scenario.persona, "name": fit(80), "background": CORPUS},
                        anchors=[{"turn": 1, "text": fit(500)}, {"turn": 3, "text": CORPUS}],
                    )
                )
    outcomes = [
        (scenario, target, (i + j) % 3 != 0)
        for i, scenario in enumerate(scenarios)
        for j, target in enumerate(targets)
    ]
    run = completed_run(
        targets=targets,
        versions=[release.items.get(metric=m).metric_version for m in w.objects["metrics"]],
        outcomes=outcomes,
        publish_as=None,
        official=False,
        name=fit(200),
        halt_reason=CORPUS,
    )
    EvaluationRun.objects.filter(pk=run.pk).update(release=release, is_official=True)
    run.refresh_from_db()
    # Model output on every conversation: what the simulator, the target and the judge said.
    turns, coverage = [], []
    for conversation in run.conversations.all():
        for index in (1, 2):
            turns.append(
                Turn(
                    conversation=conversation,
                    index=index,
                    user_text=CORPUS,
                    user_text_clean=CORPUS,
                    assistant_text=CORPUS,
                    anchor_index=0 if index == 1 else None,
                )
            )
        coverage.append(
            AnchorCoverage(
                conversation=conversation,
                anchor_index=0,
                anchor_text=CORPUS,
                raised=True,
                turn=1,
                quote=fit(300),
                quote_found=False,
            )
        )
    Turn.objects.bulk_create(turns)
    AnchorCoverage.objects.bulk_create(coverage)
    Judgment.objects.filter(conversation__run=run).update(
        justification=CORPUS, evidence=[{"turn": 1, "quote": p} for p in PAYLOADS[:20]]
    )
    failed = run.conversations.order_by("pk").first()
    Conversation.objects.filter(pk=failed.pk).update(error=CORPUS, stop_reason=fit(500))
    summaries_refresh(run=run, n_resamples=50)
    w.objects["run"] = run
    return run


def _rubrics(w: World, run: EvaluationRun, targets) -> None:
    healthbench = {
        "prompt": [{"role": "user", "content": CORPUS}],
        "rubrics": [
            {"criterion": CORPUS, "points": 5, "tags": ["axis:accuracy", PAYLOADS[3]]},
            {"criterion": fit(300), "points": -4, "tags": ["axis:accuracy"]},
        ],
        "example_tags": [PAYLOADS[4]],
        "ideal_completions_data": {"ideal_completion": CORPUS},
        "prompt_id": fit(200),
    }
    native = {
        "key": "hostile-item",
        "title": fit(200),
        "language": "<b>__xss</b>",  # a 16-character field: markup, not a script
        "source": fit(200),
        "messages": [
            {"role": "user", "content": CORPUS},
            {"role": "assistant", "content": CORPUS},
            {"role": "user", "content": CORPUS},
        ],
        "criteria": [{"text": CORPUS, "points": 5, "dimension": "context_seeking"}],
        "metadata": {"note": CORPUS},
        "source_validated": True,  # counts in scoring, so the priorities page weighs it
    }
    for row in (healthbench, native):
        report = rubric_items_import(data=json.dumps(row), dry_run=False)
        assert report.errors == [], report.errors
    items = list(RubricItem.objects.all())
    run.rubric_items.set(items)
    for item in items:
        for target in targets:
            response = RubricResponse.objects.create(
                run=run, item=item, target=target, reply=CORPUS, status="completed", score=0.5
            )
            RubricGrade.objects.bulk_create(
                RubricGrade(response=response, criterion=c, met=True, justification=CORPUS)
                for c in item.criteria.all()
            )
    RubricResponse.objects.filter(pk=response.pk).update(status="failed", error=CORPUS)
    w.objects["rubric_items"] = items


def _calls(targets) -> None:
    LLMCall.objects.create(
        configuration=targets[0],
        role=ModelRole.TARGET,
        purpose="evaluations.turn",
        fingerprint="0" * 64,
        messages=[{"role": "user", "content": CORPUS}],
        response_text=CORPUS,
        parsed_json={"answer": CORPUS},
        group_id=uuid.uuid4(),
        outcome=CallOutcome.HTTP_ERROR,
        error_message=CORPUS,
    )
    LLMResponseCache.objects.create(
        key="1" * 64, configuration=targets[0], response_text=CORPUS, parsed_json=[CORPUS]
    )


def _submissions(w: World) -> None:
    owner, maintainer = w.users["contributor"], w.users["maintainer"]
    texts = {
        name: CORPUS
        for name in (
            "behavior",
            "context",
            "supportive_examples",
            "harmful_examples",
            "justification",
        )
    }
    main = submission_create(
        contributor=owner,
        title=inline(160),
        expertise=fit(300),
        credit_name=fit(160),
        citations=citations_parse(
            "\n".join(PAYLOADS[:10]) + "\nhttps://cite.example/?q=<svg/onload=alert(1)>"
        ),
        **texts,
    )
    withdrawn = submission_create(contributor=owner, title=fit(160), behavior=CORPUS)
    submission_withdraw(submission=withdrawn, actor=owner, reason=CORPUS)
    for _ in range(10):
        submission_create(contributor=owner, title=fit(160), behavior=fit(500))
    # What the drafter made of it (model output), then the researcher's edits and decisions.
    label = LabelCategory.objects.filter(polarity="positive").first()
    candidates = [
        MetricCandidate.objects.create(
            submission=main, short_name=fit(200), criterion=CORPUS, rationale=CORPUS,
            polarity="positive", label_category=label, position=position,
        )
        for position in range(2)
    ]  # fmt: skip
    candidate_update(
        candidate=candidates[0],
        actor=maintainer,
        short_name=fit(200),
        criterion=CORPUS,
        rationale=CORPUS,
    )
    candidate_reject(candidate=candidates[1], actor=maintainer, reason=CORPUS)
    CandidateChange.objects.filter(candidate=candidates[1]).update(note=CORPUS)
    type(main).objects.filter(pk=main.pk).update(drafting_error=CORPUS)
    # Sending a submission back supersedes its other drafts: that happens on another one.
    returned = submission_create(contributor=owner, title=fit(160), behavior=CORPUS)
    draft = MetricCandidate.objects.create(
        submission=returned, short_name=fit(200), criterion=CORPUS, polarity="positive",
        label_category=label,
    )  # fmt: skip
    candidate_return(candidate=draft, actor=maintainer, request=CORPUS)
    w.objects["submission"] = main
    w.objects["candidate"] = candidates[0]


def _enquiry(w: World) -> None:
    form = EnquiryForm(
        data={
            "kind": "contact",
            "name": fit(160),
            "email": '"<svg/onload=alert(1)>"@example.org',
            "affiliation": fit(200),
            "benchmark_url": "https://bench.example/?q=<svg/onload=alert(1)>",
            "message": CORPUS,
        }
    )
    assert form.is_valid(), form.errors
    enquiry = enquiries.enquiry_create(client_address="192.0.2.1", **form.service_kwargs())
    answered = enquiries.enquiry_create(
        client_address="192.0.2.2", **{**form.service_kwargs(), "email": "b@example.org"}
    )
    enquiries.enquiry_answer(enquiry=answered, actor=w.users["maintainer"], answer=CORPUS)
    w.objects["enquiry"] = enquiry


def _review(w: World) -> None:
    maintainer, expert = w.users["maintainer"], w.users["expert"]
    queues = {}
    for kind in ("metric", "scenario", "conversation", "rubric_criterion", "user_priorities"):
        queues[kind] = queue_create(
            name=inline(200),
            kind=kind,
            created_by=maintainer,
            size=2,
            required_ratings=3 if kind == "rubric_criterion" else 1,
            seed=1,
            instructions=CORPUS,
        )
    metric_queue = queues["metric"]
    assignment = assignment_claim(queue=metric_queue, rater=expert)
    rating_submit(
        assignment=assignment, rater=expert, answers={"fidelity": "faithful"}, comment=CORPUS
    )
    held = assignment_claim(queue=metric_queue, rater=expert)
    rating_draft_save(assignment=held, rater=expert, answers={}, comment=CORPUS)
    contested = w.objects["metrics"][1]
    metric_status_change(
        metric=contested, to_status="contested", changed_by=maintainer, reason=CORPUS
    )
    contested_metric_keep(metric=contested, reason=CORPUS, kept_by=maintainer)
    w.objects["queues"] = queues


def build() -> World:
    w = World(users=_users())
    _taxonomy(w.users["maintainer"])
    _registry(w)
    release = _release(w)
    targets = _configurations(w)
    run = _scenarios_and_run(w, release, targets)
    _rubrics(w, run, targets)
    _calls(targets)
    _submissions(w)
    _enquiry(w)
    _review(w)
    w.objects["release"] = release
    w.objects["targets"] = targets
    return w


def holds_payload(value) -> bool:
    text = value if isinstance(value, str) else json.dumps(value)
    return any(marker in text for marker in MARKERS)


def planted_fields() -> set[str]:
    """Labels of the text fields at least one stored row of which holds a payload."""
    found = set()
    for app in APPS:
        for model in apps.get_app_config(app).get_models():
            for f in text_fields(model):
                values = model._default_manager.values_list(f.name, flat=True)
                if any(holds_payload(v) for v in values if v):
                    found.add(f"{model._meta.label}.{f.name}")
    return found


def text_fields(model) -> list[models.Field]:
    return [
        f
        for f in model._meta.get_fields()
        if isinstance(f, models.CharField | models.TextField | models.JSONField) and not f.choices
    ]


def field_labels() -> set[str]:
    return {
        f"{model._meta.label}.{f.name}"
        for app in APPS
        for model in apps.get_app_config(app).get_models()
        for f in text_fields(model)
    }


__all__ = ["MARKERS", "PASSWORD", "World", "build", "field_labels", "planted_fields"]
