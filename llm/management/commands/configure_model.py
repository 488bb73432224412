"""Create or update a model configuration and its roles from the command line (idempotent).

manage.py configure_model --name "Local Llama" --base-url http://localhost:8080/v1 \\
    --model-id llama-3.2-3b --api-key-env "" --roles target,judge

Without --structured the endpoint is probed and the strongest structured-output mode that
works is stored (`llm.services.structured_mode_probe`).
"""

import argparse
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from llm.models import ModelConfiguration, ModelRole, Provider, StructuredMode, provider_choices
from llm.services import configuration_save, structured_mode_probe


def _roles(value: str) -> list[str]:
    roles = [r.strip() for r in value.split(",") if r.strip()]
    unknown = [r for r in roles if r not in ModelRole.values]
    if unknown:
        raise CommandError(
            f"Unknown role {', '.join(unknown)}; use any of {', '.join(ModelRole.values)}."
        )
    return roles


class Command(BaseCommand):
    help = (
        "Create a model configuration, or update the one with this --name, and make its roles "
        "exactly --roles. Running the same command again changes nothing. Options left out keep "
        "their current (or default) value."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--provider",
            choices=[name for name, _ in provider_choices()],
            help="Default openai_compatible (or the configuration's current provider).",
        )
        parser.add_argument(
            "--base-url", help="The endpoint, e.g. http://127.0.0.1:8080/v1; blank: the default."
        )
        parser.add_argument("--model-id", help="The model name the endpoint expects.")
        parser.add_argument(
            "--model-line",
            help="The product these settings are a version of; labels follow it across versions.",
        )
        parser.add_argument(
            "--api-key-env",
            help='Environment variable holding the key; "" for local servers without one.',
        )
        parser.add_argument(
            "--roles",
            help=f"Comma-separated: {', '.join(ModelRole.values)}. Left out: unchanged.",
        )
        parser.add_argument(
            "--default-for", default="", help="Roles this configuration becomes the default for."
        )
        parser.add_argument("--max-concurrency", type=int)
        parser.add_argument("--requests-per-minute", type=int)
        parser.add_argument("--input-tokens-per-minute", type=int)
        parser.add_argument("--output-tokens-per-minute", type=int)
        parser.add_argument("--max-tokens", type=int)
        parser.add_argument("--temperature", type=float)
        parser.add_argument(
            "--structured",
            choices=StructuredMode.values,
            help="How structured calls ask for JSON. Left out: the endpoint is probed and the "
            "strongest mode that works is stored.",
        )
        parser.add_argument(
            "--no-probe", action="store_true", help="Do not call the endpoint (keep the mode)."
        )
        parser.add_argument(
            "--store-completions",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="OpenAI-compatible endpoints: have the provider keep every completion (store: "
            "true, with metadata naming the attempt), so attempts whose worker died before "
            "reading the reply are billed exactly. A data-retention choice; off by default.",
        )
        parser.add_argument("--offline", action="store_true", help="Use the offline demo model.")
        parser.add_argument("--inactive", action="store_true", help="Switch it off.")

    def handle(self, *args: Any, **options: Any) -> None:
        found = ModelConfiguration.objects.filter(name=options["name"]).first()
        created = found is None
        configuration = ModelConfiguration(name=options["name"]) if found is None else found
        fields = {
            "base_url": options["base_url"],
            "model_id": options["model_id"],
            "model_line": options["model_line"],
            "api_key_env": options["api_key_env"],
            "max_concurrency": options["max_concurrency"],
            "requests_per_minute": options["requests_per_minute"],
            "input_tokens_per_minute": options["input_tokens_per_minute"],
            "output_tokens_per_minute": options["output_tokens_per_minute"],
            "max_tokens": options["max_tokens"],
            "temperature": options["temperature"],
            "structured_output": options["structured"],
            "provider": options["provider"],
            "store_completions": options["store_completions"],
        }
        for field, value in fields.items():
            if value is not None:
                setattr(configuration, field, value)
        if options["offline"]:
            configuration.provider = Provider.OFFLINE
            configuration.model_id = configuration.model_id or "offline-demo"
        configuration.is_active = not options["inactive"]
        if options["roles"] is not None:
            roles = _roles(options["roles"])
        elif created:
            roles = []
        else:
            roles = list(configuration.role_assignments.values_list("role", flat=True))
        default_for = _roles(options["default_for"])
        if not created and not options["default_for"]:
            # Keep being the default where it was, for the roles it still fills.
            default_for = [
                role
                for role in configuration.role_assignments.filter(is_default=True).values_list(
                    "role", flat=True
                )
                if role in roles
            ]
        try:
            configuration_save(configuration=configuration, roles=roles, default_roles=default_for)
        except ValidationError as error:
            problems = "; ".join(
                f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items()
            )
            raise CommandError(f"Not saved: {problems}") from error
        assignments = ", ".join(
            f"{a.role}{' (default)' if a.is_default else ''}"
            for a in configuration.role_assignments.order_by("role")
        )
        verb = "Created" if created else "Updated"
        probe = None
        if not (options["structured"] or options["no_probe"] or configuration.is_offline):
            probe = structured_mode_probe(
                configuration=configuration, on_progress=lambda line: self.stdout.write(line)
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"{verb} {configuration.name}: {configuration.endpoint} model "
                f"{configuration.model_id!r}, structured output {configuration.structured_output}"
                f", roles {assignments or 'none'}."
            )
        )
        if probe is not None:
            if probe.mode is None:
                raise CommandError(
                    f"Saved {configuration.name}, but it cannot be used yet: {probe.summary}"
                )
            self.stdout.write(probe.summary)
