"""The part interfaces and the :class:`Context` a run hands them.

A part is a small class with one work method. Its parameters are declared with
:func:`param` and become keyword-only constructor arguments, stored as given
(scikit-learn style: parts clone, ``get_params``/``set_params`` work, and a whole
pipeline grid-searches as ``anchors__n_anchors``). Declare a part with the
:func:`part` decorator::

    @graphclust.part
    class MySolver(graphclust.Solver):
        '''One-line summary shown by ``graphclust plugins``.'''

        name = "my-solver"
        accepts = frozenset({graphclust.GraphKind.ANCHOR})
        provides = frozenset({graphclust.SolutionField.SOFT})

        lam: float = graphclust.param(1.0, doc="Trade-off λ (Eq. 7).", check=real(0, low_open=True))

        def solve(self, graph, X, n_clusters, ctx):
            ...

Validation of parameter values runs in the composer and at ``fit``
(:meth:`Part.check_params`), never in ``__init__``.
"""

from __future__ import annotations

import inspect
import zlib
from typing import Any, ClassVar

import attrs
import numpy as np
from sklearn.base import BaseEstimator

from graphclust._checks import Check, check_fields
from graphclust._contracts import GraphKind, RenamedDeclaration, SolutionField, \
    normalise_declarations
from graphclust._graphs import AffinityGraph, Anchors, AnchorGraph
from graphclust._kselection import eigengap_selection
from graphclust._membership import Memberships
from graphclust._progress import Progress
from graphclust._solution import Solution

__all__ = [
    "param",
    "part",
    "Part",
    "Context",
    "AnchorSelector",
    "GraphBuilder",
    "Adapter",
    "Adapted",
    "Solver",
    "Rounding",
    "Metric",
    "Consensus",
    "PART_KINDS",
]

_MISSING = object()


def param(default: Any = _MISSING, *, doc: str, check: Check | None = None) -> Any:
    """Declare a part parameter.

    Parameters
    ----------
    default : object
        Default value (use ``None`` rather than a mutable default).
    doc : str
        One sentence shown by ``graphclust describe`` and the spec reference; name
        the paper's symbol and equation where there is one.
    check : Check, optional
        Validation run by the composer, e.g. ``integer(1)`` or ``real(0, low_open=True)``.
    """
    meta = {"doc": doc, "check": check}
    if default is _MISSING:
        return attrs.field(kw_only=True, metadata=meta)
    return attrs.field(default=default, kw_only=True, metadata=meta)


def part(cls: type) -> type:
    """Class decorator turning a :class:`Part` subclass with :func:`param` fields into
    a scikit-learn-style component (generated ``__init__``, no validation in it)."""
    return attrs.define(cls, slots=False, eq=False, repr=False, order=False, hash=False,
                        init=True, on_setattr=attrs.setters.NO_OP)


