"""A base for the library's blocking objects that a ``with`` block closes when it ends."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["ClosedOnExit"]


class ClosedOnExit:
    """``with obj:`` gives ``obj`` and calls its :meth:`close` at the end, however the block ends."""

    def close(self) -> None:
        """Release what the object holds (subclasses define it)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
