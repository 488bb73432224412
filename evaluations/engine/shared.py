"""The engine's per-loop gateway: shared AsyncOpenAI clients and permit pools."""

import asyncio

from django.conf import settings

from llm.aio import AsyncGateway

_gateways: dict[int, AsyncGateway] = {}


def gateway_for_loop(loop: asyncio.AbstractEventLoop) -> AsyncGateway:
    """One gateway per event loop: clients and pools are reused by every batch on it."""
    gateway = _gateways.get(id(loop))
    if gateway is None:
        gateway = AsyncGateway(concurrency=settings.ENGINE_CONCURRENCY)
        _gateways[id(loop)] = gateway
    return gateway