class Part(BaseEstimator):
    """Base of every part: parameters as constructor arguments, one work method.

    Attributes
    ----------
    name : str
        The registered name (lower-case, dashes), unique per kind.
    kind : str
        One of ``"anchors"``, ``"graph"``, ``"adapter"``, ``"solver"``, ``"rounding"``,
        ``"metric"``, ``"consensus"`` (the keys of :data:`PART_KINDS`).
    chunkwise : bool
        Whether the part runs on row chunks it never sees together (the Dask execution,
        :doc:`/dask`); what that requires depends on the kind (the chunk protocol,
        :mod:`graphclust.chunks`). Default ``False``: a spec holding the part is refused
        for chunked input before anything runs.
    chunk_hooks : tuple of str
        Set by the interface, not by parts: the methods of the chunk protocol a
        ``chunkwise`` part of this kind must implement (empty when its work method runs
        on a row sample unchanged).
    optional_chunk_hooks : tuple of tuple of str
        Set by the interface: groups of optional chunk-protocol methods; a part
        implements every method of a group or none.
    chunk_needs : tuple of str
        Set by the interface: methods that are not chunk-only (they also serve
        ``predict``) but that a ``chunkwise`` part of this kind must implement.
    accepts_sparse : bool
        Whether the part's work methods that receive ``X`` (``select``, ``build``,
        ``transform``, ``adapt``, ``solve``) take a ``scipy.sparse`` CSR ``X`` as it is
        (or ignore ``X``). Default ``False``: when a spec holds such a part, the executor
        densifies sparse input before any work, within
        :data:`graphclust.numerics.DENSIFY_LIMIT_BYTES` and with a
        :class:`~graphclust.DensifyWarning`, and refuses above the limit.
    estimates_k : str or None
        The method by which the part estimates the number of clusters when none is given
        (``"eigengap"``, ``"density-tree"``; :doc:`/choosing-k`), through the
        ``estimate_k`` hook of its interface; ``None``: it cannot. Graph builders and
        consensus parts inherit ``"eigengap"`` from their interface.
    needs_features : bool
        Whether the part reads the rows of ``X`` (not just its shape). A fit on a
        precomputed graph (``graph="precomputed"``, :doc:`/graphs`) has no ``X`` and refuses,
        before any work, every part that declares it. Default ``True`` (a part whose work
        method receives ``X`` is assumed to read it); the interfaces whose work methods
        never receive ``X`` (rounding, metric, consensus) set ``False``, and so does the
        :class:`Solver` interface, whose ``needs_features`` has always been an explicit
        declaration of every solver.
    """

    name: ClassVar[str] = ""
    estimates_k: ClassVar[str | None] = None
    kind: ClassVar[str] = ""
    chunkwise: ClassVar[bool] = False
    accepts_sparse: ClassVar[bool] = False
    needs_features: ClassVar[bool] = True
    chunk_hooks: ClassVar[tuple[str, ...]] = ()
    optional_chunk_hooks: ClassVar[tuple[tuple[str, ...], ...]] = ()
    chunk_needs: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # plain strings declared by a part become GraphKind / SolutionField values; a
        # solver's old ``produces`` is taken as ``provides`` (DeprecationWarning)
        normalise_declarations(cls, cls.kind)

    @classmethod
    def summary(cls) -> str:
        """First line of the class docstring."""
        doc = inspect.getdoc(cls) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @classmethod
    def parameters(cls) -> list[attrs.Attribute]:
        """The declared parameters (attrs fields) in order."""
        return list(attrs.fields(cls)) if attrs.has(cls) else []

    def check_params(self) -> list[tuple[str, str]]:
        """Return ``(parameter, message)`` for every invalid parameter value."""
        out = check_fields(self)
        out.extend(self._check_extra())
        return out

    def _check_extra(self) -> list[tuple[str, str]]:
        """Hook for cross-parameter checks; return ``(parameter, message)`` pairs."""
        return []

    @classmethod
    def implements(cls, method: str) -> bool:
        """Whether the class implements ``method`` of its part interface: a callable
        defined by the class (or a base below the interface), not the interface's default.

        This is how the chunked execution and the contract kit decide which hooks of the
        chunk protocol a part has (never ``hasattr`` on an instance).
        """
        interface = next((b for b in cls.__mro__ if b in PART_KINDS.values()), Part)
        default = getattr(interface, method, None)
        if default is None:
            raise AttributeError(f"{interface.__name__} declares no method {method!r}")
        own = inspect.getattr_static(cls, method, None)
        return own is not inspect.getattr_static(interface, method) and callable(own)

    @classmethod
    def missing_chunk_hooks(cls) -> list[str]:
        """The chunk-protocol methods a ``chunkwise`` part of this kind lacks: required
        ones (``chunk_hooks``, ``chunk_needs``) it does not implement, and the rest of an
        optional group it implements only in part. Empty when it has all it needs."""
        missing = [h for h in (*cls.chunk_hooks, *cls.chunk_needs) if not cls.implements(h)]
        for group in cls.optional_chunk_hooks:
            have = [h for h in group if cls.implements(h)]
            if have:
                missing.extend(h for h in group if h not in have)
        return missing

    @classmethod
    def implemented_chunk_hooks(cls) -> list[str]:
        """The chunk-only methods (``chunk_hooks`` and ``optional_chunk_hooks``) the class
        implements."""
        hooks = [*cls.chunk_hooks, *(h for g in cls.optional_chunk_hooks for h in g)]
        return [h for h in hooks if cls.implements(h)]


@attrs.define
class Context:
    """What a run hands every part besides its inputs.

    Attributes
    ----------
    seed : int
        The run's seed; parts derive their own streams with :meth:`rng` / :meth:`seed_for`
        so that changing one stage does not reshuffle another.
    progress : Progress
        Progress reporter (a no-op unless the run is verbose).
    n_jobs : int or None
        Parallelism hint for joblib-level work.
    """

    seed: int = 0
    progress: Progress = attrs.field(factory=Progress)
    n_jobs: int | None = None

    def seed_for(self, key: str) -> int:
        """A 31-bit integer seed derived from the run seed and ``key``."""
        ss = np.random.SeedSequence([int(self.seed) & 0xFFFFFFFF, zlib.crc32(key.encode())])
        return int(ss.generate_state(1)[0] & 0x7FFFFFFF)

    def rng(self, key: str) -> np.random.Generator:
        """A NumPy generator derived from the run seed and ``key``."""
        return np.random.default_rng(self.seed_for(key))

    def child(self, key: str) -> "Context":
        """A context for a nested pipeline (its own seed stream, same reporter)."""
        return Context(self.seed_for(key), self.progress, self.n_jobs)


class AnchorSelector(Part):
    """Chooses ``m`` anchor points from the data (global-small work).

    Work method: :meth:`select`. Implementations clamp ``m`` to ``n`` with a warning
    (see :func:`graphclust.clamp_anchors`). A ``chunkwise`` selector is one that may run
    on a uniform row sample (it then sees only the sample; ``Anchors.assignment`` refers
    to the sample's rows and is dropped by the chunked execution). It needs no chunk
    hook; :meth:`for_rows` is optional.
    """

    kind: ClassVar[str] = "anchors"
    optional_chunk_hooks: ClassVar[tuple[tuple[str, ...], ...]] = (("for_rows",),
                                                                    ("sample_rows",))

    def select(self, X: np.ndarray, ctx: Context) -> Anchors:  # pragma: no cover - interface
        raise NotImplementedError

    def for_rows(self, n: int) -> AnchorSelector:
        """The selector to run on a sample of a run's ``n`` rows (chunk hook, optional).

        The chunked execution runs :meth:`select` on a uniform row sample, so a selector
        whose settings depend on ``n`` (``capped``: ``m <= max_fraction·n``) would see the
        sample's size instead. Implement this to fix them from all ``n`` rows first:
        return a copy (never modify ``self``) whose :meth:`select` on the sample gives
        the anchor count :meth:`select` gives on all rows in memory.

        Parameters
        ----------
        n : int
            Rows of the whole run.

        Returns
        -------
        AnchorSelector
            The default returns ``self`` unchanged (settings independent of ``n``).
        """
        return self

    def sample_rows(self, n: int, ctx: Context) -> np.ndarray | None:
        """The rows of a run's ``n`` rows that :meth:`select` reads (chunk hook, optional).

        A selector whose anchors are rows it draws itself (``sample``) implements this so
        that the chunked execution gathers exactly those rows, instead of its own uniform
        sample, and the anchors are the same in memory and on any chunking. The contract:
        :meth:`select` on ``X[sample_rows(n, ctx)]`` gives the anchors :meth:`select`
        gives on all ``n`` rows of ``X`` (with a context of the same seed).

        Parameters
        ----------
        n : int
            Rows of the whole run.
        ctx : Context
            The anchors stage's context (its seed draws the rows).

        Returns
        -------
        ndarray of int64 or None
            Sorted distinct global row indices, or ``None`` for all rows.
        """
        raise NotImplementedError(f"anchor selector {self.name!r} draws no rows of its own")

    @classmethod
    def depends_on_rows(cls) -> bool:
        """Whether the class implements :meth:`for_rows`."""
        return cls.implements("for_rows")

    @classmethod
    def draws_rows(cls) -> bool:
        """Whether the class implements :meth:`sample_rows`."""
        return cls.implements("sample_rows")


