import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from llm.gateway import structured
from llm.models import ModelConfiguration, ModelRoleAssignment
from tests.llm.test_structured_formats import VALID

pytestmark = pytest.mark.django_db


def configure(*args):
    call_command("configure_model", *args)


def test_creates_then_updates_the_same_configuration_and_its_roles(fake_openai, capsys):
    command = [
        "--name",
        "Local Llama",
        "--base-url",
        fake_openai.base_url,
        "--model-id",
        "llama-3.2-3b",
        "--api-key-env",
        "",
        "--roles",
        "target,judge,user_simulator",
        "--default-for",
        "judge",
        "--max-concurrency",
        "4",
        "--structured",
        "json_object",
    ]
    configure(*command)
    configure(*command)  # idempotent
    assert "Updated Local Llama" in capsys.readouterr().out
    configuration = ModelConfiguration.objects.get()
    assert configuration.max_concurrency == 4
    assert configuration.structured_output == "json_object"
    assignments = {(a.role, a.is_default) for a in ModelRoleAssignment.objects.all()}
    assert assignments == {("target", False), ("judge", True), ("user_simulator", False)}

    configure("--name", "Local Llama", "--roles", "target", "--structured", "prompt")
    configuration.refresh_from_db()
    assert configuration.model_id == "llama-3.2-3b"  # options left out are kept
    assert list(ModelRoleAssignment.objects.values_list("role", flat=True)) == ["target"]

    # The configuration works on the wire as configured: prompt-only, no response_format.
    from evaluations.schemas import JudgeVerdict

    fake_openai.enqueue(json=VALID)
    structured(
        configuration=configuration,
        messages=[{"role": "user", "content": "Judge this."}],
        schema=JudgeVerdict,
        role="judge",
        purpose="tests.configure",
        use_cache=False,
    )
    assert fake_openai.last_request.model == "llama-3.2-3b"
    assert fake_openai.last_request.param("response_format") is None


def test_bad_roles_and_bad_fields_are_explained():
    with pytest.raises(CommandError, match="Unknown role critic; use any of"):
        configure("--name", "X", "--model-id", "m", "--roles", "critic")
    with pytest.raises(CommandError, match="api_key_env"):
        configure("--name", "X", "--model-id", "m", "--api-key-env", "sk-123 secret")
    assert not ModelConfiguration.objects.exists()


def test_the_provider_keeps_completions_only_when_asked(client_for, maintainer):
    """Off by default (a data-retention choice), on with --store-completions, off again with
    --no-store-completions; the configuration form offers it with its retention warning."""
    from django.urls import reverse

    base = ["--name", "Kept", "--base-url", "http://127.0.0.1:9/v1", "--model-id", "m"]
    configure(*base, "--api-key-env", "", "--no-probe")
    assert ModelConfiguration.objects.get().store_completions is False
    configure(*base, "--store-completions", "--no-probe")
    assert ModelConfiguration.objects.get().store_completions is True
    configure(*base, "--no-probe")  # left out: unchanged
    assert ModelConfiguration.objects.get().store_completions is True
    configure(*base, "--no-store-completions", "--no-probe")
    assert ModelConfiguration.objects.get().store_completions is False
    page = client_for(maintainer).get(reverse("llm:configuration-create")).content.decode()
    assert 'name="store_completions"' in page
    assert "data-retention choice" in page
