"""The built-in progress reporter: tqdm bars on a terminal, one line per stage in logs.

Registered by the plugin manager as the plugin ``stderr-progress`` (disable it with
``GRAPHCLUST_DISABLE_PLUGINS=stderr-progress``). It only ever sees events of verbose
runs: a quiet run sends none.

``GRAPHCLUST_PROGRESS`` chooses the display: ``bar`` (tqdm bars with rate and ETA),
``lines`` (one line per stage when it closes, for logs and CI) or ``auto`` (the
default: ``bar`` when stderr is a terminal, else ``lines``).
"""

from __future__ import annotations

import sys
from typing import TextIO

from graphclust import hookspecs
from graphclust.environ import read_env
from graphclust._progress import ProgressEvent

__all__ = ["StderrProgressReporter", "PROGRESS_ENV"]

PROGRESS_ENV = "GRAPHCLUST_PROGRESS"
_MODES = ("auto", "bar", "lines")


class StderrProgressReporter:
    """One tqdm bar per stage on a terminal; one summary line per stage otherwise.

    Parameters
    ----------
    stream : file-like, optional
        Where to write; default ``sys.stderr`` looked up at each event (so captured
        and redirected streams are honoured).
    mode : {"auto", "bar", "lines"}, optional
        Default from ``GRAPHCLUST_PROGRESS``, else ``"auto"``.
    """

    def __init__(self, stream: TextIO | None = None, mode: str | None = None):
        self.stream = stream
        self.mode = read_env(PROGRESS_ENV) if mode is None else mode
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        self._bars: dict[tuple[str, str], object] = {}
        self._notes: dict[tuple[str, str], str] = {}
        self._steps: dict[tuple[str, str], tuple[int | None, int | None]] = {}

    def _stream(self) -> TextIO:
        return self.stream or sys.stderr

    def _use_bars(self) -> bool:
        if self.mode != "auto":
            return self.mode == "bar"
        isatty = getattr(self._stream(), "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:  # a closed stream
            return False

    @hookspecs.hookimpl
    def graphclust_report_progress(self, event: ProgressEvent) -> None:
        key = (event.stage, event.part)
        if self._use_bars():
            self._bar_event(key, event)
        else:
            self._line_event(key, event)

    # -- logs: one line per stage ----------------------------------------------------
    def _line_event(self, key, event: ProgressEvent) -> None:
        if event.kind == "open":
            self._notes[key] = ""
            self._steps[key] = (None, None)
        elif event.kind in ("start", "step"):
            self._steps[key] = (event.step, event.total)
            if event.message:
                self._notes[key] = event.message
        elif event.kind in ("message", "end") and event.message:
            self._notes[key] = event.message
        elif event.kind == "close":
            note = event.message or self._notes.get(key, "")
            step, total = self._steps.pop(key, (None, None))
            self._notes.pop(key, None)
            done = ""
            if step and total:
                done = f" {step}/{total} steps,"
            elif step:
                done = f" {step} steps,"
            rate = ""
            if step and event.elapsed > 0:
                rate = f" {step / event.elapsed:.3g} steps/s,"
            text = f"[graphclust] {event.stage}:{event.part} done in {event.elapsed:.2f}s"
            extra = f"{done}{rate}".strip(" ,")
            if extra:
                text += f" ({extra})"
            if note:
                text += f" {note}"
            print(text, file=self._stream(), flush=True)

    # -- terminals: one tqdm bar per stage -------------------------------------------
    def _bar_event(self, key, event: ProgressEvent) -> None:
        from tqdm.auto import tqdm

        bar = self._bars.get(key)
        if event.kind == "open":
            if bar is not None:
                bar.close()
            self._bars[key] = tqdm(total=event.total, desc=f"{event.stage}:{event.part}",
                                   file=self._stream(), leave=True, dynamic_ncols=True,
                                   unit="step")
            return
        if bar is None:  # a part reporting outside an open stage: nothing to draw on
            return
        if event.kind == "start":
            bar.reset(total=event.total)
            if event.message:
                bar.set_postfix_str(event.message, refresh=False)
        elif event.kind == "step":
            if event.total is not None and event.total != bar.total:
                bar.total = event.total
            if event.step is not None and event.step > bar.n:
                if event.message:
                    bar.set_postfix_str(event.message, refresh=False)
                bar.update(event.step - bar.n)
        elif event.kind in ("message", "end"):
            if event.message:
                bar.set_postfix_str(event.message)
        elif event.kind == "close":
            if event.message:
                bar.set_postfix_str(event.message, refresh=False)
            bar.close()
            del self._bars[key]