def _anchor_sums(block):
    from graphclust.numerics.eigengap import anchor_block_sums

    return anchor_block_sums(block.Z)


def _on_block_rows(block, name: str, *args):
    """``graphclust.numerics.eigengap.<name>(block.Z, *args)`` (a block's share of the
    eigengap's sums, shipped by name)."""
    from graphclust.numerics import eigengap

    return getattr(eigengap, name)(block.Z, *args)


#: A graph builder's optional one-search hooks (all four or none).
_SEARCH_HOOKS = ("prepare_search", "search_block", "finish_search", "rows_from_search")


class GraphBuilder(Part):
    """Builds a graph from the data (and anchors, when ``needs_anchors``).

    Attributes
    ----------
    produces : GraphKind
        The kind of graph :meth:`build` returns (a plain string ``"affinity"`` or
        ``"anchor"`` is accepted and coerced when the class is defined).
    needs_anchors : bool
        Whether an anchor selector must run before it.
    """

    kind: ClassVar[str] = "graph"
    produces: ClassVar[GraphKind] = GraphKind.AFFINITY
    needs_anchors: ClassVar[bool] = False
    chunk_hooks: ClassVar[tuple[str, ...]] = ("prepare_chunked",)
    optional_chunk_hooks: ClassVar[tuple[tuple[str, ...], ...]] = (_SEARCH_HOOKS,)
    chunk_needs: ClassVar[tuple[str, ...]] = ("transform",)

    def build(self, X: np.ndarray, anchors: Anchors | None,
              ctx: Context) -> AffinityGraph | AnchorGraph:  # pragma: no cover
        raise NotImplementedError

    def transform(self, X_new: np.ndarray, graph: AnchorGraph):
        """Rows of ``Z`` for new points against the fitted anchors (anchor builders only)."""
        raise NotImplementedError(f"graph builder {self.name!r} cannot place new points")

    #: every graph the core knows has a normalised spectrum (:doc:`/choosing-k`)
    estimates_k: ClassVar[str | None] = "eigengap"

    def estimate_k(self, graph: AffinityGraph | AnchorGraph, k_min: int, k_max: int,
                   ctx: Context):
        """The number of clusters of ``graph`` (k hook; used when no ``n_clusters`` is
        given and this is the pipeline's latest part declaring ``estimates_k``).

        The interface's default is the eigengap of the normalised graph spectrum
        (von Luxburg 2007, §8.3; :mod:`graphclust.numerics.eigengap`): through the
        ``m x m`` problem for an anchor graph, ``k_max + 1`` Lanczos eigenvalues for an
        affinity graph. A builder overriding it returns a
        :class:`graphclust.KSelection` with ``k_min <= k <= k_max``; one that cannot
        estimate sets ``estimates_k = None``.
        """
        from graphclust.numerics.eigengap import (affinity_spectrum_without_tiny_groups,
                                                  anchor_spectrum_without_tiny_groups)

        if isinstance(graph, AnchorGraph):
            mu, rows, dropped = anchor_spectrum_without_tiny_groups(
                lambda fn, *args: fn(graph.Z, *args), graph.n, k_max + 1)
        else:
            mu, rows, dropped = affinity_spectrum_without_tiny_groups(
                graph.adjacency, k_max + 1, ctx.rng("estimate_k"))
        return eigengap_selection(mu, k_min, k_max, f"graph {self.name!r}", rows, dropped,
                                  graph.n)

    def estimate_k_chunked(self, template: AnchorGraph, chunks, k_min: int, k_max: int,
                           ctx: Context):
        """:meth:`estimate_k` in the chunked execution (k hook, anchor graphs):
        ``chunks`` is a :class:`graphclust.chunks.RowChunks` whose blocks hold rows of
        ``X`` and ``Z``. The default sums each block's ``(Z_bᵀ D_b⁻¹ Z_b, Z_bᵀ 1)``
        (``m``-sized) and solves the ``m x m`` eigenproblem here: the in-memory value
        up to the order of the sums."""
        from graphclust.numerics.eigengap import anchor_spectrum_without_tiny_groups

        mu, rows, dropped = anchor_spectrum_without_tiny_groups(
            lambda fn, *args: chunks.sum(_on_block_rows, fn.__name__, *args), chunks.n,
            k_max + 1)
        return eigengap_selection(mu, k_min, k_max, f"graph {self.name!r}", rows, dropped,
                                  chunks.n)

    def prepare_chunked(self, anchors: Anchors, chunks, ctx: Context) -> AnchorGraph:
        """The fitted graph without its rows, for the chunked execution (chunk hook,
        required with ``chunkwise``; anchor graphs only).

        Parameters
        ----------
        anchors : Anchors
            The run's anchors (selected on a row sample).
        chunks : graphclust.chunks.RowChunks
            The rows of ``X``; global state is a sum over them (``chunks.sum``).
        ctx : Context

        Returns
        -------
        AnchorGraph
            Zero rows, carrying ``anchors`` and the builder's fitted state (a bandwidth);
            :meth:`transform` then gives the rows of every block from it, exactly the
            rows :meth:`build` would give them.
        """
        raise NotImplementedError(f"graph builder {self.name!r} does not run chunk-wise")

    def prepare_search(self, anchors: Anchors, ctx: Context) -> AnchorGraph:
        """First of the four one-search hooks (optional, all four or none): the
        zero-row graph of :meth:`prepare_chunked` without the global scalars that come
        from the same neighbour search as the rows (``knr-bipartite``'s σ).

        A builder implementing the group has each chunk searched once in the chunked
        execution: :meth:`prepare_search`, :meth:`search_block` per chunk (kept where the
        chunk lives), :meth:`finish_search` over the kept searches, then
        :meth:`rows_from_search` per chunk. :meth:`prepare_chunked` stays required (it
        is the form the contract kit compares with :meth:`build`), and the rows must be
        those :meth:`prepare_chunked` and :meth:`transform` give.

        Returns
        -------
        AnchorGraph
            Zero rows, the anchors and the state without the searched scalars.
        """
        raise NotImplementedError(f"graph builder {self.name!r} has no one-search chunked "
                                  "form (prepare_search)")

    def search_block(self, X: np.ndarray, template: AnchorGraph) -> Any:
        """One chunk's neighbour search (one-search hook): what :meth:`transform` would
        compute of the rows ``X`` before its global scalars apply; any picklable value
        (it stays where the chunk lives)."""
        raise NotImplementedError(f"graph builder {self.name!r} has no one-search chunked "
                                  "form (search_block)")

    def finish_search(self, template: AnchorGraph, chunks) -> AnchorGraph:
        """The fitted zero-row graph from :meth:`prepare_search`'s ``template`` and sums
        over ``chunks`` (one-search hook), a :class:`graphclust.chunks.RowChunks` whose
        ``block.Z`` is the block's :meth:`search_block` result."""
        raise NotImplementedError(f"graph builder {self.name!r} has no one-search chunked "
                                  "form (finish_search)")

    def rows_from_search(self, found: Any, template: AnchorGraph):
        """A chunk's rows of ``Z`` from its :meth:`search_block` result ``found`` and the
        fitted ``template`` of :meth:`finish_search` (one-search hook): the rows
        :meth:`transform` gives the chunk."""
        raise NotImplementedError(f"graph builder {self.name!r} has no one-search chunked "
                                  "form (rows_from_search)")

    @classmethod
    def can_transform(cls) -> bool:
        """Whether the class implements :meth:`transform`."""
        return cls.implements("transform")

    @classmethod
    def can_prepare_chunked(cls) -> bool:
        """Whether the class implements :meth:`prepare_chunked`."""
        return cls.implements("prepare_chunked")

    @classmethod
    def can_search_once(cls) -> bool:
        """Whether the class implements all four one-search hooks
        (:meth:`prepare_search`, :meth:`search_block`, :meth:`finish_search`,
        :meth:`rows_from_search`)."""
        return all(cls.implements(h) for h in _SEARCH_HOOKS)


