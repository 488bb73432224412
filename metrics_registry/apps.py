from django.apps import AppConfig


class MetricsRegistryConfig(AppConfig):
    name = "metrics_registry"
    verbose_name = "Metrics registry"
