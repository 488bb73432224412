"""Where model calls may go: one policy, applied when a configuration is saved and again when
every request connects (`llm.egress_http`).

A base URL names the host a maintainer wants called; the platform's server makes the call and
shows the reply, so an unchecked URL reaches what only the server can reach. The policy:

- link-local addresses (169.254.0.0/16, fe80::/10), the clouds' metadata addresses and names,
  multicast and reserved addresses are refused always, however the address is spelled (IPv4
  inside IPv6, decimal, octal or hex IPv4, a name that resolves there);
- every other address the IANA special-purpose registries call not globally reachable
  (loopback, private, CGNAT, unique-local, unspecified, documentation, 192.0.0.0/24, the
  local-use NAT64 prefix, ...) only where `LLM_ENDPOINTS_ALLOW_PRIVATE` is on (development,
  the demo and the tests);
- an IPv6 address carrying an IPv4 one (mapped, compatible, translated, NAT64, 6to4, Teredo)
  is checked as both;
- base URLs carry no user-info, query string or fragment;
- an API-key variable is sent only to the hosts it is bound to: the providers declare the hosts
  of their own services' variables (`ProviderFacts.key_hosts`), and a deployment adds or
  replaces bindings in `LLM_API_KEY_HOSTS`.

Saving resolves the host once (`host_lookup`, bounded: a resolver that hangs does not hold the
save) to tell the maintainer early; the request resolves it again, checks every address and
connects to the checked one, so DNS cannot answer differently between the check and the
connection.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from .keys import api_key_env_problem
from .lookup import HostLookup, IPAddress, host_lookup, normal_host, resolve
from .providers import registry

if TYPE_CHECKING:
    from .models import ModelConfiguration

# The instance-metadata services of the clouds: credentials of the machine itself.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, Google, Azure, Oracle, DigitalOcean, OpenStack
        "169.254.170.2",  # AWS ECS task credentials
        "fd00:ec2::254",  # AWS over IPv6
        "fd20:ce::254",  # Google over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure WireServer
        "192.0.0.192",  # Oracle Cloud (legacy)
    )
)
METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
    }
)
# IPv6 prefixes whose addresses carry an IPv4 address a translator or relay forwards to.
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052
_NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215
# Where RFC 6052 puts the IPv4 address (byte offsets) for each prefix length a local-use
# translator may be set up with inside its /48: byte 8 (bits 64-71) is always skipped, so the
# same address reads differently per length, and a deployment's choice is not known here.
_RFC6052_IPV4_BYTES = {
    48: (6, 7, 9, 10),
    56: (7, 9, 10, 11),
    64: (9, 10, 11, 12),
    96: (12, 13, 14, 15),
}
# The IANA special-purpose registries' entries that are not globally reachable, listed here
# because `is_global` varies with the Python version (3.11 takes 192.0.0.8 and 64:ff9b:1::/48
# for global and knows none of the newer IPv6 blocks); 240.0.0.0/4 is refused as reserved.
# The globally reachable anycast exceptions inside these blocks (PCP, TURN, AMT, AS112) cannot
# host a model server, so they are refused with their block.
NOT_GLOBALLY_REACHABLE = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",
        "100.64.0.0/10",
        "192.0.0.0/24",  # IETF protocol assignments: DS-Lite, the dummy 192.0.0.8, NAT64 discovery
        "192.0.2.0/24",
        "192.88.99.0/24",  # the deprecated 6to4 relay anycast (RFC 7526)
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "64:ff9b:1::/48",
        "100::/64",
        "100:0:0:1::/64",  # the dummy IPv6 prefix (RFC 9780)
        "2001::/23",  # IETF protocol assignments, Teredo (2001::/32) among them
        "2001:db8::/32",
        "3fff::/20",  # documentation (RFC 9637)
        "5f00::/16",  # SRv6 segment identifiers (RFC 9602)
        "fc00::/7",
        "fec0::/10",
    )
)


class EgressRefused(Exception):
    """A request the policy refuses; permanent: asking again goes to the same place."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def allow_private() -> bool:
    return bool(settings.LLM_ENDPOINTS_ALLOW_PRIVATE)


def _ipv4_at(packed: bytes, offsets: tuple[int, ...]) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(bytes(packed[i] for i in offsets))


