from django.db.models import Prefetch, QuerySet

from .models import Area, Subarea


def area_list_with_subareas() -> QuerySet[Area]:
    return Area.objects.prefetch_related(
        Prefetch("subareas", queryset=Subarea.objects.order_by("position"))
    )
