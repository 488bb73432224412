from django.apps import AppConfig


class LlmConfig(AppConfig):
    name = "llm"
    verbose_name = "Model gateway"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from core import events

        from .demo import demo_seed_steps

        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
