"""A world whose every user-written text field (`xss_fields.COVERED`) holds XSS payloads.

People's text goes in through the platform's own forms and services (the contact form, the
admin's forms, submission, candidate, metric, release, scenario, queue, rating and model
configuration services, the rubric importer); model output and the platform's error texts are
written onto rows the pipeline shape produces, since the pipeline stores them verbatim. Long
fields hold the whole corpus; short ones one payload that fits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.contrib import admin
from django.db import models
from django.forms.models import model_to_dict
from django.test import RequestFactory

from core.roles import Role
from core.services import reader_language_declare
from evaluations.models import EvaluationRun
from evaluations.services.transcript_runs import transcripts_import
from llm.models import ModelConfiguration, ModelRole
from llm.services import configuration_save
from metrics_registry.models import Area, LabelCategory, MetricVersion, Release, Subarea
from metrics_registry.services import (
    benchmark_get_or_create,
    metric_status_change,
    metric_version_create,
    metric_version_text_review,
    metric_version_text_save,
    release_create,
    release_publish,
    release_update,
)
from results.services.releases import RELEASE_FREEZES
from review.kinds import adapter_for
from review.services import assignment_claim, queue_create, rating_submit
from review.services.assignments import rating_draft_save
from review.services.feedback import contested_metric_keep
from rubrics.models import RubricDimension
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
from tests.evaluations.factories import current_version
from tests.factories import UserFactory
from tests.metrics_registry.factories import MetricFactory
from tests.security.xss_corpus import CORPUS, PAYLOADS, fit, inline

from .xss_pipeline import plant_calls, plant_rubrics, plant_run

PASSWORD = "correct-horse-battery"


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
    # A Spanish text of the first metric, machine-translated and reviewed, so the public pages
    # of a Spanish reader show it.
    # (Declaring a language replaces the default English, which the rating queues need.)
    for language in ("en", "es"):
        reader_language_declare(user=w.users["expert"], language=language)
    text = metric_version_text_save(
        version=current_version(metrics[0]),
        language="es",
        name=inline(200),
        criterion=CORPUS,
        failure_condition=CORPUS,
        provenance="machine",
        writer=maintainer,
    )
    metric_version_text_review(text=text, reviewer=w.users["expert"])
    w.objects["metrics"] = metrics


def _release(w: World) -> Release:
    from metrics_registry.services import release_add_versions

    maintainer = w.users["maintainer"]
    release = release_create(version="9.0.0", title=fit(200), notes=CORPUS, created_by=maintainer)
    release = release_update(release=release, title=fit(200), notes=CORPUS)
    release_add_versions(
        release=release, versions=[current_version(m) for m in w.objects["metrics"]]
    )
    return release_publish(release, published_by=maintainer, freezes=RELEASE_FREEZES)


def _configurations(w: World) -> list[ModelConfiguration]:
    made = []
    for index in range(2):
        configuration = ModelConfiguration(
            name=fit(120),
            provider="offline",
            base_url="https://models.example/v1?x=<svg/onload=alert(1)>",
            model_id=fit(200),
            model_line=fit(120),
            system_prompt=CORPUS,
            description=CORPUS,
            extra_params={"offline_profile": "careful", "note": PAYLOADS[index]},
        )
        saved = configuration_save(configuration=configuration, roles=[ModelRole.TARGET])
        # Written by the platform when an endpoint refuses a format, quoting the endpoint's reply.
        ModelConfiguration.objects.filter(pk=saved.pk).update(structured_output_note=CORPUS)
        made.append(saved)
    return made


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
    # Blind items come from the run before it is public, from its last scenario (held back
    # from public pages while the queue is open): the first conversations stay public.
    last = w.objects["run"].conversations.order_by("-scenario_id").first().scenario_id
    held = set(w.objects["run"].conversations.filter(scenario_id=last).values_list("pk", flat=True))
    for kind in ("metric", "scenario", "conversation", "rubric_criterion", "user_priorities"):
        candidates = None
        if kind == "conversation":
            candidates = [c for c in adapter_for(kind).candidates() if c.object_id in held]
        queues[kind] = queue_create(
            name=inline(200),
            kind=kind,
            created_by=maintainer,
            size=2,
            required_ratings=3 if kind == "rubric_criterion" else 1,
            seed=1,
            instructions=CORPUS,
            candidates=candidates,
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


def _imported(w: World, release: Release, judge: ModelConfiguration) -> None:
    """A run of imported transcripts: the file's name, the conversation's id, its system prompt
    and metadata, its messages and the model's name come from whoever made the file."""
    line = {
        "messages": [
            {"role": "system", "content": CORPUS},
            {"role": "user", "content": CORPUS},
            {"role": "assistant", "content": CORPUS},
        ],
        "metadata": {"id": fit(200), "model": fit(90), "note": CORPUS},
    }
    w.objects["imported_run"] = transcripts_import(
        data=json.dumps(line).encode(),
        file_name=fit(250),
        format="openai_jsonl",
        run_name=fit(200),
        judge=judge,
        metric_versions=list(MetricVersion.objects.filter(release_items__release=release)[:1]),
        dispatch=False,
    )


def build() -> World:
    w = World(users=_users())
    _taxonomy(w.users["maintainer"])
    _registry(w)
    release = _release(w)
    targets = _configurations(w)
    run = plant_run(w, release, targets)
    plant_rubrics(w, run, targets)
    plant_calls(targets)
    _imported(w, release, targets[0])
    _submissions(w)
    _enquiry(w)
    _review(w)
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=True)
    w.objects["release"] = release
    w.objects["targets"] = targets
    return w
