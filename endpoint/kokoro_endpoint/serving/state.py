"""What the routes share: settings, the engine once loaded and warmed, capacity and the scheduler."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from kokoro_endpoint.engines.interface import Engine
from kokoro_endpoint.engines.loader import load_engine
from kokoro_endpoint.scheduling.calibration import measure_load
from kokoro_endpoint.scheduling.capacity import Capacity
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.settings import Settings

__all__ = ["EndpointState"]

logger = logging.getLogger(__name__)


@dataclass
class EndpointState:
    """Shared by every route of one app.

    Attributes:
        settings: Limits and engine choice.
        engine: The engine; None until loaded.
        ready: True once the engine is loaded and warmed (``/ping`` answers 200).
        capacity: Concurrent sessions and streams.
        scheduler: Runs synthesis steps; created at startup.
        load_error: Why the engine could not be loaded, once it failed (the server should then stop).
    """

    settings: Settings
    engine: Engine | None = None
    ready: bool = False
    capacity: Capacity = field(init=False)
    scheduler: SynthesisScheduler | None = None
    load_error: BaseException | None = None

    def __post_init__(self) -> None:
        self.capacity = Capacity(self.settings.max_sessions)

    def gauges(self) -> tuple[int, int, int]:
        """Sessions in use, their limit and synthesis steps waiting (the interval metrics)."""
        queued = self.scheduler.counters().queued_steps if self.scheduler is not None else 0
        return self.capacity.in_use, self.capacity.limit, queued

    async def load(self) -> None:
        """Load (if needed) and warm the engine on a thread, then (admission on) measure its rate for the
        scheduler; ``ready`` turns True when done.

        Raises:
            Exception: whatever loading or warming raised (kept in ``load_error``).
        """
        try:
            if self.engine is None:
                settings = self.settings
                self.engine = await asyncio.to_thread(
                    load_engine, settings.engine, settings.model_dir, settings.torch_device, settings.voices
                )
            await asyncio.to_thread(self.engine.warm_up)
            if self.scheduler is not None and self.settings.admission_max_load is not None:
                load = await asyncio.to_thread(measure_load, self.engine, self.settings)
                self.scheduler.calibrate(load)
        except Exception as error:
            logger.exception("engine=<%s> | could not load the engine", self.settings.engine)
            self.load_error = error
            raise
        self.ready = True
        logger.info("engine=<%s> | ready", self.engine.name)
