"""Pacing an answer's audio to the caller's playback: send on only while little enough is unplayed.

Audio sent far ahead of what the caller has played would still play after a pause or a barge-in reached
the sender; kept within a short lead of the playback, a pause or a cut stops the sound within that lead.
The lead is the caller's choice: the cascade emits 40 ms slices into a local player (a short lead, a fine
poll), the app's call sends whole chunks over a network (a lead that covers its jitter, a coarser poll).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

__all__ = ["Sleep", "Unplayed", "within_lead"]

#: How much of the audio sent is not yet played, in seconds; None once there is nothing to wait for
#: (the playback is not counted, or the answer was cut).
Unplayed = Callable[[], float | None]
#: Waits the given seconds (``asyncio.sleep``; a test's fake clock).
Sleep = Callable[[float], Awaitable[None]]


async def within_lead(
    unplayed_s: Unplayed, *, lead_s: float, poll_s: float, sleep: Sleep = asyncio.sleep
) -> None:
    """Return once at most ``lead_s`` of the audio sent is unplayed (or ``unplayed_s`` gives None).

    Args:
        unplayed_s: What is sent but not yet played, in seconds (None: stop waiting).
        lead_s: How far the audio may run ahead of the playback.
        poll_s: The longest wait before the playback is looked at again (a pause stops the count, so the
            wait is never the whole excess at once).
        sleep: Waits that long.
    """
    while (unplayed := unplayed_s()) is not None:
        ahead_s = unplayed - lead_s
        if ahead_s <= 0:
            return
        await sleep(min(ahead_s, poll_s))
