"""Progress reporting.

Parts report long work through the :class:`Progress` object in their
:class:`~graphclust.Context`. When the run is quiet (the default in library use)
every call is a no-op; when verbose, each event is handed to the
``graphclust_report_progress`` hook, so reporters are plugins too (the built-in one,
:class:`graphclust._reporter.StderrProgressReporter`, draws one tqdm bar per stage on a
terminal and writes one line per stage otherwise).

Who sends what
--------------
A *stage* (``scale``, ``anchors``, ``graph``, ``k``, ``adapter``, ``solver``, ``lift``,
``rounding``; ``members`` and ``consensus`` in an ensemble) is opened and closed by the
pipeline (:meth:`Progress.open` / :meth:`Progress.close`), once each (in each start), and the
seconds :meth:`Progress.close` returns are what the fit records under the same name in
``timings_``: the stages of the progress and of the timings are the same, on one clock.
Inside it, a part announces how much work it will do with :meth:`Progress.start` (which
sets or resets the stage's total, for a part that works in phases, e.g. DCD's restarts),
reports :meth:`Progress.step` and may finish a phase
with :meth:`Progress.end`. So a stage is one bar, however many phases its part has.

A phase that stops before its announced total (an iterative solver that converged at
iteration 8 of at most 100) is closed at the step it reached: :meth:`Progress.end` first
reports that step as the total, so the bar ends at ``8/8`` (100 %), not at ``8/100``.
A part whose total is an estimate (ARPACK restarts) may also raise it with a step
whose ``total`` is larger.

Event kinds (:attr:`ProgressEvent.kind`): ``"open"``, ``"start"``, ``"step"``,
``"end"``, ``"message"``, ``"close"``.
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
        The pipeline stage (``"anchors"``, ``"graph"``, ``"solver"``, ``"rounding"``, ...;
        ``"members"`` and ``"consensus"`` in an ensemble): the keys of ``timings_``.
    part : str
        Registered name of the part reporting.
    kind : str
        ``"open"`` and ``"close"`` (the stage, once each, sent by the pipeline);
        ``"start"`` (a part announces ``total`` steps, or a new phase), ``"step"``,
        ``"end"`` (a phase finished) and ``"message"`` (sent by parts).
    step, total : int or None
        Position within the stage, where known.
    message : str
        Human-readable detail (e.g. ``"objective 12.3"``).
    elapsed : float
        Seconds since the stage was opened.
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
        self._phase: tuple[int | None, int | None] = (None, None)  # last (step, total)

    @property
    def enabled(self) -> bool:
        return self._emit is not None

    def for_stage(self, stage: str, part: str) -> "Progress":
        """A reporter for one stage of the run, sharing this one's destination."""
        return Progress(self._emit, stage, part)

    def _send(self, kind, step=None, total=None, message=""):
        if self._emit is not None:
            self._emit(ProgressEvent(self.stage, self.part, kind, step, total, message,
                                     time.perf_counter() - self._t0))

    # -- the pipeline's side: one open and one close per stage ---------------------
    def open(self, total: int | None = None, message: str = "") -> None:
        """Open the stage (the pipeline calls this once, before the part works)."""
        self._t0 = time.perf_counter()
        self._send("open", 0, total, message)

    def close(self, message: str = "") -> float:
        """Close the stage with a summary (the pipeline calls this once).

        Returns the stage's seconds since :meth:`open`, the ``elapsed`` the close event
        carries: the pipeline records this number in ``timings_``, so a progress line and
        the timings read one clock (quiet or not).
        """
        elapsed = time.perf_counter() - self._t0
        if self._emit is not None:
            self._emit(ProgressEvent(self.stage, self.part, "close", None, None, message,
                                     elapsed))
        return elapsed

    # -- the part's side ------------------------------------------------------------
    def start(self, total: int | None = None, message: str = "") -> None:
        """Announce ``total`` steps of work (a new phase restarts the count)."""
        self._phase = (0, total)
        self._send("start", 0, total, message)

    def step(self, step: int, total: int | None = None, message: str = "") -> None:
        """Report that ``step`` of ``total`` steps are done."""
        self._phase = (step, total)
        self._send("step", step, total, message)

    def message(self, message: str) -> None:
        """A free-form note (shown beside the bar)."""
        self._send("message", message=message)

    def end(self, message: str = "") -> None:
        """A phase of the part's work finished (the stage stays open).

        A phase that stopped short of its total (early convergence) is first closed at
        the step it reached, sent as a ``"step"`` whose ``total`` is that step.
        """
        step, total = self._phase
        if step and total is not None and step < total:
            self._send("step", step, step, "")
        self._phase = (None, None)
        self._send("end", message=message)

    def iterate(self, iterable: Iterable[T], total: int | None = None) -> Iterator[T]:
        """Yield from ``iterable`` reporting a step for each item."""
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.start(total)
        for i, item in enumerate(iterable):
            yield item
            self.step(i + 1, total)
