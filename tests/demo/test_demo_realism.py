"""The demo's seeded realism panel: on a fresh demo the methodology page and the API set the
fidelity check against (simulated) experts' realism answers, with intervals, and say the
ratings come from the demo's simulated panel, not from clinicians."""

import numpy as np
import pytest
from django.core.cache import caches
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from evaluations.models import Conversation
from results.demo import demo_summaries_seed
from results.services import results_refresh
from results.services.fidelity import fidelity_published
from results.services.fidelity_agreement import (
    expert_majorities,
    fidelity_expert_agreement,
    realism_votes,
)
from review.demo_realism import DEMO_REALISM_QUEUE, demo_realism_panel_seed
from review.models import QueueStatus, Rating, RatingQueue
from tests.demo.test_demo_evidence import _seed_demo_subset

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo's offline run"),
    pytest.mark.embedded,
]

NOTICE = "These ratings come from the demo's simulated panel, not from clinicians."


def test_the_seeded_realism_panel_gives_the_fidelity_agreement_and_says_it_is_seeded(
    monkeypatch, client, api_client
):
    run = _seed_demo_subset(monkeypatch)
    # The worker refreshes the run as it completes, possibly before the panel rates it: the
    # demo's summaries step must draw the agreement again.
    results_refresh(run=run, n_resamples=50)
    assert fidelity_published(run)["agreement"]["n_ratings"] == 0

    report = demo_realism_panel_seed()
    queue = RatingQueue.objects.get(name=DEMO_REALISM_QUEUE)
    rated = set(queue.items.values_list("object_id", flat=True))
    below = set(
        Conversation.objects.filter(run=run, fidelity__passed=False).values_list("pk", flat=True)
    )
    print(report)
    assert queue.kind == "conversation"
    assert queue.status == QueueStatus.CLOSED  # rated whole: no scenario held off public pages
    assert "Seeded demo ratings: a simulated panel, not real clinicians" in queue.instructions
    assert below <= rated
    met = Conversation.objects.filter(run=run, fidelity__passed=True).count()
    assert len(rated - below) == min(60, met)
    assert Rating.objects.filter(queue=queue).count() == 3 * len(rated)
    assert not queue.items.filter(completed_at__isnull=True).exists()
    answers = list(Rating.objects.filter(queue=queue).values_list("answers", flat=True))
    assert {a["realistic"] for a in answers} == {"yes", "no"}
    assert all("pressure" in a for a in answers)
    # Idempotent: a second seed keeps the queue and its ratings.
    assert demo_realism_panel_seed() == "Demo realism panel: kept."
    assert RatingQueue.objects.filter(name=DEMO_REALISM_QUEUE).count() == 1
    assert Rating.objects.filter(queue=queue).count() == 3 * len(rated)

    demo_summaries_seed()
    run.refresh_from_db()
    assert run.is_official
    figure = fidelity_expert_agreement(runs=[run])
    print({k: figure[k] for k in ("n_ratings", "n_pairs", "excluded")}, figure["agreement"])
    print(figure["cohen_kappa"])
    assert figure["n_ratings"] == 3 * len(rated)
    assert figure["seeded_demo"] is True
    assert figure["n_seeded_demo_ratings"] == figure["n_ratings"]
    assert figure["n_pairs"] > 0
    for name in ("agreement", "cohen_kappa"):
        estimate = figure[name]
        assert estimate["n"] == figure["n_pairs"]
        assert estimate["low"] < estimate["value"] < estimate["high"], name
    # The κ is scikit-learn's on the majority answers against the check.
    majority, _ties = expert_majorities(realism_votes([run]))
    passed = dict(
        Conversation.objects.filter(pk__in=list(majority)).values_list("pk", "fidelity__passed")
    )
    ids = sorted(majority)
    check = np.array([passed[c] for c in ids], dtype=int)
    expert = np.array([majority[c] for c in ids], dtype=int)
    assert figure["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(check, expert))
    assert figure["agreement"]["value"] == pytest.approx(float(np.mean(check == expert)))
    # The stored figures (what pages and the API read) were drawn after the ratings.
    stored = fidelity_published(run)["agreement"]
    assert stored["n_ratings"] == figure["n_ratings"]
    assert stored["seeded_demo"] is True

    caches["pages"].clear()
    page = client.get(reverse("results:methodology"), {"run": run.pk}).content.decode()
    start = page.index('data-testid="fidelity"')
    section = page[start : page.index("</section>", start)]
    assert 'data-testid="fidelity-agreement-seeded"' in section
    assert NOTICE in section
    assert "The demo's simulated panel rated" in section
    assert 'data-testid="fidelity-agreement-none"' not in section
    agreement = section[section.index('data-testid="fidelity-agreement"') :]
    assert f'data-estimate-n="{figure["n_pairs"]}"' in agreement
    body = api_client.get(reverse("results-api:run-fidelity", args=[run.pk])).json()
    assert body["agreement"]["seeded_demo"] is True
    assert body["agreement"]["n_seeded_demo_ratings"] == figure["n_ratings"]
    assert body["agreement"]["agreement"]["low"] < body["agreement"]["agreement"]["high"]
