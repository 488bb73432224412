"""Celery tasks: take primary keys, call one service. Names starting llm_ go to the llm queue."""

from celery import shared_task


@shared_task(name="evaluations.tasks.llm_generate_scenarios", acks_late=True)
def llm_generate_scenarios(metric_version_id: int) -> None:
    from metrics_registry.models import MetricVersion

    from .services.scenarios import scenarios_generate

    version = MetricVersion.objects.filter(pk=metric_version_id).first()
    if version is not None:
        scenarios_generate(metric_version=version)


@shared_task(name="evaluations.tasks.run_dispatch", acks_late=True)
def run_dispatch(run_id: int) -> int:
    from .services.runs import run_dispatch as dispatch

    return dispatch(run_id=run_id)


@shared_task(name="evaluations.tasks.llm_process_conversation", acks_late=True)
def llm_process_conversation(conversation_id: int) -> None:
    from .services.runs import conversation_process

    conversation_process(conversation_id=conversation_id)
