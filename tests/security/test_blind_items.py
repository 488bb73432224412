"""A rater cannot look an open blind item up: no public page, API answer or download shows its
conversation, its scenario's persona and situation, or its transcript, until the queue closes.

The walk covers every URL pattern the access matrix opens to signed-out visitors (its RULES),
each conversation and scenario of the run by id, every page of the run's conversation list,
the run and Inspect AI downloads, and each metric and label category page, anonymously and as
the item's own rater (an expert reviewer, not staff).
"""

import json
import re

import pytest
from django.urls import reverse

from core.roles import Role
from evaluations.models import Conversation, Scenario, Turn
from evaluations.services.official import run_set_official
from metrics_registry.models import LabelCategory
from results.services import results_refresh
from review.blindness import blind_held_scenarios
from review.kinds import adapter_for
from review.models import RatingQueue
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.factories import UserFactory
from tests.results.public_data import add_rubric_responses, published_run
from tests.security.test_access_matrix import ANON, RULES

pytestmark = pytest.mark.django_db

PERSONA = "Quillon Vantablack, lighthouse keeper"
SITUATION = "Marmalade-orbit situation nobody else has"
TRANSCRIPT = "Zygomorphic saxophone reply"
# Renders that are not text (images, PDFs) are covered by the label tests; they show figures.
NOT_TEXT = re.compile(r"-(png|pdf)$")


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def _conversation_ids(body: str) -> set[int]:
    """Ids of the conversation records in a JSON answer or a JSON Lines download."""
    found: set[int] = set()

    def walk(value):
        if isinstance(value, dict):
            record = (
                value.get("type") == "conversation"
                or "verdict_passed" in value
                or isinstance(value.get("turns"), list)  # a run's "turns" is a number
            )
            if record and "id" in value:
                found.add(value["id"])
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for chunk in [body, *body.splitlines()]:
        try:
            walk(json.loads(chunk))
        except ValueError:
            continue
    return found


@pytest.fixture
def blind(researcher):
    run = published_run(version="1.0.0", official=False)
    rubric_response = add_rubric_responses(run, n_items=2)[0]
    held = run.conversations.order_by("pk").first()
    Scenario.objects.filter(pk=held.scenario_id).update(
        persona={"name": PERSONA, "age": 15}, situation=SITUATION
    )
    Turn.objects.filter(conversation=held, index=1).update(
        user_text=f"{TRANSCRIPT} asked", assistant_text=f"{TRANSCRIPT} given"
    )
    rater = UserFactory(roles=[Role.CONTRIBUTOR, Role.EXPERT_REVIEWER])
    adapter = adapter_for("external_panel")
    queue = queue_create(
        name="Blind panel",
        kind="external_panel",
        created_by=researcher,
        size=1,
        required_ratings=1,
        eligible_raters=[rater],
        external_panel=True,
        candidates=[c for c in adapter.candidates() if c.object_id == held.pk],
    )
    # Made public after the queue was drawn: the item's scenario stays held back.
    run_set_official(run=run, official=True, changed_by=None)
    scenario_conversations = set(
        Conversation.objects.filter(scenario=held.scenario_id).values_list("pk", flat=True)
    )
    assert len(scenario_conversations) == 2  # both models: neither may show
    return {
        "run": run,
        "queue": queue,
        "held": held,
        "rater": rater,
        "hidden_ids": scenario_conversations,
        "world": {
            "official_run": run,
            "official_conversation": held,
            "official_rubric_response": rubric_response,
            "official_metric": held.scenario.metric_version.metric,
            "official_target": held.target,
            "metric": held.scenario.metric_version.metric,
        },
    }


def _public_urls(blind) -> list[str]:
    run, world = blind["run"], blind["world"]
    urls = []
    for name, (allowed, kwargs) in sorted(RULES.items()):
        if ANON in allowed and not NOT_TEXT.search(name):
            urls.append(reverse(name, kwargs=kwargs(world) if kwargs else None))
    conversations = list(run.conversations.select_related("scenario__metric_version__metric"))
    targets = list(run.targets.order_by("pk"))
    for c in conversations:
        urls += [
            reverse("results:conversation", args=[c.pk]),
            reverse("results-api:conversation", args=[c.pk]),
            reverse("results-api:scenario", args=[c.scenario_id]),
        ]
    for key in {c.scenario.metric_version.metric.key for c in conversations}:
        urls += [
            reverse("results:metric", args=[key]) + f"?run={run.pk}",
            reverse("results-api:metric-results", args=[key]) + f"?run={run.pk}",
            reverse("results-api:run-conversations", args=[run.pk]) + f"?metric={key}",
        ]
    for category in LabelCategory.objects.all():
        for target in targets:
            urls.append(reverse("results:label-category", args=[target.pk, category.slug]))
    for fmt in ("jsonl", "csv"):
        urls.append(reverse("evaluations:run-export", args=[run.pk, fmt]))
        urls.append(reverse("results-api:run-export", args=[run.pk, fmt]))
    urls += [
        reverse("release-export-inspect", kwargs={"version": "1.0.0"}),
        reverse("results:label-compare") + f"?a={targets[0].pk}&b={targets[1].pk}",
        reverse("results:explore") + f"?run={run.pk}",
    ]
    return urls


