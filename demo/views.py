from django.http import HttpRequest, JsonResponse

from .progress import progress_read


def progress(request: HttpRequest) -> JsonResponse:
    """How far the demo seed has got, for the banner's script: `state` is none (no seed ran
    here), running, complete, failed or interrupted."""
    seed = progress_read()
    data = seed.as_json() if seed is not None else {"state": "none", "seeding": False}
    response = JsonResponse(data)
    response["Cache-Control"] = "no-store"
    return response
