from django.http import Http404
from django.shortcuts import get_object_or_404
from django.views.generic import ListView, TemplateView

from core.roles import Role, RoleRequiredMixin, user_has_role
from evaluations.evidence_support import evidence_problems
from evaluations.models import EvaluationRun
from evaluations.selectors import conversation_fidelity
from evaluations.services.panel import conversation_panel
from metrics_registry.text_selectors import metric_version_text

from ..models import SummaryLevel
from ..plain import conversation_lead
from ..public_conversations import conversation_for_reader, run_conversation_list, transcript
from ..selectors import summary_estimates
from .common import PublicRunMixin


class ConversationView(PublicRunMixin, TemplateView):
    """One conversation of a public run: transcript, verdicts, evidence, the hidden goal last."""

    template_name = "results/conversation.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        staff = user_has_role(self.request.user, Role.RESEARCHER, Role.MAINTAINER)
        conversation = conversation_for_reader(kwargs["pk"], include_private=staff)
        if conversation is None:
            raise Http404("This conversation is not part of published results.")
        run = conversation.run
        version = conversation.scenario.metric_version
        subareas = list(version.subareas.all())
        context.update(self.run_context(run))
        context.update(
            private=not run.is_official,
            conversation=conversation,
            scenario=conversation.scenario,
            version=version,
            shown=metric_version_text(version),
            metric=version.metric,
            subarea=subareas[0] if subareas else None,
            turns=transcript(conversation),
            judgments=list(conversation.judgments.all()),
            panel=conversation_panel(run, conversation.judgments.all()),
            target=conversation.target,
            is_offline=conversation.is_offline or conversation.target.is_offline,
            fidelity=conversation_fidelity(conversation),
            evidence_problems=evidence_problems(conversation.judgments.all()),
        )
        # One query: this model's pass rate on the metric, so the verdict reads in context.
        rates = summary_estimates(
            run=run,
            level=SummaryLevel.METRIC,
            key_ids=[version.pk],
            target_ids=[conversation.target_id],
        )
        context["lead"] = conversation_lead(
            conversation.target.name,
            version.polarity,
            conversation.verdict_passed,
            rates.get((conversation.target_id, version.polarity, version.pk, "all")),
        )
        return context


class RunConversationsView(RoleRequiredMixin, ListView):
    """A run's conversations for maintainers and researchers (any run, official or not)."""

    required_roles = (Role.RESEARCHER, Role.MAINTAINER)
    template_name = "results/run_conversations.html"
    context_object_name = "conversations"
    paginate_by = 100

    def get_queryset(self):
        self.run = get_object_or_404(EvaluationRun, pk=self.kwargs["pk"])
        status = self.request.GET.get("status", "")
        self.status = status if status in ("completed", "failed", "pending", "running") else ""
        return run_conversation_list(self.run, status=self.status)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(run=self.run, status=self.status, query=f"status={self.status}")
        return context