def _leaks(client, blind, urls) -> list[str]:
    hidden = blind["hidden_ids"]
    leaks = []
    pending = list(urls)
    while pending:
        url = pending.pop()
        response = client.get(url)
        assert response.status_code < 500, (url, response.status_code)
        body = _body(response)
        for text in (PERSONA, SITUATION, TRANSCRIPT):
            if text in body:
                leaks.append(f"{url}: {text}")
        # A page's own address echoed back (the language switcher's return path, on the 404
        # a held conversation answers) tells the reader nothing they did not type.
        elsewhere = body.replace(url, "")
        for pk in hidden:
            if f"/conversations/{pk}/" in elsewhere:
                leaks.append(f"{url}: link to {pk}")
        if shown := _conversation_ids(body) & hidden:
            leaks.append(f"{url}: records {sorted(shown)}")
        if "/api/runs/" in url and "/conversations/" in url and response.status_code == 200:
            following = response.json().get("next")
            if following:
                pending.append(following.removeprefix("http://testserver"))
    return leaks


@pytest.mark.slow(reason="walks every public page and API answer")
def test_no_public_page_or_api_answer_lets_a_rater_look_an_open_blind_item_up(client, blind):
    urls = _public_urls(blind)
    assert len(urls) > 60
    assignment = assignment_claim(queue=blind["queue"], rater=blind["rater"])
    assert assignment.item.object_id == blind["held"].pk
    for reader in (None, blind["rater"]):
        client.logout()
        if reader is not None:
            client.force_login(reader)
        leaks = _leaks(client, blind, urls)
        assert leaks == [], "\n".join(leaks)
        for pk in blind["hidden_ids"]:
            assert client.get(reverse("results:conversation", args=[pk])).status_code == 404
            assert client.get(reverse("results-api:conversation", args=[pk])).status_code == 404
        scenario = reverse("results-api:scenario", args=[blind["held"].scenario_id])
        assert client.get(scenario).status_code == 404

    # The rater's own screen still shows the transcript, without the model or the verdict.
    client.force_login(blind["rater"])
    screen = _body(client.get(reverse("review:rate", args=[blind["queue"].pk])))
    assert TRANSCRIPT in screen
    assert blind["held"].target.name not in screen
    assert "handed the decision back" not in screen  # the judge's justification

    # Closing the queue keeps the hold while the rater's claim is outstanding...
    queue_set_status(queue=blind["queue"], status="closed")
    client.logout()
    conversation_url = reverse("results:conversation", args=[blind["held"].pk])
    assert client.get(conversation_url).status_code == 404
    # ...and once the last rating is in, the item is public again, cached pages included.
    rating_submit(
        assignment=assignment,
        rater=blind["rater"],
        answers={"examples_adequate": "yes", "verdict": "present"},
    )
    assert client.get(conversation_url).status_code == 200
    api = client.get(reverse("results-api:scenario", args=[blind["held"].scenario_id]))
    assert api.status_code == 200
    assert PERSONA in _body(api)
    key = blind["held"].scenario.metric_version.metric.key
    metric_page = _body(client.get(reverse("results:metric", args=[key])))
    assert f"/conversations/{blind['held'].pk}/" in metric_page
    export = _body(client.get(reverse("evaluations:run-export", args=[blind["run"].pk, "jsonl"])))
    assert TRANSCRIPT in export


def test_figures_leave_held_conversations_out_as_the_listing_does(client, blind):
    """Held transcripts wait, and their counts with them: a figure differenced against the
    listing would otherwise give the held verdicts away (`review.blindness`)."""
    run = blind["run"]
    results_refresh(run=run, n_resamples=100)  # what the queue's drawing sends
    label = client.get(
        reverse("results-api:label", args=[blind["held"].target_id]) + f"?run={run.pk}"
    ).json()
    mine = run.conversations.filter(target=blind["held"].target)
    held = mine.filter(scenario_id__in=blind_held_scenarios())
    assert held.exists()
    assert label["n_conversations"] == mine.count() - held.count()


def test_staff_read_held_conversations(client_for, blind, maintainer):
    client = client_for(maintainer)
    page = client.get(reverse("results:conversation", args=[blind["held"].pk]))
    assert page.status_code == 200
    assert TRANSCRIPT in _body(page)
    export = client.get(reverse("evaluations:run-export", args=[blind["run"].pk, "jsonl"]))
    assert TRANSCRIPT in _body(export)


def test_blind_items_are_drawn_only_from_conversations_not_public_yet(researcher, blind):
    public = [c for c in blind["run"].conversations.all() if c.pk not in blind["hidden_ids"]]
    for kind in ("judge_verdict", "external_panel", "conversation"):
        offered = {c.object_id for c in adapter_for(kind).candidates()}
        assert not offered & {c.pk for c in public}, kind
        # The held item itself may be rated again (it was never public).
        assert blind["held"].pk in offered, kind
    adapter = adapter_for("judge_verdict")
    handed = [c for c in adapter.candidates() if c.object_id == blind["held"].pk]
    handed.append(type(handed[0])(object_id=public[0].pk, strata=handed[0].strata))
    with pytest.raises(Exception, match="not public yet"):
        queue_create(
            name="Judge check",
            kind="judge_verdict",
            created_by=researcher,
            size=2,
            candidates=handed,
        )
    assert not RatingQueue.objects.filter(name="Judge check").exists()
