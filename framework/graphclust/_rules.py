"""Rule presets: presets whose concrete spec is decided from the data.

A plain preset is a fixed spec. A *rule preset* is a function from a
:class:`DataProfile` — a few cheap properties of the data (``n``, ``d``, ``k``,
sparsity, dtype, the spread of the column scales) — to a concrete pipeline spec. The
core knows no rule: bundles register them with ``registry.rules.add(name, rule, ...)``
from their ``graphclust_register_components`` hook, like any other preset, and the
core only knows that a preset name may stand for a rule over the profile.

The estimator profiles ``X`` at ``fit`` (after the input checks), asks the rule for a
spec, merges the user's overrides into it and runs it; ``resolved_spec_`` holds what
ran and ``profile_`` what decided it. ``graphclust fill NAME --dataset X`` prints the
same concrete spec without fitting.

A rule preset is best written as a :class:`RuleTable`: an ordered list of :class:`Rule`
values (a number, a one-line statement, ``applies`` returning the reason or ``None``,
``build`` returning the spec); the first rule that applies wins, so the order of the
list is the precedence, and the preset's description and summaries are generated from
the list (:meth:`RuleTable.describe`, :meth:`RuleTable.paragraph`). Diagnostics a rule
needs (statistics of the profile's ``sample``) are computed by the :class:`RuleContext`
the first time a rule asks, once per call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

__all__ = ["DataProfile", "Rule", "RuleContext", "RulePresetRecord", "RuleStep", "RuleTable",
           "profile_data", "profile_rows", "PROFILE_SAMPLE"]

#: At most this many rows (evenly spaced, so deterministic) enter the scale statistics.
PROFILE_SAMPLE = 20_000
#: At most this many rows (evenly spaced) are kept in the profile's ``sample`` for a
#: rule's own diagnostics, and at most :data:`DIAGNOSTIC_VALUES` values in all.
DIAGNOSTIC_ROWS = 4000
DIAGNOSTIC_VALUES = 4_000_000


@attrs.frozen
class DataProfile:
    """What a rule preset may look at: the size and a few cheap statistics of ``X``.

    Attributes
    ----------
    n, d : int
        Samples, features.
    k : int or None
        Clusters asked for; ``None`` when the fit estimates them (a rule then sizes
        what depends on ``k`` from ``k_max``, :doc:`/choosing-k`).
    sparse : bool
        ``X`` was a ``scipy.sparse`` matrix (the container: no rule of ``auto`` decides
        on it; the same data dense or sparse get the same spec).
    zero_fraction : float
        Fraction of zero entries, on the sampled rows (all rows up to
        :data:`PROFILE_SAMPLE`), whatever the container: what the rules read to tell
        sparse rows (:doc:`/auto`), never ``sparse``.
    dtype : str
        The float type the data are computed in (``"float32"`` or ``"float64"``).
    range_spread : float
        Ratio of the largest to the smallest range (max - min) among the non-constant
        columns, after trimming the top and bottom 10 % of the ranges (1 when there
        are fewer than two non-constant columns). Large when the columns are measured
        in different units.
    std_spread : float
        The same trimmed ratio for the column standard deviations.
    constant_fraction : float
        Fraction of columns with a single value.
    nonnegative : bool
        No negative entry.
    offset : float
        Median over non-constant columns of ``|mean| / std``: how far the data sit from
        the origin in units of their own spread.
    chunked : bool
        ``X`` is a Dask collection: the spec must run chunk-wise (the statistics above
        and the ``sample`` come from the same rows as in memory, gathered by global row
        index: :func:`profile_rows`).
    k_max : int
        The largest ``k`` searched when ``k`` is ``None``.
    sample : ndarray or None
        A read-only float64 copy of at most :data:`DIAGNOSTIC_ROWS` evenly spaced rows of
        dense ``X`` (fewer when ``d`` is large: at most :data:`DIAGNOSTIC_VALUES` values),
        unscaled, for cheap diagnostics a rule computes itself; None for sparse input or
        a profile built by hand. Not part of equality, ``repr`` or :meth:`as_dict`.
    """

    n: int
    d: int
    k: int | None
    sparse: bool = False
    zero_fraction: float = 0.0
    dtype: str = "float64"
    range_spread: float = 1.0
    std_spread: float = 1.0
    constant_fraction: float = 0.0
    nonnegative: bool = False
    offset: float = 0.0
    chunked: bool = False
    k_max: int = 20
    sample: Any = attrs.field(default=None, eq=False, repr=False)

    @property
    def exact_work(self) -> float:
        """``n² · d``: the multiply-adds of an exact kNN search over the data."""
        return float(self.n) * float(self.n) * float(self.d)

    def as_dict(self) -> dict[str, Any]:
        """The profile as plain Python values (for JSON, TOML comments and reports)."""
        out = attrs.asdict(self, filter=lambda a, _: a.name != "sample")
        out["exact_work"] = self.exact_work
        return out


def _trimmed_ratio(values: np.ndarray) -> float:
    """Largest over smallest positive value after trimming 10 % at each end."""
    v = np.sort(values[values > 0])
    if v.size < 2:
        return 1.0
    cut = int(0.1 * v.size)
    v = v[cut:v.size - cut] if v.size - 2 * cut >= 2 else v
    with np.errstate(over="ignore"):  # a subnormal smallest range: the spread is inf
        return float(v[-1] / v[0])


def _sample_rows(n: int, limit: int) -> np.ndarray | slice:
    if n <= limit:
        return slice(None)
    return np.linspace(0, n - 1, limit).round().astype(np.intp)


def _diagnostic_limit(d: int) -> int:
    return int(max(2, min(DIAGNOSTIC_ROWS, DIAGNOSTIC_VALUES // max(1, d))))


def profile_rows(n: int, d: int, sample: int = PROFILE_SAMPLE) -> np.ndarray | None:
    """The global row indices :func:`profile_data` reads of dense ``(n, d)`` data (sorted;
    ``None``: every row). A chunked input gathers exactly these rows and profiles them
    as :class:`GatheredRows`, so its profile equals the in-memory one."""
    parts = [_sample_rows(n, sample), _sample_rows(n, _diagnostic_limit(d))]
    if any(isinstance(r, slice) for r in parts):
        return None
    return np.union1d(*parts)


@attrs.frozen
class GatheredRows:
    """The rows ``index`` (sorted, from :func:`profile_rows`) of an ``(n, d)`` array,
    gathered as ``rows``: what :func:`profile_data` reads of a chunked input."""

    shape: tuple[int, int]
    index: np.ndarray
    rows: np.ndarray

    @property
    def dtype(self):
        return self.rows.dtype

    def take(self, rows: np.ndarray | slice) -> np.ndarray:
        if isinstance(rows, slice):
            return self.rows
        return self.rows[np.searchsorted(self.index, rows)]


def _take_rows(X, rows: np.ndarray | slice) -> np.ndarray:
    return X.take(rows) if isinstance(X, GatheredRows) else np.asarray(X)[rows]


#: Rows of the float64 blocks :func:`_column_mean_std` converts at a time.
MOMENT_BLOCK_ROWS = 2048


def _column_mean_std(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and (population) standard deviations of dense ``S`` in float64,
    converted ``MOMENT_BLOCK_ROWS`` rows at a time instead of as a whole float64 copy
    and a second float64 temporary (the profile's 20 000 sampled rows of MNIST's 784
    pixels: 250 MB, the peak of the whole fit).

    Each column is summed row after row, as NumPy sums a C-ordered array down its first
    axis: a block's sum continues the running one (``np.add.reduce`` of the running sum
    stacked on the block), so the values are those of ``S.astype(float64).mean(axis=0)``
    and ``.std(axis=0)`` (tests/core/test_core_one_pass.py)."""
    m = S.shape[0]

    def column_sums(rows):
        total = None
        for start in range(0, m, MOMENT_BLOCK_ROWS):
            blk = rows(start, min(m, start + MOMENT_BLOCK_ROWS))
            total = (np.add.reduce(blk, axis=0) if total is None
                     else np.add.reduce(np.vstack([total[None, :], blk]), axis=0))
        return total

    mean = column_sums(lambda a, b: S[a:b].astype(np.float64)) / m

    def centred_squares(a, b):
        blk = S[a:b].astype(np.float64) - mean
        return np.multiply(blk, blk, out=blk)

    return mean, np.sqrt(column_sums(centred_squares) / m)