@attrs.frozen(eq=False)
class Adapted:
    """The problem an :class:`Adapter` hands the solver.

    Attributes
    ----------
    graph : AffinityGraph or AnchorGraph
        The graph the solver runs on; its kind is the adapter's ``produces``.
    X : ndarray of shape (graph.n, d) or None
        Features matching the rows of ``graph`` (``None`` when there are none).
    n_clusters : int
        The number of clusters asked of the solver (at most ``graph.n``).
    """

    graph: AffinityGraph | AnchorGraph
    X: np.ndarray | None
    n_clusters: int


class Adapter(Part):
    """Adapts the built graph (and features) to a solver, and lifts its solution back.

    An adapter sits between the graph builder and the solver. The composer checks the
    chain from the declarations alone: the builder's ``produces`` must be in the
    adapter's ``accepts``, and the adapter's ``produces`` in the solver's ``accepts``.

    Attributes
    ----------
    accepts : frozenset of GraphKind
        Graph kinds it takes.
    produces : GraphKind
        The graph kind it hands the solver.
    provides_features : bool
        Whether :meth:`adapt` hands the solver features (rows matching its graph), so a
        solver with ``needs_features`` can follow it.
    out_of_sample : bool
        Whether the solutions :meth:`lift` returns place new points (they set per-anchor
        values or a feature projection); ``predict`` is offered only then.
    adds : frozenset of SolutionField
        Fields :meth:`lift` adds to what the solver provides (``on-sample`` adds a soft
        assignment, the vote of the sample's labels); the composer checks the rounding
        against the solver's ``provides`` and these. Empty by default.
    own_graph : bool
        Whether :meth:`adapt` builds the graph the solver runs on from the anchors alone
        (``on-sample``: the sample's own kNN graph), so the built graph only places rows
        and its connected components say nothing of the solver's problem: the pipeline
        then does not warn about them. False by default.

    Work methods: :meth:`adapt` before the solver, :meth:`solve` to run it (by default
    once, as given) and :meth:`lift` after it. :meth:`adapt` and :meth:`lift` are
    row-local or global-small like every other stage; neither may form an ``n x n``
    matrix for an anchor graph.
    """

    kind: ClassVar[str] = "adapter"
    chunk_hooks: ClassVar[tuple[str, ...]] = ("adapt_chunked", "lift_rows")
    accepts: ClassVar[frozenset[GraphKind]] = frozenset({GraphKind.ANCHOR})
    produces: ClassVar[GraphKind] = GraphKind.AFFINITY
    provides_features: ClassVar[bool] = False
    out_of_sample: ClassVar[bool] = False
    adds: ClassVar[frozenset[SolutionField]] = frozenset()
    own_graph: ClassVar[bool] = False

    def adapt(self, graph: AffinityGraph | AnchorGraph, X: np.ndarray | None,
              n_clusters: int, ctx: Context) -> Adapted:  # pragma: no cover - interface
        """The graph, features and cluster count the solver runs on."""
        raise NotImplementedError

    def lift(self, solution: Solution, graph: AffinityGraph | AnchorGraph, adapted: Adapted,
             ctx: Context) -> Solution:  # pragma: no cover - interface
        """The solver's ``solution`` on ``adapted`` carried back to the ``graph.n`` points.

        With ``out_of_sample``, the result must be :attr:`Solution.extendable`: predict
        places new points with it through the graph builder's ``transform``.
        """
        raise NotImplementedError

    def solve(self, solver: "Solver", adapted: Adapted, ctx: Context,
              k_range: tuple[int, int] | None = None) -> Solution:
        """The ``solver``'s solution of the adapted problem, handed to :meth:`lift` (and
        to :meth:`estimate_k` when ``k_range``, the ``(k_min, k_max)`` searched, is given).

        Default: ``solver.solve(adapted.graph, adapted.X, adapted.n_clusters, ctx)``. An
        adapter that judges the solver's solutions by what it makes of them overrides it
        (``on-sample`` with ``n_starts > 1`` keeps, of several starts, the one whose
        sample partition is the most modular). Runs in the calling process in memory and
        in the chunked execution alike, on the same global-small problem.
        """
        return solver.solve(adapted.graph, adapted.X, adapted.n_clusters, ctx)

    def estimate_k(self, solution: Solution, adapted: Adapted, k_min: int, k_max: int,
                   ctx: Context):
        """The number of clusters from the solver's ``solution`` on ``adapted`` (k hook,
        with ``estimates_k``), before :meth:`lift` is called on the same solution with
        ``adapted.n_clusters`` set to the chosen ``k``; used when the solver's solution
        does not depend on ``k`` (``Solver.uses_k`` false) and the adapter cuts the
        labels itself (``on-sample``'s rounding of the sample). Returns a
        :class:`graphclust.KSelection` with ``k_min <= k <= k_max``."""
        raise NotImplementedError(f"adapter {self.name!r} does not estimate k")

    def can_estimate_k(self) -> bool:
        """Whether this instance can estimate ``k`` (an adapter whose estimate comes
        from a nested part says so from its parameters); default: ``estimates_k``."""
        return bool(self.estimates_k)

    def solver_problems(self, solver: Solver) -> list[str]:
        """Why this adapter cannot follow ``solver`` (checked by the composer before any
        work), beyond the declared graph kinds and features: an adapter running parts of
        its own on the solver's solution (``on-sample``'s rounding) checks them here.
        Empty (the default) when it can."""
        return []

    def confidence(self, Z, solution: Solution, labels: np.ndarray) -> np.ndarray:
        """How sure the adapter is of each lifted row's label (confidence protocol,
        optional; :doc:`/confidence`), after :meth:`lift`.

        ``Z`` holds the rows' memberships in the anchors (``n x m``, the built graph's
        rows in memory, a block's in the chunked execution), ``solution`` their lifted
        rows and ``labels`` the pipeline's labels of them. Returns ``(n,)`` values in
        ``[0, 1]``; when implemented it is the pipeline's confidence (the rounding after
        an adapter reads the adapter's lifted rows, so the adapter knows more of how a
        row got its label)."""
        raise NotImplementedError(f"adapter {self.name!r} gives no confidence")

    def outliers(self, Z, solution: Solution, labels: np.ndarray) -> np.ndarray:
        """Lifted rows the adapter says belong to no cluster (confidence protocol,
        optional; ``noise=True``): a boolean array of shape ``(n,)``, or ``None`` when
        this fit has no flags of its own (the framework's rule then applies)."""
        raise NotImplementedError(f"adapter {self.name!r} flags no outliers")

    @classmethod
    def gives_confidence(cls) -> bool:
        """Whether the class implements :meth:`confidence`."""
        return cls.implements("confidence")

    def adapt_chunked(self, graph: AnchorGraph, chunks, n_clusters: int,
                      ctx: Context) -> Adapted:
        """:meth:`adapt` in the chunked execution (chunk hook, required with
        ``chunkwise``): ``graph`` is the run's zero-row anchor graph (anchors and fitted
        state) and ``chunks`` a :class:`graphclust.chunks.RowChunks` whose blocks hold
        rows of ``X`` and ``Z``; the returned problem must be global-small (``m``-sized,
        built from sums over the blocks), since the solver then runs on it in the calling
        process, unchanged. :meth:`lift` on the zero-row ``graph`` gives the zero-row
        solution that :meth:`lift_rows` carries to each block."""
        raise NotImplementedError(f"adapter {self.name!r} does not run chunk-wise")

    def lift_rows(self, solution: Solution, block) -> Solution:
        """Rows of the lifted solution for one :class:`graphclust.chunks.Block` (chunk
        hook, required with ``chunkwise``), from the zero-row ``solution`` of
        :meth:`lift`: the rows :meth:`lift` gives those points in memory."""
        raise NotImplementedError(f"adapter {self.name!r} does not run chunk-wise")

    def layers(self, solution: Solution, graph, labels: np.ndarray):
        """The hierarchy of the labels this adapter cut itself (layers hook, optional):
        a :class:`graphclust.Layers` of the rows whose atoms refine ``labels``, from the
        lifted ``solution`` and the run's ``graph``; or ``None`` (the default: the
        pipeline's rounding is asked, then the framework's merge tree)."""
        return None

    @classmethod
    def can_adapt_chunked(cls) -> bool:
        """Whether the class implements :meth:`adapt_chunked` and :meth:`lift_rows`."""
        return cls.implements("adapt_chunked") and cls.implements("lift_rows")


