"""When to try again: bounded exponential backoff with jitter under a total deadline.

The TTS session resumes a dropped connection and retries ``busy`` answers with one
:class:`RetryPolicy`. Its clock, sleep and random source are injectable, so tests replay a schedule
exactly instead of waiting on wall time.

Example:
    ```python
    policy = RetryPolicy(initial_delay_s=0.2, max_delay_s=5.0, deadline_s=60.0)
    session = TTSSession(transport, retry=policy)
    ```
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from strands_voice_protocol.errors import ConfigurationError, TTSError

__all__ = ["NO_RETRY", "Backoff", "RetryPolicy", "is_retryable"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Backoff between attempts: ``min(max_delay_s, initial_delay_s * multiplier**n)``, jittered.

    Attributes:
        initial_delay_s: The first delay (before jitter).
        max_delay_s: The longest delay (before jitter).
        multiplier: Growth of the delay per attempt.
        jitter: The fraction of each delay drawn at random: the delay is ``d * (1 - jitter + jitter * r)``
            with ``r`` in [0, 1), so sessions dropped together do not all come back at once.
        deadline_s: The longest one outage may last, from its first failure to the attempt that would
            start past it; 0 turns retrying off.
        clock: Seconds, monotonic: the session's one clock, read by its driver (injectable for tests).
        sleep: Waits the given seconds (injectable for tests).
        random: Returns a float in [0, 1) (injectable, so tests draw the jitter deterministically).
    """

    initial_delay_s: float = 0.25
    max_delay_s: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.5
    deadline_s: float = 60.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)
    random: Callable[[], float] = field(default=random.random, compare=False)

    def __post_init__(self) -> None:
        if self.initial_delay_s < 0 or self.max_delay_s < self.initial_delay_s:
            raise ConfigurationError("need 0 <= initial_delay_s <= max_delay_s")
        if self.multiplier < 1 or not 0 <= self.jitter <= 1 or self.deadline_s < 0:
            raise ConfigurationError("need multiplier >= 1, 0 <= jitter <= 1 and deadline_s >= 0")

    @property
    def enabled(self) -> bool:
        """False for a policy that never retries (``deadline_s == 0``)."""
        return self.deadline_s > 0

    def delay(self, attempt: int) -> float:
        """The jittered delay before attempt ``attempt`` (0 for the first retry)."""
        base = min(self.max_delay_s, self.initial_delay_s * self.multiplier ** min(attempt, 64))
        return base * (1.0 - self.jitter + self.jitter * self.random())


#: A policy that never retries: every failure is final at once.
NO_RETRY = RetryPolicy(deadline_s=0.0)


def is_retryable(error: BaseException) -> bool:
    """True when ``error`` is a :class:`TTSError` that trying again later may cure."""
    return isinstance(error, TTSError) and error.retryable


class Backoff:
    """One outage's retry budget under a :class:`RetryPolicy` (sans-I/O bookkeeping).

    Args:
        policy: The policy.
    """

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.started_at: float | None = None
        self.cause: TTSError | None = None
        self.attempts = 0

    @property
    def active(self) -> bool:
        """True while an outage is being retried."""
        return self.started_at is not None

    def next_delay(self, cause: TTSError, now: float) -> float | None:
        """The delay before the next attempt, or None when the deadline leaves no room for one.

        Args:
            cause: What failed (kept from the outage's first failure).
            now: The time on the session's clock (the policy's ``clock``), passed in: no clock is read here.
        """
        if self.started_at is None:
            self.started_at = now
            self.cause = cause
            self.attempts = 0
        if not self.policy.enabled:
            return None
        delay = self.policy.delay(self.attempts)
        if now + delay - self.started_at > self.policy.deadline_s:
            return None
        self.attempts += 1
        return delay

    def reset(self) -> None:
        """The outage is over (something succeeded after it)."""
        self.started_at = None
        self.cause = None
        self.attempts = 0