def profile_data(X, n_clusters: int | None, *, sample: int = PROFILE_SAMPLE,
                 k_max: int = 20) -> DataProfile:
    """The :class:`DataProfile` of ``X`` for ``n_clusters`` clusters.

    Cost: one pass over at most ``sample`` evenly spaced rows (all rows when
    ``n <= sample``), so profiling a million points costs as much as profiling
    twenty thousand. The result does not depend on any seed.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d), finite, or GatheredRows
    n_clusters : int or None
        ``None``: to be estimated within ``[1, k_max]``.
    sample : int, default=PROFILE_SAMPLE
    k_max : int, default=20

    Returns
    -------
    DataProfile
    """
    n, d = X.shape
    rows = _sample_rows(n, sample)
    if sp.issparse(X):
        S = sp.csr_array(X)[rows] if not isinstance(rows, slice) else sp.csr_array(X)
        m = S.shape[0]
        # on the sampled rows, as for dense X: the same data, the same profile (an
        # explicitly stored zero counts as a zero)
        zero_fraction = 1.0 - float(np.count_nonzero(S.data)) / max(1.0, float(m) * d)
        mean = np.asarray(S.sum(axis=0), dtype=np.float64).ravel() / m
        sq = np.asarray(S.multiply(S).sum(axis=0), dtype=np.float64).ravel() / m
        std = np.sqrt(np.maximum(sq - mean * mean, 0.0))
        col_nnz = np.bincount(S.indices, minlength=d)
        dense_max = np.asarray(S.max(axis=0).toarray(), dtype=np.float64).ravel()
        dense_min = np.asarray(S.min(axis=0).toarray(), dtype=np.float64).ravel()
        full = col_nnz == m  # a column with no stored zero does not reach 0 implicitly
        hi = np.where(full, dense_max, np.maximum(dense_max, 0.0))
        lo = np.where(full, dense_min, np.minimum(dense_min, 0.0))
        dtype = X.dtype
    else:
        S = _take_rows(X, rows)
        m = S.shape[0]
        zero_fraction = float(np.count_nonzero(S == 0)) / max(1, S.size)
        mean, std = _column_mean_std(S)
        hi = S.max(axis=0).astype(np.float64)
        lo = S.min(axis=0).astype(np.float64)
        dtype = X.dtype if isinstance(X, GatheredRows) else np.asarray(X).dtype
    diag = None if sp.issparse(X) else _diagnostic_sample(X, n, d)
    spread = hi - lo
    varying = spread > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.abs(mean[varying]) / np.where(std[varying] > 0, std[varying], np.inf)
    from graphclust.numerics import float_dtype

    return DataProfile(
        n=int(n), d=int(d), k=None if n_clusters is None else int(n_clusters),
        k_max=int(k_max), sparse=bool(sp.issparse(X)),
        zero_fraction=float(zero_fraction), dtype=np.dtype(float_dtype(dtype)).name,
        range_spread=_trimmed_ratio(spread), std_spread=_trimmed_ratio(std),
        constant_fraction=float(1.0 - varying.mean()) if d else 0.0,
        nonnegative=bool(lo.min() >= 0) if d else True,
        offset=float(np.median(off)) if off.size else 0.0, sample=diag,
    )