class Solver(Part):
    """Turns a graph (and, when ``needs_features``, the data) into a :class:`Solution`.

    Attributes
    ----------
    accepts : frozenset of GraphKind
        Graph kinds it works on.
    needs_features : bool
        Whether it needs ``X`` besides the graph.
    provides : frozenset of SolutionField
        What its solution holds: an embedding and/or a soft assignment. (Its old name,
        ``produces``, still works in a solver's declaration, with a
        :class:`DeprecationWarning` when the class is defined.)
    out_of_sample : bool
        Whether its solutions on an anchor graph place new points: they set a feature
        ``projection`` or per-anchor values (``anchor_embedding`` / ``anchor_soft``) for
        everything they hold. The estimator offers ``predict`` only then.
    uses_k : bool
        Whether its solution depends on ``n_clusters`` (a ``k``-column embedding or soft
        assignment). A solver with ``uses_k = False`` (a fixed-width layout) lets the
        rounding estimate ``k`` from its solution (:doc:`/choosing-k`).
    """

    kind: ClassVar[str] = "solver"
    uses_k: ClassVar[bool] = True
    chunk_hooks: ClassVar[tuple[str, ...]] = ("solve_chunked", "lift_rows")
    accepts: ClassVar[frozenset[GraphKind]] = frozenset({GraphKind.AFFINITY, GraphKind.ANCHOR})
    needs_features: ClassVar[bool] = False
    provides: ClassVar[frozenset[SolutionField]] = frozenset({SolutionField.EMBEDDING})
    #: the old name of ``provides`` (reading it warns)
    produces = RenamedDeclaration("provides")
    out_of_sample: ClassVar[bool] = False

    def solve(self, graph: AffinityGraph | AnchorGraph, X: np.ndarray | None,
              n_clusters: int, ctx: Context) -> Solution:  # pragma: no cover
        """The solution on ``graph``. ``n_clusters`` is an integer with
        ``1 <= n_clusters <= graph.n``: the fit plan (and an adapter, for the problem it
        hands on) guarantees it, so a solver need not check it again."""
        raise NotImplementedError

    def solve_chunked(self, chunks, n_clusters: int, ctx: Context) -> Solution:
        """The ``m``-sized solve of the chunked execution (chunk hook, required with
        ``chunkwise``; anchor graphs).

        ``chunks`` is a :class:`graphclust.chunks.RowChunks` whose blocks hold rows of
        ``X`` and ``Z``; everything n-sized is a sum over them. Returns a
        :class:`Solution` with **zero rows** (an ``(0, p)`` embedding) carrying what
        :meth:`lift_rows` needs (per-anchor values, a projection) in its fields and
        ``info``; rows kept per block go under ``info[graphclust.chunks.KEPT_ROWS]``.
        """
        raise NotImplementedError(f"solver {self.name!r} does not run chunk-wise")

    def lift_rows(self, solution: Solution, block) -> Solution:
        """Rows of the solution for one :class:`graphclust.chunks.Block` (chunk hook,
        required with ``chunkwise``), from the zero-row ``solution`` of
        :meth:`solve_chunked`: the rows :meth:`solve` gives those points in memory."""
        raise NotImplementedError(f"solver {self.name!r} does not run chunk-wise")

    def estimate_k(self, graph: AffinityGraph | AnchorGraph, X: np.ndarray | None,
                   k_min: int, k_max: int, ctx: Context):
        """The number of clusters (k hook, with ``estimates_k``), before :meth:`solve`:
        a :class:`graphclust.KSelection` with ``k_min <= k <= k_max``."""
        raise NotImplementedError(f"solver {self.name!r} does not estimate k")

    @classmethod
    def can_solve_chunked(cls) -> bool:
        """Whether the class implements :meth:`solve_chunked` and :meth:`lift_rows`."""
        return cls.implements("solve_chunked") and cls.implements("lift_rows")


