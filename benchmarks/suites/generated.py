"""The generated battery of issue 44 (:mod:`benchmarks.generated_sets`): 225 seeded sets
in ten families, split once into a tuning and a check half — no rule of ``auto`` may be
tuned on the check half. ``auto`` without ``k`` (``n_clusters=None``) on every set, and
with the true ``k`` on the clustered ones for comparison; one worker per method, 120 s a
cell. Select a half with ``--datasets generated:check`` (or ``generated:tune``,
``generated:check:spirals``); ``python -m benchmarks generated --out DIR`` summarises
exact k, within ±1, nulls answered 1 with the warning and clustered sets answered 1, per
half and family."""

from benchmarks.generated_sets import battery, half_ids
from benchmarks.suite import Suite, preset

SUITE = Suite(
    title="Generated battery (issue 44): k estimation on a tuning and a check half",
    datasets=tuple(half_ids("all")),
    seeds=1,
    time_cap=120.0,
    isolate="method",
    methods=(
        preset("auto", label="auto-nok", params={"n_clusters": None}),
        preset("auto", label="auto-k",
               datasets=tuple(s.id for s in battery() if s.family != "null")),
    ),
)