def _diagnostic_sample(X, n: int, d: int) -> np.ndarray:
    """The profile's ``sample``: evenly spaced rows, float64, read-only."""
    out = np.array(_take_rows(X, _sample_rows(n, _diagnostic_limit(d))), dtype=np.float64)
    out.flags.writeable = False
    return out


@attrs.frozen
class RulePresetRecord:
    """A registered rule preset.

    Attributes
    ----------
    name : str
    rule : callable
        ``rule(profile) -> dict``: a concrete pipeline (or ensemble) spec for a
        :class:`DataProfile`. It must be deterministic and may add a ``summary`` string
        saying why it chose what it chose.
    summary : str
        One line for preset listings.
    description : str
        The rules in words (``graphclust describe NAME``).
    provider : Provider
    paper : str
    """

    name: str
    rule: Callable[[DataProfile], dict]
    summary: str
    description: str
    provider: Any
    paper: str = ""

    def resolve(self, profile: DataProfile) -> dict:
        """The concrete spec for ``profile`` (a fresh dict)."""
        import copy

        spec = self.rule(profile)
        if not isinstance(spec, dict):
            from graphclust._errors import Problem, SpecError

            raise SpecError(Problem("", f"rule preset {self.name!r} returned "
                                    f"{type(spec).__name__}, not a spec dict"))
        return copy.deepcopy(spec)


@attrs.frozen
class Rule:
    """One rule of a :class:`RuleTable`.

    Attributes
    ----------
    number : int
        The rule's number (its name in docs and summaries; not its precedence, which is
        its place in the table).
    statement : str
        One line: when it applies and what it builds.
    applies : callable
        ``applies(profile, context) -> str | None``: why the rule applies to
        ``profile`` (a non-empty reason, shown in the fitted ``summary``), or ``None``.
        It may read diagnostics from ``context`` (computed when first asked) and leave a
        note there when it was consulted and did not apply (:meth:`RuleContext.note`).
    build : callable
        ``build(profile, context) -> dict``: the spec the rule builds, called only when
        it applies.
    details : str
        Optional longer words for :meth:`RuleTable.describe` (the parameters it sets).
    """

    number: int = attrs.field(validator=attrs.validators.instance_of(int))
    statement: str = attrs.field(validator=attrs.validators.instance_of(str))
    applies: Callable[[DataProfile, RuleContext], str | None] = attrs.field(
        validator=attrs.validators.is_callable())
    build: Callable[[DataProfile, RuleContext], dict] = attrs.field(
        validator=attrs.validators.is_callable())
    details: str = ""

    def __attrs_post_init__(self):
        if "\n" in self.statement or not self.statement.strip():
            raise ValueError(f"rule {self.number}: the statement must be one non-empty line")


