from rest_framework.permissions import SAFE_METHODS, BasePermission


class SignedInReadOnly(BasePermission):
    """Submissions are private: owners see theirs, researchers and maintainers see all."""

    message = "Sign in to read submissions; the submissions API is read-only."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated) and (
            request.method in SAFE_METHODS
        )
