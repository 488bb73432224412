"""Every IPv6 form that carries an IPv4 address is checked as that address too, and every
address the IANA special-purpose registries call not globally reachable is refused while
private endpoints are off."""

import ipaddress

import pytest

from llm.egress import address_problem, url_problem
from llm.models import ModelConfiguration
from tests.security.test_model_egress import _post

pytestmark = pytest.mark.django_db


def _v4(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def mapped(v4: str) -> str:
    return f"::ffff:{v4}"


def compatible(v4: str) -> str:
    return f"::{v4}"


def translated(v4: str) -> str:
    return f"::ffff:0:{v4}"


def nat64_well_known(v4: str) -> str:
    return f"64:ff9b::{v4}"


def nat64_local_use(v4: str) -> str:
    return f"64:ff9b:1::{v4}"


def nat64_local_use_48(v4: str) -> str:
    # RFC 6052 with a /48 prefix: two octets, the skipped u-octet, then the other two.
    value = _v4(v4)
    return str(
        ipaddress.IPv6Address(
            (0x0064_FF9B_0001 << 80) | ((value >> 16) << 64) | ((value & 0xFFFF) << 40)
        )
    )


def nat64_local_use_64(v4: str) -> str:
    return str(ipaddress.IPv6Address((0x0064_FF9B_0001 << 80) | (_v4(v4) << 24)))


def sixtofour(v4: str) -> str:
    return str(ipaddress.IPv6Address((0x2002 << 112) | (_v4(v4) << 80) | 1))


def teredo(v4: str) -> str:
    # Server 65.54.227.120 (a public one), the client inverted in the last 32 bits.
    server = _v4("65.54.227.120")
    return str(ipaddress.IPv6Address((0x2001_0000 << 96) | (server << 64) | (_v4(v4) ^ 0xFFFFFFFF)))


FORMS = {
    "plain": str,
    "mapped": mapped,
    "compatible": compatible,
    "translated": translated,
    "nat64 64:ff9b::/96": nat64_well_known,
    "nat64 64:ff9b:1::/48 (as /96)": nat64_local_use,
    "nat64 64:ff9b:1::/48 (as /48)": nat64_local_use_48,
    "nat64 64:ff9b:1::/48 (as /64)": nat64_local_use_64,
    "6to4": sixtofour,
    "teredo": teredo,
}
# Refused even where private endpoints are allowed.
ALWAYS_REFUSED = ("169.254.169.254",)
# Refused where private endpoints are off.
NOT_GLOBAL = ("127.0.0.1", "10.0.0.1", "192.0.0.8", *ALWAYS_REFUSED)
# Wrappers that are themselves not globally reachable: refused with private endpoints off
# whatever they carry (a local translator, an IETF-assigned tunnel prefix).
NOT_GLOBAL_WRAPPERS = {
    "nat64 64:ff9b:1::/48 (as /96)",
    "nat64 64:ff9b:1::/48 (as /48)",
    "nat64 64:ff9b:1::/48 (as /64)",
    "teredo",
}


@pytest.mark.parametrize("inner", NOT_GLOBAL)
@pytest.mark.parametrize("form", FORMS)
def test_each_form_of_a_non_global_address_is_refused_without_private_endpoints(
    settings, form, inner
):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = False
    address = ipaddress.ip_address(FORMS[form](inner))
    assert address_problem(address), address


@pytest.mark.parametrize("inner", ALWAYS_REFUSED)
@pytest.mark.parametrize("form", FORMS)
def test_each_form_of_the_metadata_address_is_refused_even_with_private_endpoints(
    settings, form, inner
):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = True
    address = ipaddress.ip_address(FORMS[form](inner))
    assert "metadata" in address_problem(address), address


@pytest.mark.parametrize("inner", ["127.0.0.1", "10.0.0.1", "192.0.0.8"])
@pytest.mark.parametrize("form", FORMS)
def test_each_form_of_a_private_address_is_allowed_where_private_endpoints_are(
    settings, form, inner
):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = True
    address = ipaddress.ip_address(FORMS[form](inner))
    assert address_problem(address) == "", address


@pytest.mark.parametrize("form", FORMS)
def test_a_public_address_is_accepted_in_a_global_wrapper_only(settings, form):
    """8.8.8.8 inside 6to4, the well-known NAT64 prefix or the IPv4-in-IPv6 forms reaches that
    public host and is accepted; the local-use NAT64 prefix and Teredo are not globally
    reachable themselves, so they need private endpoints on."""
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = False
    address = ipaddress.ip_address(FORMS[form]("8.8.8.8"))
    refused = bool(address_problem(address))
    assert refused == (form in NOT_GLOBAL_WRAPPERS), (address, address_problem(address))


@pytest.mark.parametrize(
    "address",
    [
        "192.0.0.0", "192.0.0.9", "192.0.0.170", "192.0.2.1", "198.18.0.1", "198.51.100.7",
        "203.0.113.9", "100.64.0.1", "0.1.2.3", "192.88.99.1", "2001:db8::1", "3fff::1",
        "5f00::1", "100::1", "100:0:0:1::1", "2001:2::1", "fc00::1", "fec0::1",
    ],
)  # fmt: skip
def test_special_purpose_addresses_are_refused_without_private_endpoints(settings, address):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = False
    assert address_problem(ipaddress.ip_address(address)), address


@pytest.mark.parametrize("address", ["8.8.8.8", "2001:4860:4860::8888", "2606:4700::1111"])
def test_public_addresses_are_accepted(settings, address):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = False
    assert address_problem(ipaddress.ip_address(address)) == ""


@pytest.mark.parametrize("url", ["http://[64:ff9b:1::a9fe:a9fe]/", "http://192.0.0.8/"])
def test_the_reported_urls_are_refused_by_the_form(settings, client_for, maintainer, url):
    settings.LLM_ENDPOINTS_ALLOW_PRIVATE = False
    assert url_problem(url, lookup=False)
    response = _post(client_for(maintainer), url)
    assert response.status_code == 200
    assert response.context["form"].errors["base_url"]
    assert "Probe" in response.content.decode()  # re-rendered with the maintainer's text kept
    assert not ModelConfiguration.objects.filter(name="Probe").exists()