@attrs.frozen
class RuleStep:
    """A part of the spec a :class:`RuleTable` builds for every profile, whichever rule
    wins (the scaling, say).

    Attributes
    ----------
    name : str
        Its name; :class:`RuleContext` holds its result under it (rules may read it).
    statement : str
        One line, as a rule's.
    build : callable
        ``build(profile, context) -> (dict, str)``: the spec keys it sets and why. A key
        the winning rule builds too is the rule's: the step's value and reason are then
        left out.
    """

    name: str
    statement: str
    build: Callable[[DataProfile, RuleContext], tuple[dict, str]] = attrs.field(
        validator=attrs.validators.is_callable())


class RuleContext:
    """What the rules of one :class:`RuleTable` call share: diagnostics of the profile,
    each computed the first time a rule asks for it (``context[name]``) and then kept,
    so a diagnostic no rule consulted costs nothing and none is computed twice.

    Parameters
    ----------
    profile : DataProfile
    providers : mapping of str to callable
        ``provider(profile, context) -> value`` for every diagnostic (and step) name; a
        provider may ask the context for another one.
    """

    def __init__(self, profile: DataProfile,
                 providers: Mapping[str, Callable[[DataProfile, RuleContext], Any]]):
        self.profile = profile
        self._providers = dict(providers)
        self._values: dict[str, Any] = {}
        self._asked: list[str] = []
        self.notes: list[str] = []

    def __getitem__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        if name not in self._providers:
            raise KeyError(f"no diagnostic {name!r} in this rule table; it has "
                           f"{sorted(self._providers)}")
        if name in self._asked:
            raise RecursionError(f"diagnostic {name!r} asks for itself: "
                                 f"{' -> '.join([*self._asked, name])}")
        self._asked.append(name)
        try:
            value = self._providers[name](self.profile, self)
        finally:
            self._asked.pop()
        self._values[name] = value
        return value

    @property
    def computed(self) -> tuple[str, ...]:
        """The names computed so far, in the order they were finished."""
        return tuple(self._values)

    def note(self, text: str) -> None:
        """Record why a consulted rule did not apply (what its diagnostics said); the
        notes lead the summary of the rule that wins."""
        if text:
            self.notes.append(str(text))


def _unique_numbers(instance, attribute, rules) -> None:
    numbers = [r.number for r in rules]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"rule table {instance.name!r}: rule numbers repeat: {numbers}")
    if not rules:
        raise ValueError(f"rule table {instance.name!r} has no rule")


