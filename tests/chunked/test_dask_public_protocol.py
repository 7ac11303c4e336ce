"""The public chunk protocol (:mod:`graphclust.chunks`): a part written as a third party
would write it, with public names only, runs chunk-wise; the contract kit checks the
hooks a ``chunkwise`` part declares; the chunked execution asks the interfaces'
declarations, never ``hasattr``."""

from __future__ import annotations

import graphclust
import graphclust.chunks
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust.chunks import InMemoryChunks, anchor_degrees
from graphclust.testing import ContractViolation, check_declarations, check_part


def require_dask():
    pytest.importorskip("dask.array", reason="needs the [dask] extra")
    pytest.importorskip("distributed", reason="needs the [dask] extra")


# -- a third-party part: graphclust and graphclust.chunks only -------------------------
def _gram(block):
    """``Z_bᵀ Z_b`` of one block (dense, ``m x m``): the chunk function of ``ZᵀZ``."""
    Z = sp.csr_array(block.Z)
    return (Z.T @ Z).toarray()


def _anchor_values(gram, degrees, k):
    """``Λ^{-1/2}`` times the leading ``k`` eigenvectors of ``Λ^{-1/2} ZᵀZ Λ^{-1/2}``,
    each signed so that its largest entry is positive."""
    scale = 1.0 / np.sqrt(np.maximum(degrees, 1e-300))
    _, vecs = np.linalg.eigh(scale[:, None] * gram * scale[None, :])
    V = vecs[:, ::-1][:, :k]
    V = V * np.sign(V[np.abs(V).argmax(axis=0), np.arange(V.shape[1])])
    return scale[:, None] * V


@graphclust.part
class ThirdPartyGram(graphclust.Solver):
    """Leading eigenvectors of the normalised anchor Gram matrix."""

    name = "third-party-gram"
    accepts = frozenset({"anchor"})
    provides = frozenset({"embedding"})
    out_of_sample = True
    chunkwise = True

    def solve(self, graph, X, n_clusters, ctx):
        Z = sp.csr_array(graph.Z)
        degrees = np.asarray(Z.sum(axis=0), dtype=np.float64).ravel()
        W = _anchor_values((Z.T @ Z).toarray(), degrees, n_clusters)
        return graphclust.Solution(embedding=np.asarray(Z @ W), anchor_embedding=W)

    def solve_chunked(self, chunks, n_clusters, ctx):
        W = _anchor_values(chunks.sum(_gram), chunks.sum(anchor_degrees), n_clusters)
        return graphclust.Solution(embedding=np.zeros((0, W.shape[1])), anchor_embedding=W)

    def lift_rows(self, solution, block):
        return graphclust.Solution(embedding=np.asarray(block.Z @ solution.anchor_embedding))


def _spec():
    return {"anchors": {"name": "kmeans", "n_anchors": 60}, "graph": {"name": "gaussian-anchor"},
            "solver": ThirdPartyGram(), "rounding": {"name": "kmeans"}}


