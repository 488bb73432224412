"""One bounded lookup of a model endpoint's host, made once per save and shared by the checks
that need its addresses (`llm.egress`).

A resolver that does not answer makes getaddrinfo wait its own timeouts (5 s a try with
resolv.conf's defaults); saving a configuration only looks the name up to tell the maintainer
early, so it gives up sooner and leaves the addresses to the check each call makes as it
connects.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from dataclasses import dataclass

from django.utils.translation import gettext

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# How long saving waits for the host's addresses.
HOST_LOOKUP_TIMEOUT_SECONDS = 2.0


def normal_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def resolve(host: str, port: int | None = None) -> list[IPAddress]:
    """Every address `host` resolves to; raises OSError (socket.gaierror) when it does not."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))


@dataclass(frozen=True)
class HostLookup:
    """What one bounded lookup of `host` found: its addresses (none when the name does not
    resolve, or when the lookup outlasted its deadline: `timed_out`)."""

    host: str
    addresses: tuple[IPAddress, ...] = ()
    timed_out: bool = False
    timeout: float = HOST_LOOKUP_TIMEOUT_SECONDS

    @property
    def note(self) -> str:
        """What the maintainer is told when the lookup gave up ("" when it did not)."""
        if not self.timed_out:
            return ""
        return gettext(
            "Looking up %(host)s took longer than %(seconds)s s, so its addresses were not "
            "checked on saving; every call checks them as it connects. If calls fail, check "
            "the name and this server's DNS."
        ) % {"host": self.host, "seconds": f"{self.timeout:g}"}


def host_lookup(host: str, *, timeout: float | None = None) -> HostLookup:
    """Resolve `host` once, waiting at most `timeout` seconds (HOST_LOOKUP_TIMEOUT_SECONDS).

    getaddrinfo cannot be interrupted, so it runs in a daemon thread that is left to finish on
    its own when the deadline passes; nothing waits for it (not even the process's exit)."""
    host = normal_host(host)
    timeout = HOST_LOOKUP_TIMEOUT_SECONDS if timeout is None else timeout
    found: list[IPAddress] = []
    done = threading.Event()

    def ask() -> None:
        try:
            found.extend(resolve(host))
        except (OSError, UnicodeError):
            pass  # a name that does not resolve now is checked when it is called
        finally:
            done.set()

    threading.Thread(target=ask, name=f"host lookup {host}", daemon=True).start()
    if not done.wait(timeout):
        return HostLookup(host, timed_out=True, timeout=timeout)
    return HostLookup(host, tuple(found), timeout=timeout)