@attrs.frozen(eq=False)  # compared by identity: its rules and diagnostics are functions
class RuleTable:
    """A rule preset as an ordered table: the first :class:`Rule` that applies builds
    the spec, so the order of ``rules`` is the precedence.

    Calling the table on a :class:`DataProfile` returns that rule's spec, after the
    keys of every :class:`RuleStep` (a key the rule builds too is the rule's), with a
    ``summary``: ``"<name>: [notes; ]rule <number>: <reason>[; <step reasons>]"``. It
    registers as any rule preset: ``registry.rules.add(name, table,
    summary=table.paragraph(), description=table.describe())``.

    Attributes
    ----------
    name : str
    rules : tuple of Rule
        In precedence order; the last should apply to every profile the others leave.
    steps : tuple of RuleStep
        Applied to every profile, in order.
    diagnostics : mapping of str to callable
        ``provider(profile, context) -> value``: what rules may ask their
        :class:`RuleContext` for (computed lazily, once per call).
    second_opinion : Rule or None
        A rule whose spec is fitted when the spec the table built estimates ``k`` and
        finds no cluster structure (:mod:`graphclust._ksecond`): when it applies to the
        profile, its spec (with the steps' keys and its own ``summary``) is the built
        spec's ``second_opinion`` key, unless its pipeline is the built one (the same
        estimate twice is not a second opinion). Its number must differ from the rules'.
    """

    name: str
    rules: tuple[Rule, ...] = attrs.field(converter=tuple, validator=_unique_numbers)
    steps: tuple[RuleStep, ...] = attrs.field(default=(), converter=tuple)
    diagnostics: Mapping[str, Callable] = attrs.field(factory=dict, converter=dict)
    second_opinion: Rule | None = attrs.field(default=None)

    @second_opinion.validator
    def _second_number(self, attribute, rule) -> None:
        if rule is not None and rule.number in self.numbers():
            raise ValueError(f"rule table {self.name!r}: the second opinion's number "
                             f"{rule.number} is a rule's")

    def context(self, profile: DataProfile) -> RuleContext:
        """A fresh :class:`RuleContext` for ``profile`` (diagnostics and steps)."""
        providers = dict(self.diagnostics)
        for step in self.steps:
            providers[step.name] = step.build
        return RuleContext(profile, providers)

    def decide(self, profile: DataProfile,
               context: RuleContext | None = None) -> tuple[Rule, str, RuleContext]:
        """The first rule that applies to ``profile``, its reason and the context."""
        ctx = self.context(profile) if context is None else context
        for rule in self.rules:
            reason = rule.applies(profile, ctx)
            if reason is not None:
                return rule, str(reason), ctx
        from graphclust._errors import Problem, SpecError

        raise SpecError(Problem("", f"rule preset {self.name!r}: none of rules "
                                f"{[r.number for r in self.rules]} applies to the profile "
                                f"{profile.as_dict()}"))

    def __call__(self, profile: DataProfile) -> dict:
        rule, reason, ctx = self.decide(profile)
        spec = rule.build(profile, ctx)
        keys: dict = {}
        reasons = []
        for step in self.steps:
            part, why = ctx[step.name]
            keys.update(part)
            if not set(part) & set(spec):
                reasons.append(why)
        words = "; ".join([*ctx.notes, f"rule {rule.number}: {reason}", *reasons])
        built = {"summary": f"{self.name}: {words}", **keys, **spec}
        second = self._second_opinion_spec(profile, ctx, keys)
        if second is not None and _pipeline_keys(second) != _pipeline_keys(built):
            built["second_opinion"] = second
        return built

    def _second_opinion_spec(self, profile: DataProfile, ctx: RuleContext,
                             keys: dict) -> dict | None:
        """The second opinion's spec for ``profile`` (the steps' ``keys`` under its own),
        or ``None`` when the table has none or it does not apply."""
        rule = self.second_opinion
        reason = None if rule is None else rule.applies(profile, ctx)
        if reason is None:
            return None
        spec = rule.build(profile, ctx)
        return {"summary": f"{self.name}: rule {rule.number}: {reason}", **keys, **spec}

    def numbers(self) -> list[int]:
        """The rule numbers in precedence order."""
        return [r.number for r in self.rules]

    def describe(self, header: str = "", footer: str = "") -> str:
        """The table in words: every rule's number, statement and details in precedence
        order, then the steps (``graphclust describe``)."""
        lines = [header.rstrip()] if header else []
        lines.append(f"The first rule that applies builds the spec (precedence order "
                     f"{', '.join(map(str, self.numbers()))}):")
        for rule in self.rules:
            lines.append(f"- rule {rule.number}: {rule.statement}")
            lines.extend(f"    {line}" if line else "" for line in rule.details.splitlines())
        if self.steps:
            lines.append("Every spec, whichever rule wins:")
            lines.extend(f"- {step.name}: {step.statement}" for step in self.steps)
        if self.second_opinion is not None:
            rule = self.second_opinion
            lines.append("When the spec's fit finds no cluster structure (k = 1), a second "
                         "opinion:")
            lines.append(f"- rule {rule.number}: {rule.statement}")
            lines.extend(f"    {line}" if line else "" for line in rule.details.splitlines())
        if footer:
            lines.append(footer.rstrip())
        return "\n".join(lines) + "\n"

    def paragraph(self) -> str:
        """The table as one paragraph: the rules' statements in precedence order and the
        steps (preset listings, a README row)."""
        rules = "; ".join(f"rule {r.number}, {r.statement}" for r in self.rules)
        text = f"the first rule that applies: {rules}"
        if self.steps:
            text += "; for every spec, " + "; ".join(f"{s.name}: {s.statement}"
                                                     for s in self.steps)
        if self.second_opinion is not None:
            rule = self.second_opinion
            text += (f"; when the spec's fit finds no cluster structure, a second opinion, "
                     f"rule {rule.number}, {rule.statement}")
        return text


def _pipeline_keys(spec: dict) -> dict:
    """What a spec fits: without its words (``summary``), its second opinion and who
    estimates ``k`` (``k_from``: a rule's spec is never redirected to ``auto``'s)."""
    return {key: value for key, value in spec.items()
            if key not in ("summary", "second_opinion", "k_from")}
