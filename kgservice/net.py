"""Addresses and networks named in settings (``KG_TRUSTED_PROXIES``): parsed once, matched per
request. A leaf module: the config checks the setting with it, the server matches peers with it.

>>> nets = parse_networks(("10.0.0.0/8", "127.0.0.2", "::1"), "KG_TRUSTED_PROXIES")
>>> [is_in("10.1.2.3", nets), is_in("127.0.0.2", nets), is_in("127.0.0.1", nets), is_in("::1", nets)]
[True, True, False, True]
>>> is_in("not-an-address", nets), is_in("::ffff:10.0.0.9", nets)
(False, True)
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from kgservice.errors import ConfigError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(values: Iterable[str], where: str) -> tuple[Network, ...]:
    """Each value an address (``10.0.0.5``, ``::1``) or a network (``10.0.0.0/8``); a bad one is
    a :class:`ConfigError` naming ``where`` and the value. ``*`` is refused on purpose: trusting
    every peer lets any client choose the address its rate limits and log lines are kept under."""
    out: list[Network] = []
    for raw in values:
        value = str(raw).strip()
        if not value:
            continue
        if value == "*":
            raise ConfigError(f"{where}: '*' would trust every peer's X-Forwarded-For (any client could pick its "
                              "own address); list the proxies' addresses or networks, e.g. 10.0.0.0/8")
        try:
            out.append(ipaddress.ip_network(value, strict=False))
        except ValueError:
            raise ConfigError(f"{where}: {value!r} is not an IP address or network (e.g. 10.0.0.5, 10.0.0.0/8, "
                              "fd00::/8)") from None
    return tuple(out)


def address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address in ``value`` (an IPv4-mapped IPv6 address as its IPv4 one), or None."""
    try:
        ip = ipaddress.ip_address(value.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_in(value: str, networks: Iterable[Network]) -> bool:
    """Whether the address ``value`` is in one of ``networks`` (False for what is no address)."""
    ip = address(value)
    return ip is not None and any(ip.version == n.version and ip in n for n in networks)
