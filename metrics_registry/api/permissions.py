from rest_framework.permissions import SAFE_METHODS, BasePermission


class ReadOnly(BasePermission):
    """The registry API is public and read-only; visibility is decided by the selectors."""

    message = "The registry API is read-only."

    def has_permission(self, request, view) -> bool:
        return request.method in SAFE_METHODS
