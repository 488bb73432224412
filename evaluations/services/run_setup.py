"""Creating a run from names people type (command line) rather than chosen rows (web form)."""

from decimal import Decimal

from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from llm.models import ModelConfiguration, ModelRole, ModelRoleAssignment
from llm.selectors import configuration_for_role
from metrics_registry.models import Metric, MetricVersion, Release

from ..models import EvaluationRun
from .rubric_runs import rubric_items_from_keys
from .run_plans import run_metric_versions
from .runs import run_create


def _configuration(name: str | None, role: str) -> ModelConfiguration:
    if not name:
        return configuration_for_role(role)
    configuration = ModelConfiguration.objects.filter(name=name).first()
    if configuration is None:
        raise ApplicationError(_('No model configuration is named "%(name)s".') % {"name": name})
    return configuration


def _fidelity_checker(name: str | None) -> ModelConfiguration | None:
    """The named checker, else the role's default, else none (the run's judge checks)."""
    if name:
        return _configuration(name, ModelRole.FIDELITY_CHECKER)
    if not ModelRoleAssignment.objects.filter(
        role=ModelRole.FIDELITY_CHECKER, is_default=True
    ).exists():
        return None
    return configuration_for_role(ModelRole.FIDELITY_CHECKER)  # refuses one switched off


def metric_versions_from_names(
    *, run_id: int | None = None, release_version: str | None = None, metric_keys: list[str]
) -> list[MetricVersion]:
    """The metric versions a run evaluates, a release holds, or the metrics' current ones,
    ordered by key; unknown names are reported all at once."""
    if run_id is not None:
        run = EvaluationRun.objects.filter(pk=run_id).first()
        if run is None:
            raise ApplicationError(_("There is no run %(run_id)s.") % {"run_id": run_id})
        versions = run_metric_versions(run)
    elif release_version:
        release = Release.objects.filter(version=release_version).first()
        if release is None:
            raise ApplicationError(
                _("There is no release %(release_version)s.") % {"release_version": release_version}
            )
        versions = MetricVersion.objects.filter(release_items__release=release)
    else:
        metrics = {m.key: m for m in Metric.objects.filter(key__in=metric_keys)}
        unknown = [key for key in metric_keys if key not in metrics]
        if unknown:
            raise ApplicationError(
                _("Unknown metric keys: %(items)s.") % {"items": ", ".join(unknown)}
            )
        versions = MetricVersion.objects.filter(
            pk__in=[metrics[key].current_version_id for key in metric_keys]
        )
    return list(versions.select_related("metric").order_by("metric__key"))


def run_create_from_names(
    *,
    name: str = "",
    release_version: str | None = None,
    metric_keys: list[str] | None = None,
    rubric_keys: list[str] | None = None,
    target_names: list[str],
    simulator_name: str | None = None,
    judge_name: str | None = None,
    judge_names: list[str] | None = None,
    fidelity_checker_name: str | None = None,
    turns: int = 8,
    replicates: int = 1,
    judgments_per_conversation: int = 3,
    seed: int | None = None,
    use_anchors: bool = True,
    rubric_grading: str | None = None,
    use_batch: bool = False,
    spending_cap: Decimal | None = None,
) -> EvaluationRun:
    """A draft run; unknown names are reported all at once so one correction suffices.

    `rubric_keys` names rubric items by key.
    `judge_names` names a panel of judges (the first is the run's judge), each making
    `judgments_per_conversation` readings; it replaces `judge_name`.
    """
    if judge_names and judge_name:
        raise ApplicationError(_("Name one judge or a panel of judges, not both."))
    release = None
    if release_version:
        release = Release.objects.filter(version=release_version).first()
        if release is None:
            raise ApplicationError(
                _("There is no release %(release_version)s.") % {"release_version": release_version}
            )
    versions = []
    if metric_keys:
        metrics = {m.key: m for m in Metric.objects.filter(key__in=metric_keys)}
        unknown = [key for key in metric_keys if key not in metrics]
        if unknown:
            raise ApplicationError(
                _("Unknown metric keys: %(items)s.") % {"items": ", ".join(unknown)}
            )
        versions = [metrics[key].current_version for key in metric_keys]
    rubric_items = rubric_items_from_keys(rubric_keys or [])
    targets = list(ModelConfiguration.objects.filter(name__in=target_names))
    if len(targets) != len(set(target_names)):
        found = {t.name for t in targets}
        missing = [n for n in target_names if n not in found]
        # Translators: stands for the list of configuration names when none was given.
        none_given = _("(none given)")
        raise ApplicationError(
            _("Unknown target configurations: %(names)s.")
            % {"names": ", ".join(missing) or none_given}
        )
    panel = [_configuration(n, ModelRole.JUDGE) for n in judge_names or []]
    if not name:
        subject = f"release {release.version}" if release else f"{len(versions)} metrics"
        name = f"{subject} × {', '.join(t.name for t in targets)}"
    return run_create(
        name=name,
        release=release,
        metric_versions=versions,
        rubric_items=rubric_items,
        targets=targets,
        simulator=_configuration(simulator_name, ModelRole.USER_SIMULATOR),
        judge=panel[0] if panel else _configuration(judge_name, ModelRole.JUDGE),
        further_judges=[(judge, judgments_per_conversation) for judge in panel[1:]],
        fidelity_checker=_fidelity_checker(fidelity_checker_name),
        turns=turns,
        replicates=replicates,
        judgments_per_conversation=judgments_per_conversation,
        seed=seed,
        use_anchors=use_anchors,
        use_batch=use_batch,
        **({"rubric_grading": rubric_grading} if rubric_grading else {}),
        spending_cap=spending_cap,
    )
