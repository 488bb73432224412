class ApplicationError(Exception):
    """A business rule refused an action; `message` is written for the person who asked."""

    def __init__(self, message: str, *, extra: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}
