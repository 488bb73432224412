"""Which stored text fields the cross-site-scripting corpus must reach, and which it need not.

Every CharField, TextField and JSONField (and their subclasses: email, URL, slug) of the
platform's own apps, except fields with fixed choices, is listed in exactly one of the two
tables below; `tests/security/test_xss_coverage.py` fails when a field is in neither, so a new
text field must be planted by the hostile world (`xss_world.py`) or explained here.

COVERED: text a person writes (through a form, an import or an API) or a model returns, that
someone else reads on a page. The value says how the hostile world plants it.
NOT_USER_WRITTEN: the documented allow-list, with the reason the field cannot carry markup a
visitor wrote.
"""

import json

from django.apps import apps
from django.db import models

FORM = "a form or service a person uses"
ADMIN = "the maintainers' admin form"
MODEL_OUTPUT = "model output, stored verbatim (written onto pipeline rows)"
PLATFORM_ERROR = "an error the platform records, which can quote a provider's answer"

COVERED = {
    # submissions: the contributor's words, the researcher's review of the drafted metric
    "submissions.Submission.title": FORM,
    "submissions.Submission.behavior": FORM,
    "submissions.Submission.context": FORM,
    "submissions.Submission.supportive_examples": FORM,
    "submissions.Submission.harmful_examples": FORM,
    "submissions.Submission.justification": FORM,
    "submissions.Submission.expertise": FORM,
    "submissions.Submission.credit_name": FORM,
    "submissions.Submission.review_note": FORM,
    "submissions.Submission.drafting_error": PLATFORM_ERROR,
    "submissions.Citation.value": FORM,
    "submissions.SubmissionEvent.note": FORM,
    "submissions.MetricCandidate.short_name": FORM,
    "submissions.MetricCandidate.criterion": FORM,
    "submissions.MetricCandidate.rationale": FORM,
    "submissions.MetricCandidate.review_reason": FORM,
    "submissions.CandidateChange.changes": FORM,
    "submissions.CandidateChange.note": FORM,
    # the public contact form and its answer
    "submissions.Enquiry.name": FORM,
    "submissions.Enquiry.email": FORM,
    "submissions.Enquiry.affiliation": FORM,
    "submissions.Enquiry.message": FORM,
    "submissions.Enquiry.benchmark_url": FORM,
    "submissions.Enquiry.answer": FORM,
    # registry: taxonomy and benchmarks (maintainers edit them), metrics, releases
    "metrics_registry.Area.name": ADMIN,
    "metrics_registry.Area.description": ADMIN,
    "metrics_registry.Subarea.name": ADMIN,
    "metrics_registry.Subarea.description": ADMIN,
    "metrics_registry.LabelCategory.name": ADMIN,
    "metrics_registry.LabelCategory.description": ADMIN,
    "metrics_registry.Benchmark.name": FORM,
    "metrics_registry.Benchmark.citation": FORM,
    "metrics_registry.Benchmark.url": FORM,
    "metrics_registry.Benchmark.description": FORM,
    "metrics_registry.Benchmark.license": FORM,
    "metrics_registry.Metric.credit_name": FORM,
    "metrics_registry.Metric.source_reference": FORM,
    "metrics_registry.MetricStatusChange.reason": FORM,
    "metrics_registry.MetricVersion.name": FORM,
    "metrics_registry.MetricVersion.criterion": FORM,
    "metrics_registry.MetricVersion.rubric_notes": FORM,
    "metrics_registry.MetricVersion.failure_condition": FORM,
    "metrics_registry.MetricVersion.change_note": FORM,
    "metrics_registry.MetricVersionText.name": FORM,
    "metrics_registry.MetricVersionText.criterion": FORM,
    "metrics_registry.MetricVersionText.failure_condition": FORM,
    "metrics_registry.Release.title": FORM,
    "metrics_registry.Release.notes": FORM,
    # Copies of the versions' names, kept when the release is published (the world publishes).
    "metrics_registry.ReleaseChangelog.entries": FORM,
    # evaluations: scenarios (researchers edit them), runs, transcripts, verdicts, rubrics
    "evaluations.Scenario.base_situation": MODEL_OUTPUT,
    "evaluations.Scenario.situation": FORM,
    "evaluations.Scenario.persona": FORM,
    "evaluations.Scenario.user_goal": FORM,
    "evaluations.Scenario.latent_adversarial_goal": FORM,
    "evaluations.Scenario.anchors": FORM,
    "evaluations.Scenario.failure_condition": FORM,
    "evaluations.EvaluationRun.name": FORM,
    "evaluations.EvaluationRun.halt_reason": PLATFORM_ERROR,
    "evaluations.Conversation.error": PLATFORM_ERROR,
    "evaluations.Conversation.stop_reason": MODEL_OUTPUT,
    "evaluations.Conversation.source_id": FORM,
    "evaluations.Conversation.source_metadata": FORM,
    "evaluations.TranscriptImport.file_name": FORM,
    "evaluations.Turn.user_text": MODEL_OUTPUT,
    "evaluations.Turn.user_text_clean": MODEL_OUTPUT,
    "evaluations.Turn.assistant_text": MODEL_OUTPUT,
    "evaluations.Judgment.justification": MODEL_OUTPUT,
    "evaluations.Judgment.evidence": MODEL_OUTPUT,
    "evaluations.AnchorCoverage.anchor_text": MODEL_OUTPUT,
    "evaluations.AnchorCoverage.quote": MODEL_OUTPUT,
    # The fidelity checker's reasons and quotes from the simulated user's turns.
    "evaluations.FidelityReading.criteria": MODEL_OUTPUT,
    "rubrics.RubricDimension.name": ADMIN,
    "rubrics.RubricDimension.description": ADMIN,
    "rubrics.RubricDimension.frameworks": ADMIN,
    "rubrics.RubricItem.title": FORM,
    "rubrics.RubricItem.messages": FORM,
    "rubrics.RubricItem.source": FORM,
    "rubrics.RubricItem.external_id": FORM,
    "rubrics.RubricItem.metadata": FORM,
    "rubrics.RubricCriterion.text": FORM,
    "rubrics.RubricCriterion.tags": FORM,
    "evaluations.RubricResponse.reply": MODEL_OUTPUT,
    "evaluations.RubricResponse.error": PLATFORM_ERROR,
    "evaluations.RubricGrade.justification": MODEL_OUTPUT,
    "evaluations.RubricGrade.quote": MODEL_OUTPUT,
    # model configurations and the call log
    "llm.ModelConfiguration.name": FORM,
    "llm.ModelConfiguration.base_url": FORM,
    "llm.ModelConfiguration.model_id": FORM,
    "llm.ModelConfiguration.extra_params": FORM,
    "llm.ModelConfiguration.system_prompt": FORM,
    "llm.ModelConfiguration.description": FORM,
    "llm.ModelConfiguration.model_line": FORM,
    "llm.LLMCall.messages": MODEL_OUTPUT,
    "llm.PromptText.messages": MODEL_OUTPUT,
    "llm.LLMCall.response_text": MODEL_OUTPUT,
    "llm.LLMCall.parsed_json": MODEL_OUTPUT,
    "llm.LLMCall.error_message": PLATFORM_ERROR,
    # Why a configuration's structured mode was lowered: carries the endpoint's error body.
    "llm.ModelConfiguration.structured_output_note": PLATFORM_ERROR,
    "llm.LLMResponseCache.response_text": MODEL_OUTPUT,
    "llm.LLMResponseCache.parsed_json": MODEL_OUTPUT,
    # batch mode: the requests as sent and the results as collected, and what the provider
    # says of a batch (its status is shown on the run page)
    "llm.BatchRequest.messages": MODEL_OUTPUT,
    "llm.BatchRequest.body": MODEL_OUTPUT,
    "llm.BatchRequest.response_text": MODEL_OUTPUT,
    "llm.BatchRequest.problem": PLATFORM_ERROR,
    "llm.BatchRequest.error": PLATFORM_ERROR,
    "llm.LLMBatch.provider_batch_id": MODEL_OUTPUT,
    "llm.LLMBatch.provider_status": MODEL_OUTPUT,
    "llm.LLMBatch.error": PLATFORM_ERROR,
    # expert review
    "review.RatingQueue.name": FORM,
    "review.RatingQueue.instructions": FORM,
    "review.Rating.comment": FORM,
    "review.RatingDraft.comment": FORM,
    "review.ContestedMetricKeep.reason": FORM,
}

