"""Progress reporting.

Parts report long work through the :class:`Progress` object in their
:class:`~graphclust.Context`. When the run is quiet (the default in library use)
every call is a no-op; when verbose, each event is handed to the
``graphclust_report_progress`` hook, so reporters are plugins too (the built-in one
writes to stderr).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import attrs

__all__ = ["Progress", "ProgressEvent"]

T = TypeVar("T")


@attrs.frozen
class ProgressEvent:
    """One progress report.

    Attributes
    ----------
    stage : str
        The pipeline stage (``"anchors"``, ``"graph"``, ``"solver"``, ``"rounding"``).
    part : str
        Registered name of the part reporting.
    kind : str
        ``"start"``, ``"step"``, ``"end"`` or ``"message"``.
    step, total : int or None
        Position within the stage, where known.
    message : str
        Human-readable detail (e.g. ``"objective 12.3"``).
    elapsed : float
        Seconds since the stage started.
    """

    stage: str
    part: str
    kind: str
    step: int | None = None
    total: int | None = None
    message: str = ""
    elapsed: float = 0.0


class Progress:
    """Reporter handed to parts. ``emit=None`` makes every call a no-op."""

    def __init__(self, emit: Callable[[ProgressEvent], None] | None = None,
                 stage: str = "", part: str = ""):
        self._emit = emit
        self.stage = stage
        self.part = part
        self._t0 = time.perf_counter()

    @property
    def enabled(self) -> bool:
        return self._emit is not None

    def for_stage(self, stage: str, part: str) -> "Progress":
        return Progress(self._emit, stage, part)

    def _send(self, kind, step=None, total=None, message=""):
        if self._emit is not None:
            self._emit(ProgressEvent(self.stage, self.part, kind, step, total, message,
                                     time.perf_counter() - self._t0))

    def start(self, total: int | None = None, message: str = "") -> None:
        self._t0 = time.perf_counter()
        self._send("start", 0, total, message)

    def step(self, step: int, total: int | None = None, message: str = "") -> None:
        self._send("step", step, total, message)

    def message(self, message: str) -> None:
        self._send("message", message=message)

    def end(self, message: str = "") -> None:
        self._send("end", message=message)

    def iterate(self, iterable: Iterable[T], total: int | None = None) -> Iterator[T]:
        """Yield from ``iterable`` reporting a step for each item."""
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        for i, item in enumerate(iterable):
            yield item
            self.step(i + 1, total)