class Rounding(Part):
    """Turns a :class:`Solution` into integer labels ``0..k-1``.

    Attributes
    ----------
    needs : SolutionField
        What it reads from the solution (a plain string ``"embedding"`` or ``"soft"`` is
        accepted and coerced when the class is defined).

    :meth:`round` may store what :meth:`assign` needs to label new points (e.g.
    k-means centres) in attributes ending with ``_``. A ``chunkwise`` rounding is one
    whose :meth:`round` on a uniform sample of rows followed by :meth:`assign` on every
    block is its chunked form (equal to :meth:`round` when the sample is every row); it
    needs no chunk-only hook, but must implement :meth:`assign`. A rounding that fits
    on rows it draws itself by global row index implements :meth:`sample_rows`
    (optional): the chunked execution then fits it on exactly those rows.
    """

    kind: ClassVar[str] = "rounding"
    needs_features: ClassVar[bool] = False  # its work method receives no X
    needs: ClassVar[SolutionField] = SolutionField.EMBEDDING
    chunk_needs: ClassVar[tuple[str, ...]] = ("assign",)
    optional_chunk_hooks: ClassVar[tuple[tuple[str, ...], ...]] = (("sample_rows",),)

    def round(self, solution: Solution, n_clusters: int,
              ctx: Context) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def assign(self, solution: Solution) -> np.ndarray:
        """Labels of new points (rows of an extended solution), after :meth:`round`."""
        raise NotImplementedError(f"rounding {self.name!r} cannot label new points")

    def estimate_k(self, solution: Solution, k_min: int, k_max: int, ctx: Context):
        """The number of clusters in ``solution`` (k hook, with ``estimates_k``), before
        :meth:`round` is called on the same solution with the chosen ``k``; used when
        the solver's solution does not depend on ``k`` (``Solver.uses_k`` false).
        Returns a :class:`graphclust.KSelection` with ``k_min <= k <= k_max``."""
        raise NotImplementedError(f"rounding {self.name!r} does not estimate k")

    def confidence(self, solution: Solution, labels: np.ndarray) -> np.ndarray:
        """How sure the rounding is of each row's label (confidence protocol, optional;
        :doc:`/confidence`).

        Called after :meth:`round` (or :meth:`assign`) with the same solution rows and
        the labels it gave them, in memory on all rows and in the chunked execution per
        block: a row's value must depend on that row and the fitted state only. Returns
        an array of shape ``(n,)`` in ``[0, 1]`` (the framework clips it and reads NaN
        as 0). A rounding without it gets the framework's fallback, the share of each
        point's graph neighbours that carry its label."""
        raise NotImplementedError(f"rounding {self.name!r} gives no confidence")

    def probabilities(self, solution: Solution, labels: np.ndarray) -> np.ndarray:
        """Class probabilities of rows (confidence protocol, optional; ``predict_proba``).

        After :meth:`round`, for rows of a solution and the labels :meth:`round` or
        :meth:`assign` gave them: an ``(n, k)`` nonnegative array, column ``c`` for label
        ``c``. The framework normalises the rows to sum to one and, where a row's
        largest entry is not its label's, moves it to the label by the least amount
        that makes the label the strict argmax (:doc:`/confidence`)."""
        raise NotImplementedError(f"rounding {self.name!r} gives no class probabilities")

    def outliers(self, solution: Solution, labels: np.ndarray) -> np.ndarray:
        """Rows the rounding itself says belong to no cluster (confidence protocol,
        optional; the estimator's ``noise=True``): a boolean array of shape ``(n,)``, or
        ``None`` for no flags of its own. Without it, ``noise=True`` applies the
        framework's rule (:doc:`/confidence`)."""
        raise NotImplementedError(f"rounding {self.name!r} flags no outliers")

    @classmethod
    def gives_confidence(cls) -> bool:
        """Whether the class implements :meth:`confidence`."""
        return cls.implements("confidence")

    def sample_rows(self, n: int, n_clusters: int, ctx: Context) -> np.ndarray | None:
        """The rows of a run's ``n`` rows that :meth:`round` fits on (chunk hook, optional).

        A rounding that fits on a sample it draws itself (``gmm`` and ``genie`` with
        ``max_fit``) implements this so that the chunked execution gathers exactly those
        rows instead of its own uniform sample. The contract: :meth:`round` on the
        solution rows ``sample_rows(n, k, ctx)``, then :meth:`assign` on every row, gives
        the labels :meth:`round` gives on all ``n`` rows (with a context of the same seed).

        Returns
        -------
        ndarray of int64 or None
            Sorted distinct global row indices, or ``None`` for all rows.
        """
        raise NotImplementedError(f"rounding {self.name!r} draws no rows of its own")

    def layers(self, solution: Solution, labels: np.ndarray):
        """This rounding's own hierarchy of its last :meth:`round` (layers hook,
        optional): a :class:`graphclust.Layers` whose atoms refine ``labels`` (the fit's
        labels of the same rows) and whose layer at the fitted ``k`` is ``labels``, or
        ``None``. The default is ``None``: the framework then merges the clusters
        (Ward's rule on their centroids in ``solution``; :doc:`/layers`)."""
        return None

    @classmethod
    def can_assign(cls) -> bool:
        """Whether the class implements :meth:`assign`."""
        return cls.implements("assign")

    @classmethod
    def draws_rows(cls) -> bool:
        """Whether the class implements :meth:`sample_rows`."""
        return cls.implements("sample_rows")