GENERATED = "generated by the platform (key, token, hash or fingerprint), never typed"
IDS = "a list of row ids or counts written by the platform"
VALIDATED = "checked against a fixed pattern that admits no markup"

NOT_USER_WRITTEN = {
    "core.WorkerPing.token": GENERATED,
    "core.WorkerPing.worker_hostname": "the worker's host name, written by the worker",
    "submissions.Submission.creation_token": GENERATED,
    "submissions.MetricCandidate.drafting_call_ids": IDS,
    "submissions.CandidateChange.action": "one of the service's action codes",
    "submissions.Enquiry.client_hash": GENERATED,
    "metrics_registry.Area.slug": VALIDATED + " (slug)",
    "metrics_registry.Subarea.slug": VALIDATED + " (slug)",
    "metrics_registry.LabelCategory.slug": VALIDATED + " (slug)",
    "metrics_registry.Benchmark.slug": VALIDATED + " (slug)",
    "metrics_registry.KeyCounter.name": "the name of a key sequence, set by the platform",
    "metrics_registry.Metric.key": GENERATED,
    "metrics_registry.Release.version": VALIDATED + " (semantic version)",
    "evaluations.Scenario.generated_call_ids": IDS,
    "evaluations.EvaluationRun.paused_configurations": IDS,
    "evaluations.Conversation.claimed_by": "the claiming worker's name, written by the worker",
    "evaluations.EvaluationRun.journal_failure": "a worker's host name and the operating "
    "system's error message, written by the worker",
    "llm.CallReconciliation.completion_id": "the provider's id of a kept completion, read "
    "by the reaper and shown on no page",
    "llm.CallReconciliation.error": "why the provider could not be asked (the client's "
    "message), kept for operators and shown on no page",
    "evaluations.Turn.simulator_call_ids": IDS,
    "evaluations.Turn.target_call_ids": IDS,
    "evaluations.Judgment.call_ids": IDS,
    "evaluations.AnchorCoverage.call_ids": IDS,
    "evaluations.FidelityReading.call_ids": IDS,
    "rubrics.RubricDimension.slug": VALIDATED + " (slug)",
    "rubrics.RubricItem.key": VALIDATED + " (slug)",
    "core.ReaderLanguage.language": VALIDATED + " (BCP 47 language tag)",
    "core.InterfaceLanguage.language": VALIDATED + " (one of the site's LANGUAGES)",
    "submissions.Enquiry.language": "the page language the middleware chose (one of the "
    "site's LANGUAGES), never typed",
    "review.QueueItem.language": "copied from the rated object's validated language tag",
    "results.PassRateSummary.language": "copied from the judged scenarios' validated language "
    "tags (blank for pooled rows)",
    "rubrics.RubricItem.language": VALIDATED + " (BCP 47 language tag)",
    "rubrics.RubricItem.country": VALIDATED + " (ISO 3166-1 alpha-2 code)",
    "rubrics.RubricCriterion.country": VALIDATED + " (ISO 3166-1 alpha-2 code)",
    "evaluations.Scenario.language": VALIDATED + " (BCP 47 language tag)",
    "evaluations.Scenario.country": VALIDATED + " (ISO 3166-1 alpha-2 code)",
    "evaluations.CrisisLine.country": VALIDATED + " (ISO 3166-1 alpha-2 code)",
    "evaluations.CrisisLine.name": "seeded by a data migration; no form or import writes it",
    "evaluations.CrisisLine.contact": "seeded by a data migration; no form or import writes it",
    "evaluations.CrisisLine.url": "seeded by a data migration; no form or import writes it",
    "evaluations.CrisisLine.languages": "seeded by a data migration; no form or import writes it",
    "metrics_registry.MetricVersion.language": VALIDATED + " (BCP 47 language tag)",
    "metrics_registry.MetricVersionText.language": VALIDATED + " (BCP 47 language tag)",
    "rubrics.RubricItem.source_format": "the importer's format code",
    "rubrics.RubricCriterion.dimension": VALIDATED + " (a dimension slug, checked on import)",
    "evaluations.RubricResponse.counted_criteria": IDS,
    "evaluations.RubricResponse.call_ids": IDS,
    "evaluations.RubricResponse.claimed_by": "the claiming worker's name, written by the worker",
    "evaluations.RubricGrade.call_ids": IDS,
    "llm.ModelConfiguration.api_key_env": VALIDATED + " (an environment variable's name; "
    "tests/security/test_api_key_env.py)",
    "llm.LLMCall.purpose": "a code naming the caller in the platform's source",
    "llm.LLMCall.fingerprint": GENERATED,
    "llm.LLMCall.parameters": "sampling parameters copied from a covered configuration",
    "llm.LLMCall.finish_reason": "the provider's finish code, cut to 32 characters and shown "
    "only in the admin's read-only list",
    "llm.LLMCall.work_item": "a code naming the claimed work item",
    "llm.LLMResponseCache.key": GENERATED,
    "llm.BatchRequest.custom_id": GENERATED,
    "llm.BatchRequest.fingerprint": GENERATED,
    "llm.BatchRequest.purpose": "a code naming the caller in the platform's source",
    "llm.BatchRequest.parameters": "sampling parameters copied from a covered configuration",
    "llm.BatchRequest.work_item": "a code naming the claimed work item",
    "llm.BatchRequest.finish_reason": "the provider's finish code, cut to 32 characters, shown "
    "on no page (it is copied to the call log when the item takes the answer)",
    "core.SignInAttempt.account_key": GENERATED,
    "core.StoredPage.key": GENERATED,
    "core.StoredPage.stamp": GENERATED,
    "core.StoredPage.headers": "the headers the platform's own views answered with, stored with "
    "the page they rendered (its body escaped by the same templates as a live answer)",
    "results.FigureCell.key": "a cell's name, built by the refresh from row ids and grouping codes",
    "results.FigureCell.kind": "one of the refresh's figure codes",
    "results.FigureCell.digest": GENERATED,
    "results.FigureCell.figures": "numbers and ids computed by the refresh; pages render them "
    "through their escaping templates",
    "llm.PromptText.sha256": GENERATED,
    "llm.RequestLease.token": GENERATED,
    "review.RatingQueue.strata": "stratum names checked against the kind's fixed list",
    "review.QueueItem.strata": "computed by the sampler from covered fields of the item",
    "review.Assignment.presentation": "the presentation order drawn by the platform",
    "review.Rating.answers": "choice codes checked against the kind's questions",
    "review.RatingDraft.answers": "choice codes checked against the kind's questions",
    "results.PassRateSummary.polarity": "one of two polarity codes",
    "results.PassRateSummary.failures": IDS,
    "results.PassRateSummary.method": "the statistics package's method name",
    "results.RunAnalysis.reliability": "computed figures; names in it are copies of covered "
    "fields and render on the pages visited",
    "results.RunAnalysis.robustness": "computed figures, as above",
    "results.RunAnalysis.cost": "computed amounts and counts; model names in it are copies of "
    "covered fields",
    "results.AnchorStudy.figures": "computed figures (rates, intervals, counts), as above",
    "results.ReleaseExpertFigures.figures": "computed figures; metric names in it are copies "
    "of covered fields",
    "results.RefreshRequest.figures": "names of the analysis's figures, from the code's table",
    "results.RunFigures.figures": "computed figures (judge trust, calibrated rates); names in "
    "it are copies of covered fields and render on the pages visited",
    "results.RunFigures.kind": "one of the code's figure kinds",
    "results.RunFigures.part": "a part name built from a metric key or a model id",
    "results.RunFigures.source": "a stamp the refresh writes from ids and counts",
    "evaluations.SwapStudy.scenario_ids": IDS,
    "evaluations.AnchorRecheck.call_ids": IDS,
    # Only whether the second check agrees with the first is published, never its quote.
    "evaluations.AnchorRecheck.quote": "model output no page or API renders (the figure is "
    "the two checks' agreement)",
}

APPS = (
    "core",
    "submissions",
    "metrics_registry",
    "evaluations",
    "rubrics",
    "llm",
    "review",
    "results",
)
# Evidence that a stored value came from the corpus.
MARKERS = ("lert(1)", "alert&#40;", "__xss", "base64,")


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
