"""The turn-taking core on an event loop: the one asyncio adapter both front ends drive it with.

:class:`TurnLoop` takes inputs from any task (:meth:`TurnLoop.put`: the listener's events, the answers'
progress, typed turns), hands them to the core one at a time with the loop's clock, wakes the core when it
asks (:attr:`~strands_voice.turns.TurnTaking.wakeup`), and hands each action to the front end's
``perform``, in order. The front end holds no rule: it performs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from strands_voice.turns._actions import TurnAction
from strands_voice.turns._core import TurnTaking
from strands_voice.turns._inputs import Tick, TurnInput

__all__ = ["TurnLoop"]


class TurnLoop:
    """Drives a :class:`TurnTaking` core (see the module docstring).

    Args:
        core: The rules.
        perform: Does one action (awaited before the next input is taken).
        note: Sees each input before the core does (the front end's clocks and marks), if given.
    """

    def __init__(
        self,
        core: TurnTaking,
        perform: Callable[[TurnAction], Awaitable[None]],
        note: Callable[[TurnInput], None] | None = None,
    ) -> None:
        self.core = core
        self._perform = perform
        self._note = note
        self._inputs: asyncio.Queue[TurnInput | None] = asyncio.Queue()

    def put(self, event: TurnInput) -> None:
        """An input for the core (any task of the loop)."""
        self._inputs.put_nowait(event)

    def close(self) -> None:
        """:meth:`run` returns once the inputs before this one are handled."""
        self._inputs.put_nowait(None)

    async def run(self) -> None:
        """Handle every input, and the core's wakeups, until :meth:`close`."""
        loop = asyncio.get_running_loop()
        while True:
            wakeup = self.core.wakeup
            timeout = None if wakeup is None else max(0.0, wakeup - loop.time())
            try:
                event = await asyncio.wait_for(self._inputs.get(), timeout)
            except TimeoutError:
                event = Tick()
            if event is None:
                return
            if self._note is not None:
                self._note(event)
            for action in self.core.handle(event, loop.time()):
                await self._perform(action)