def _embedded(address: IPAddress) -> list[IPAddress]:
    """The address and every IPv4 address it carries: IPv4-mapped, -compatible and
    -translated, both NAT64 prefixes, 6to4 and Teredo (its server and its client)."""
    found: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv4Address):
        return found
    address = ipaddress.IPv6Address(address.packed)  # without a zone ("%eth0")
    packed = address.packed
    if address.ipv4_mapped:
        found.append(address.ipv4_mapped)
    if address.sixtofour:
        found.append(address.sixtofour)
    if address.teredo:
        found.extend(address.teredo)  # the client is stored inverted; `teredo` undoes it
    if address in _NAT64_WELL_KNOWN or (packed[:12] == bytes(12) and int(address) > 1):
        # NAT64 and the old IPv4-compatible form (::a.b.c.d) reach the IPv4 address.
        found.append(_ipv4_at(packed, _RFC6052_IPV4_BYTES[96]))
    if address in _NAT64_LOCAL_USE:
        found.extend(_ipv4_at(packed, offsets) for offsets in _RFC6052_IPV4_BYTES.values())
    if packed[:12] == bytes(8) + b"\xff\xff\x00\x00":  # IPv4-translated ::ffff:0:a.b.c.d
        found.append(_ipv4_at(packed, _RFC6052_IPV4_BYTES[96]))
    return found


def globally_reachable(ip: IPAddress) -> bool:
    """Whether the special-purpose registries let `ip` be reached across the internet."""
    return ip.is_global and not any(ip in network for network in NOT_GLOBALLY_REACHABLE)


def address_problem(address: IPAddress) -> str:
    """Why the platform may not connect to `address` ("" when it may)."""
    shown = str(address)
    private = False
    for ip in _embedded(address):
        if ip in METADATA_ADDRESSES:
            return _("%(address)s is a cloud metadata address: model calls never go there.") % {
                "address": shown
            }
        if ip.is_link_local:
            return _("%(address)s is a link-local address: model calls never go there.") % {
                "address": shown
            }
        if ip.is_multicast or (isinstance(ip, ipaddress.IPv4Address) and ip.is_reserved):
            return _("%(address)s is not a unicast address a model server can have.") % {
                "address": shown
            }
        private = private or not globally_reachable(ip)
    if private and not allow_private():
        return _(
            "%(address)s is a loopback or private address, which this deployment does not call "
            "(LLM_ENDPOINTS_ALLOW_PRIVATE is off)."
        ) % {"address": shown}
    return ""


