from tests.evaluations.conftest import fake_models  # noqa: F401 - the same fake endpoints
