from django.contrib.admin.apps import AdminConfig


class ImpactBenchAdminConfig(AdminConfig):
    default_site = "impactbench_site.admin.ImpactBenchAdminSite"