def literal_address(host: str) -> IPAddress | None:
    """The address `host` spells, as the system's resolver reads it (decimal, octal and hex
    IPv4 included: "2130706433" and "0x7f.1" are 127.0.0.1), or None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def name_problem(host: str) -> str:
    """What the name alone says: a metadata name, or localhost."""
    if host in METADATA_NAMES:
        return _("%(host)s is a cloud metadata host: model calls never go there.") % {"host": host}
    if (host == "localhost" or host.endswith(".localhost")) and not allow_private():
        return address_problem(ipaddress.ip_address("127.0.0.1")).replace("127.0.0.1", host, 1)
    return ""


def addresses_problem(host: str, addresses: list[IPAddress]) -> str:
    """The first problem among the addresses `host` resolved to ("" when all may be called)."""
    for address in addresses:
        if problem := address_problem(address):
            if str(address) == host:
                return problem
            return _("%(host)s resolves to %(address)s. %(problem)s") % {
                "host": host,
                "address": address,
                "problem": problem,
            }
    return ""


def host_problem(host: str, *, lookup: bool = True, looked_up: HostLookup | None = None) -> str:
    """Why the platform may not call `host` ("" when it may). With `lookup`, a name is resolved
    (or `looked_up` is used, when it is this host's) and every address checked; a name that does
    not resolve now, or not in time, is checked when it is called."""
    host = normal_host(host)
    address = literal_address(host)
    if address is not None:
        return address_problem(address)
    if problem := name_problem(host):
        return problem
    if not lookup:
        return ""
    if looked_up is None or looked_up.host != host:
        looked_up = host_lookup(host)
    return addresses_problem(host, list(looked_up.addresses))


def url_problem(url: str, *, lookup: bool = True, looked_up: HostLookup | None = None) -> str:
    """Why `url` cannot be a model endpoint's base URL ("" when it can)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as error:
        return _("This is not a URL the platform can call (%(error)s).") % {"error": error}
    if parts.scheme not in ("http", "https"):
        return _("A model endpoint's URL starts with https:// (or http:// for a local server).")
    if "@" in parts.netloc:
        return _(
            "Remove the user name and password from the URL: the key goes in an environment "
            "variable (API key environment variable), never in the address."
        )
    if parts.query or url.rstrip().endswith("?"):
        return _(
            "Remove the query string (the part from ?): a base URL is a path, and the "
            "platform adds the rest."
        )
    if parts.fragment or "#" in url:
        return _("Remove the fragment (the part from #) from the base URL.")
    if not parts.hostname:
        return _("The URL names no host.")
    return host_problem(parts.hostname, lookup=lookup, looked_up=looked_up)


def key_hosts(api_key_env: str) -> list[str]:
    """The hosts (shell patterns) the key in `api_key_env` may be sent to: the deployment's
    binding where it names the variable, else the providers' own."""
    deployment = settings.LLM_API_KEY_HOSTS
    if api_key_env in deployment:
        return list(deployment[api_key_env])
    return list(registry.key_hosts().get(api_key_env, ()))


def key_host_problem(api_key_env: str, url: str) -> str:
    """Why the key in `api_key_env` may not be sent to `url`'s host ("" when it may)."""
    if not api_key_env:
        return ""
    if problem := api_key_env_problem(api_key_env):
        return problem
    host = normal_host(urlsplit(url).hostname or "")
    patterns = key_hosts(api_key_env)
    if any(fnmatch.fnmatchcase(host, pattern.lower()) for pattern in patterns):
        return ""
    values = {
        "variable": api_key_env,
        "hosts": ", ".join(patterns),
        # Translators: where a key may not be sent when the endpoint's URL names no host.
        "host": host or _("this endpoint"),
        "binding": f"{api_key_env}={host or 'host'}",
    }
    if patterns:
        message = _(
            "The key in %(variable)s may only be sent to %(hosts)s, not to %(host)s. Leave the "
            "variable blank for a server without a key, or bind the variable to this host in "
            "LLM_API_KEY_HOSTS (%(binding)s)."
        )
    else:
        message = _(
            "The key in %(variable)s is bound to no host, so it is sent nowhere, not to "
            "%(host)s. Leave the variable blank for a server without a key, or bind the "
            "variable to this host in LLM_API_KEY_HOSTS (%(binding)s)."
        )
    return message % values


def configuration_problems(
    configuration: ModelConfiguration,
    *,
    lookup: bool = True,
    looked_up: HostLookup | None = None,
) -> dict[str, str]:
    """The policy's objections to a model configuration, by form field (none when offline).
    `looked_up` is a lookup of the endpoint's host already made in this request (the form's),
    so saving resolves the name once."""
    if configuration.is_offline:
        return {}
    problems: dict[str, str] = {}
    if problem := url_problem(configuration.endpoint, lookup=lookup, looked_up=looked_up):
        problems["base_url"] = problem
    if problem := key_host_problem(configuration.api_key_env, configuration.endpoint):
        problems["api_key_env"] = problem
    return problems


def endpoint_lookup(configuration: ModelConfiguration) -> HostLookup | None:
    """The one lookup checking `configuration` makes, for the form and the service to share
    (None when the check resolves no name: offline, an address, a refused name, no host)."""
    if configuration.is_offline:
        return None
    try:
        host = normal_host(urlsplit(configuration.endpoint).hostname or "")
    except ValueError:
        return None
    if not host or literal_address(host) is not None or name_problem(host):
        return None
    return host_lookup(host)


def configuration_check(
    configuration: ModelConfiguration, *, looked_up: HostLookup | None = None
) -> None:
    """Raise ValidationError (by field) when the configuration may not be saved."""
    if problems := configuration_problems(configuration, looked_up=looked_up):
        raise ValidationError(problems)


def request_check(configuration: ModelConfiguration) -> None:
    """Raise EgressRefused when the configuration may not be called: rows saved before the
    policy, or written outside the forms. Addresses are checked as the request connects."""
    problems = configuration_problems(configuration, lookup=False)
    if problems:
        raise EgressRefused(
            _("Configuration %(name)r cannot be called: %(problems)s")
            % {"name": configuration.name, "problems": " ".join(problems.values())}
        )


def checked_addresses(host: str, port: int) -> list[IPAddress]:
    """The addresses to connect to for `host`, resolved now; EgressRefused when the host, or
    any address it resolves to, may not be called (one bad answer refuses them all)."""
    host = normal_host(host)
    address = literal_address(host)
    if address is not None:
        addresses = [address]
    else:
        if problem := name_problem(host):
            raise EgressRefused(problem)
        try:
            addresses = resolve(host, port)
        except UnicodeError as error:
            raise OSError(f"Cannot resolve {host}: {error}") from error
    if problem := addresses_problem(host, addresses):
        raise EgressRefused(problem)
    return addresses
