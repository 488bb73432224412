import json

from django.contrib import admin
from django.db import models
from django.db.models import Model
from django.http import HttpRequest
from django.utils.text import Truncator

from .forms import ModelConfigurationAdminForm
from .models import LLMCall, LLMResponseCache, ModelConfiguration, ModelRoleAssignment, PromptText


class ModelRoleAssignmentInline(admin.TabularInline):
    model = ModelRoleAssignment
    extra = 0


@admin.register(ModelConfiguration)
class ModelConfigurationAdmin(admin.ModelAdmin):
    form = ModelConfigurationAdminForm
    list_display = ["name", "provider", "model_id", "base_url", "is_active", "updated_at"]
    list_filter = ["provider", "is_active", "role_assignments__role"]
    search_fields = ["name", "model_id", "base_url", "description"]
    inlines = [ModelRoleAssignmentInline]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records written by the gateway: inspected, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(LLMCall)
class LLMCallAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "configuration",
        "role",
        "purpose",
        "attempt",
        "outcome",
        "http_status",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "cost_estimate",
        "is_offline",
    ]
    list_filter = ["outcome", "configuration", "role", "purpose", "is_offline"]
    search_fields = ["purpose", "fingerprint", "error_message", "group_id"]
    list_select_related = ["configuration"]
    date_hierarchy = "created_at"
    exclude = ["messages"]
    readonly_fields = ["prompt_sent"]

    @admin.display(description="Messages as sent")
    def prompt_sent(self, call: LLMCall) -> str:
        # Newer rows keep their prompt once per distinct text (PromptText), older ones inline.
        return json.dumps(call.prompt_messages, ensure_ascii=False, indent=2)


@admin.register(PromptText)
class PromptTextAdmin(ReadOnlyAdmin):
    list_display = ["sha256", "last_message"]
    search_fields = ["sha256"]

    @admin.display(description="last message")
    def last_message(self, prompt: PromptText) -> str:
        # A hash alone does not tell a maintainer which prompt this is.
        messages = prompt.messages or [{}]
        return Truncator(str(messages[-1].get("content", ""))).chars(120)


@admin.register(LLMResponseCache)
class LLMResponseCacheAdmin(ReadOnlyAdmin):
    list_display = ["key", "configuration", "prompt_tokens", "completion_tokens", "created_at"]
    list_filter = ["configuration"]
    search_fields = ["key"]
    list_select_related = ["configuration"]