class Metric(Part):
    """Scores labels, against the truth (``needs_truth``) or the graph.

    Attributes
    ----------
    needs_truth : bool
        Whether ``y_true`` is required.
    greater_is_better : bool
    """

    kind: ClassVar[str] = "metric"
    needs_features: ClassVar[bool] = False  # its work method receives no X
    needs_truth: ClassVar[bool] = True
    greater_is_better: ClassVar[bool] = True

    def score(self, labels: np.ndarray, y_true: np.ndarray | None = None,
              graph: AffinityGraph | AnchorGraph | None = None) -> float:  # pragma: no cover
        raise NotImplementedError


class Consensus(Part):
    """Turns an ensemble's point × base-cluster memberships into ``k`` labels.

    An ensemble runs its members (whole pipelines, each with its own seed and ``k_i``)
    and hands their labels to a consensus part as a :class:`~graphclust.Memberships`:
    the sparse ``n x Σk_i`` 0/1 matrix of the bipartite graph between points and base
    clusters.

    Contract of :meth:`combine`: return integer labels ``0..k-1`` of shape ``(n,)``,
    consecutive from 0, for any ``1 <= n_clusters <= n``; identical members give their
    common partition back (up to relabelling); randomness only from ``ctx``. It may
    store what :meth:`assign` needs in attributes ending with ``_``.

    Contract of :meth:`assign` (optional; ``predict`` needs it): label new points from
    their membership rows, built with the same column layout (``sizes``) after each
    member's ``predict``; a training point's row gets its training label back.

    A ``chunkwise`` consensus implements :meth:`combine_chunked` and :meth:`embed_rows`
    (the chunk protocol, :mod:`graphclust.chunks`).
    """

    kind: ClassVar[str] = "consensus"
    needs_features: ClassVar[bool] = False  # its work method receives no X
    chunk_hooks: ClassVar[tuple[str, ...]] = ("combine_chunked", "embed_rows")

    def combine(self, memberships: Memberships, n_clusters: int,
                ctx: Context) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def assign(self, memberships: Memberships) -> np.ndarray:
        """Labels of new points from their membership rows, after :meth:`combine`."""
        raise NotImplementedError(f"consensus {self.name!r} cannot label new points")

    #: the bipartite point × base-cluster graph has a normalised spectrum
    estimates_k: ClassVar[str | None] = "eigengap"

    def estimate_k(self, memberships: Memberships, k_min: int, k_max: int, ctx: Context):
        """The number of consensus clusters (k hook). The interface's default is the
        eigengap of the point × base-cluster bipartite graph (rows of the memberships
        scaled to sum to one: an anchor graph on ``Σk_i`` base clusters, so the
        ``Σk_i x Σk_i`` problem; :mod:`graphclust.numerics.eigengap`)."""
        from graphclust.numerics.eigengap import anchor_spectrum

        mu = anchor_spectrum(memberships.matrix, k_max + 1)
        return eigengap_selection(mu, k_min, k_max, f"consensus {self.name!r}")

    def estimate_k_chunked(self, chunks, k_min: int, k_max: int, ctx: Context):
        """:meth:`estimate_k` in the chunked execution (k hook): ``chunks`` as in
        :meth:`combine_chunked`; the default sums each block's ``Σk_i``-sized share of
        the spectrum problem and solves it here."""
        from graphclust.numerics.eigengap import spectrum_from_anchor_sums

        G, lam = chunks.sum(_anchor_sums)
        mu = spectrum_from_anchor_sums(G, lam, k_max + 1)
        return eigengap_selection(mu, k_min, k_max, f"consensus {self.name!r}")

    def combine_chunked(self, chunks, n_clusters: int, ctx: Context) -> None:
        """Fit the consensus on row chunks of the memberships (chunk hook, required with
        ``chunkwise``).

        ``chunks`` is a :class:`graphclust.chunks.RowChunks` whose ``block.Z`` is a
        block's rows of the ``n x Σk_i`` membership matrix (``block.X`` has no columns).
        Fit the ``Σk_i``-sized state from ``chunks.sum`` and set ``rounding_``, an
        unfitted :class:`Rounding` of the point coordinates: the execution fits it with
        ``round`` on the :meth:`embed_rows` of a uniform row sample and labels every
        block with its ``assign``; with the sample every row, the labels are
        :meth:`combine`'s. Returns nothing.
        """
        raise NotImplementedError(f"consensus {self.name!r} does not run chunk-wise")

    def embed_rows(self, block) -> np.ndarray:
        """A block's point coordinates (chunk hook, required with ``chunkwise``), after
        :meth:`combine_chunked`: an array of shape ``(rows of block.Z, p)`` that
        ``rounding_`` is fitted on and applied to."""
        raise NotImplementedError(f"consensus {self.name!r} does not run chunk-wise")

    @classmethod
    def can_assign(cls) -> bool:
        """Whether the class implements :meth:`assign`."""
        return cls.implements("assign")

    @classmethod
    def can_combine_chunked(cls) -> bool:
        """Whether the class implements :meth:`combine_chunked` and :meth:`embed_rows`."""
        return cls.implements("combine_chunked") and cls.implements("embed_rows")


#: The part kinds, keyed by spec section, with the interface each kind implements.
PART_KINDS: dict[str, type[Part]] = {
    "anchors": AnchorSelector,
    "graph": GraphBuilder,
    "adapter": Adapter,
    "solver": Solver,
    "rounding": Rounding,
    "metric": Metric,
    "consensus": Consensus,
}
