"""Saving a model configuration looks its host up once, and a resolver that does not answer
does not hold the save: the form's lookup is the service's (llm/lookup.py)."""

import socket
import threading

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from llm import lookup
from llm.models import ModelConfiguration
from tests.security.test_model_egress import FORM

pytestmark = pytest.mark.django_db


def _post(client, url: str):
    return client.post(reverse("llm:configuration-create"), {**FORM, "base_url": url})


def test_one_save_resolves_the_host_once(client_for, maintainer, dns):
    dns.answers["models.test"] = ["93.184.215.14"]
    response = _post(client_for(maintainer), "https://models.test/v1")
    assert response.status_code == 302
    assert ModelConfiguration.objects.filter(name="Probe").exists()
    assert dns.asked == ["models.test"]


def test_a_refused_name_is_looked_up_once(client_for, maintainer, dns, settings):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = True
    response = _post(client_for(maintainer), "http://metadata-alias.test/v1")
    assert "metadata" in response.context["form"].errors["base_url"][0]
    assert dns.asked == ["metadata-alias.test"]


def test_a_lookup_that_hangs_does_not_hold_the_save(client_for, maintainer, monkeypatch):
    """The resolver answers nothing until the test ends: the save goes through without the
    addresses, says so, and leaves them to the check each call makes as it connects."""
    monkeypatch.setattr(lookup, "HOST_LOOKUP_TIMEOUT_SECONDS", 0.2)
    release, asked = threading.Event(), []

    def hanging(host, *args, **kwargs):
        asked.append(host)
        release.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    try:
        response = _post(client_for(maintainer), "https://slow-dns.test/v1")
        still_hanging = not release.is_set()
    finally:
        release.set()
    assert still_hanging
    assert response.status_code == 302
    assert ModelConfiguration.objects.filter(name="Probe").exists()
    assert asked == ["slow-dns.test"]
    warnings = [str(m) for m in get_messages(response.wsgi_request) if m.level_tag == "warning"]
    assert warnings == [
        "Looking up slow-dns.test took longer than 0.2 s, so its addresses were not checked on "
        "saving; every call checks them as it connects. If calls fail, check the name and this "
        "server's DNS."
    ]