def test_no_private_imports_outside_the_core():
    """Bundles, contrib packages and the contract kit use public names only (the chunk
    protocol through graphclust.chunks): none imports a graphclust._ module."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    folders = [root / "plugins", root / "contrib", root / "framework/graphclust/testing"]
    found = []
    for path in (f for folder in folders for f in folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(root)}: {n}" for n in names
                      if n.startswith("graphclust._")]
            if isinstance(node, ast.ImportFrom) and node.module == "graphclust":
                found += [f"{path.relative_to(root)}: graphclust.{a.name}" for a in node.names
                          if a.name.startswith("_")]
    assert not found, found


def test_public_module_exports_the_protocol():
    """What parts need is public, and named so (not by the private implementation)."""
    for name in ("RowChunks", "InMemoryChunks", "Block", "BlockState", "KEPT_ROWS",
                 "split_kept", "sample_size", "ROUNDING_SAMPLE_MIN",
                 "ROUNDING_SAMPLE_PER_CLUSTER", "ANCHOR_SAMPLE_MIN",
                 "ANCHOR_SAMPLE_PER_ANCHOR", "anchor_degrees", "add_sums"):
        assert name in graphclust.chunks.__all__
        obj = getattr(graphclust.chunks, name)
        assert getattr(obj, "__module__", "graphclust.chunks") == "graphclust.chunks", name


def test_third_party_part_passes_the_kit():
    """The kit's checks, ``chunked`` (solve_chunked + lift_rows over three row blocks
    equal solve) among them, pass for the part."""
    check_part(ThirdPartyGram)


def test_third_party_part_on_blocks_in_memory(digits):
    """Its chunked form on any cut of the rows gives the in-memory embedding."""
    X, _ = digits
    pipe = graphclust.compose(_spec())
    res = pipe.run(X, n_clusters=10, ctx=graphclust.Context(seed=0))
    solver = pipe.solver
    for rows in (1797, 400, 97):
        chunks = InMemoryChunks(X, res.graph.Z, block_rows=rows)
        sol = solver.solve_chunked(chunks, 10, graphclust.Context(seed=0))
        emb = np.vstack([solver.lift_rows(sol, b).embedding for b in chunks.blocks()])
        np.testing.assert_allclose(emb, res.solution.embedding, atol=1e-9)


def test_third_party_part_runs_on_dask(digits):
    """On a dask array (threads), the part gives the in-memory labels."""
    require_dask()
    import dask.array as da

    X, _ = digits
    mem = graphclust.GraphClustering(_spec(), n_clusters=10, random_state=0).fit(X)
    chunked = graphclust.GraphClustering(_spec(), n_clusters=10, random_state=0).fit(
        da.from_array(X, chunks=500))
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


# -- the kit checks the declared hooks ---------------------------------------------------
@graphclust.part
class ClaimsChunkwise(graphclust.Solver):
    """Declares chunkwise without any chunk hook (a broken test part)."""

    name = "claims-chunkwise"
    accepts = frozenset({"anchor"})
    chunkwise = True

    def solve(self, graph, X, n_clusters, ctx):  # pragma: no cover - never run
        raise AssertionError


@graphclust.part
class HalfChunkwise(ClaimsChunkwise):
    """Has solve_chunked but no lift_rows (a broken test part)."""

    name = "half-chunkwise"

    def solve_chunked(self, chunks, n_clusters, ctx):  # pragma: no cover - never run
        raise AssertionError


@graphclust.part
class ForgotTheFlag(graphclust.Solver):
    """Implements the chunk hooks but does not declare chunkwise (a broken test part)."""

    name = "forgot-the-flag"
    accepts = frozenset({"anchor"})
    solve = ThirdPartyGram.solve
    solve_chunked = ThirdPartyGram.solve_chunked
    lift_rows = ThirdPartyGram.lift_rows


@graphclust.part
class OptsOut(ThirdPartyGram):
    """A subclass whose chunked form no longer holds, opting out (a test part)."""

    name = "opts-out"
    chunkwise = False


@graphclust.part
class HalfSearch(graphclust.GraphBuilder):
    """Implements two of the four one-search hooks (a broken test part)."""

    name = "half-search"
    produces = "anchor"
    needs_anchors = True
    chunkwise = True

    def build(self, X, anchors, ctx):  # pragma: no cover - never run
        raise AssertionError

    def transform(self, X_new, graph):  # pragma: no cover - never run
        raise AssertionError

    def prepare_chunked(self, anchors, chunks, ctx):  # pragma: no cover - never run
        raise AssertionError

    def prepare_search(self, anchors, ctx):  # pragma: no cover - never run
        raise AssertionError

    def search_block(self, X, template):  # pragma: no cover - never run
        raise AssertionError


@pytest.mark.parametrize("cls, missing, present", [
    (ClaimsChunkwise, ["solve_chunked()", "lift_rows()"], []),
    (HalfChunkwise, ["lift_rows()"], ["solve_chunked()"]),
    (HalfSearch, ["finish_search()", "rows_from_search()"], ["prepare_search()"]),
])
def test_kit_names_the_missing_hook(cls, missing, present):
    with pytest.raises(ContractViolation, match="declares chunkwise = True") as err:
        check_declarations(cls)
    message = str(err.value)
    assert err.value.check == "declarations"
    for hook in missing:
        assert hook in message
    for hook in present:
        assert hook not in message


def test_kit_fails_hooks_without_the_flag():
    with pytest.raises(ContractViolation, match="does not declare chunkwise = True") as err:
        check_declarations(ForgotTheFlag)
    assert "solve_chunked(), lift_rows()" in str(err.value)
    check_declarations(OptsOut)  # an explicit chunkwise = False is a documented opt-out


def test_refused_before_running(digits):
    """A spec whose part claims chunkwise without its hooks is refused before any work,
    naming the part and the hook."""
    from graphclust._dask._refuse import check_chunkwise

    pipe = graphclust.compose({**_spec(), "solver": HalfChunkwise()})
    with pytest.raises(graphclust.SpecError, match=r"'half-chunkwise'.*lift_rows\(\)"):
        check_chunkwise(pipe)
    check_chunkwise(graphclust.compose(_spec()))


# -- the execution asks the declarations, not hasattr ------------------------------------
def test_declarations_not_attributes():
    """A method is a hook only when the class implements the interface's declaration:
    a non-callable class attribute or an instance attribute of the same name is not."""

    @graphclust.part
    class NotAHook(graphclust.AnchorSelector):
        """A selector with a data attribute named like the optional hook."""

        name = "not-a-hook"
        for_rows = 3

    assert not NotAHook.depends_on_rows()
    reg = graphclust.get_registry()
    assert reg.anchors.get("capped").depends_on_rows()
    assert not reg.anchors.get("kmeans").depends_on_rows()
    builder = reg.graphs.get("gaussian-anchor")()
    for hook in ("prepare_search", "search_block", "finish_search", "rows_from_search"):
        setattr(builder, hook, lambda *a: pytest.fail("an attribute was called as a hook"))
    assert not builder.can_search_once()
    assert reg.graphs.get("knr-bipartite").can_search_once()


def test_execution_ignores_attributes_named_like_hooks(digits):
    """The chunked fit of parts carrying instance attributes named like optional hooks
    (the one-search group, ``for_rows``) runs their declared form: none of the
    attributes is called, and the labels are those of the same parts without them."""
    require_dask()
    import dask.array as da
    from graphclust._dask._run import fit_chunked

    X, _ = digits
    spec = {**_spec(), "solver": {"name": "spectral"}}

    def boom(*args):
        raise AssertionError("an attribute was called as a hook")

    pipe = graphclust.compose(spec)
    for hook in ("prepare_search", "search_block", "finish_search", "rows_from_search"):
        setattr(pipe.graph, hook, boom)
    pipe.anchors.for_rows = boom
    Xd = da.from_array(X, chunks=500)
    got = fit_chunked(pipe, Xd, 10, graphclust.Context(seed=0))
    want = fit_chunked(graphclust.compose(spec), Xd, 10, graphclust.Context(seed=0))
    np.testing.assert_array_equal(got.labels.compute(), want.labels.compute())
