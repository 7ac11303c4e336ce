"""SLC / DLC solver: stacked linear coding layers (Shao et al., Eq. 3–7, Algorithms 1–2)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

import graphclust
from graphclust.numerics import as_float
from graphclust_plugins.dlc import _slc
from graphclust_plugins.dlc._codes import gaussian_codes
from graphclust_plugins.dlc.graph_landmark_codes import LandmarkCodesState

__all__ = ["DLCSolver", "layer_selector", "LAYER_KMEANS_ITER"]

LAYER_KMEANS_ITER = 10
"""k-means iterations for the landmarks of later layers ("e.g., 10", paper Section 3.5)."""


def layer_selector(value, n_anchors: int) -> graphclust.AnchorSelector:
    """The anchor selector of a later layer.

    ``value`` is ``None`` (the common ``kmeans`` selector with one replicate,
    :data:`LAYER_KMEANS_ITER` iterations, as many landmarks as the first layer, and
    ``copy_x = False`` since the later layers' inputs are the solver's own arrays), a
    part instance (cloned) or a spec table ``{"name": ..., ...}``.
    """
    if value is None:
        value = {"name": "kmeans", "n_anchors": int(n_anchors), "max_iter": LAYER_KMEANS_ITER,
                 "n_init": 1, "copy_x": False}
    if isinstance(value, graphclust.Part):
        return clone(value)
    return graphclust.resolve_part(dict(value), "anchors")


@graphclust.part
class DLCSolver(graphclust.Solver):
    """Deep Linear Coding: T alternations of W = PQ⁻¹ and ridge codes per layer, L layers.

    Layer ``l`` (Algorithm 1) starts from sparse Gaussian codes of its input on its
    landmarks and alternates, ``n_iter`` (T) times,

    * the linear transform ``W = P Q⁻¹``, ``P = X X̃ᵀ``, ``Q = X̃ X̃ᵀ``, ``X̃ = DA``
      (Eq. 4–5), and
    * the ridge codes ``A = (D̃ᵀD̃ + λI)⁻¹ D̃ᵀ X`` with ``D̃ = W D`` (Eq. 6–7),

    stopping early when ``‖X − WDA‖²_F < ε``. Layer ``l + 1`` takes the codes of layer
    ``l`` as its data (Algorithm 2), with landmarks from ``layer_anchors`` (k-means with
    about 10 iterations by default) and Gaussian codes on its ``k`` nearest landmarks.
    The embedding is the last layer's codes, one row per point, for k-means rounding.

    The first layer's landmarks and codes come from the pipeline (its anchor selector
    and the ``landmark-codes`` graph); that graph's ``n_neighbors``/``sigma`` (its typed
    state) are reused for later layers unless ``layer_neighbors``/``layer_sigma`` are
    given. On an anchor graph from another builder, later layers use the paper's
    ``k = 5`` and ``σ = 1``.

    Implementation (exact reformulation, see :mod:`graphclust_plugins.dlc._slc`)
    -------------------------------------------------------------------------
    * The ridge codes are linear in the data (``C = X R``), so all iterations run on
      ``S = XᵀX`` and d×d / m×m matrices; one pass over the data per layer. Nothing
      n×m is formed.
    * The codes of a layer are carried to the next layer as an isometric copy of rank
      ``r ≤ min(d, m)`` (n×r, float32, computed in row blocks); distances between rows,
      hence landmarks, neighbours, Gaussian codes and updates, are unchanged.
    * ``embedding="compact"`` (default) returns the last layer's codes in that isometric
      n×r form (k-means sees exactly the same distances, at r/m of the cost and memory);
      ``embedding="codes"`` returns the literal n×m codes ``Aᵀ``. Both in float32.
    * ``projection`` maps new (normalised) points to the embedding: ``x @ projection``.

    Deviations from the paper
    -------------------------
    * ``Q`` is singular whenever the reconstructed data miss some direction (always-zero
      pixels; every later layer with m > its input rank). ``Q⁻¹`` is replaced by
      ``(Q + ε I)⁻¹`` with ``ε = q_reg · tr(Q)/d`` (Cholesky); for ``q_reg → 0`` this is
      the pseudo-inverse solution, the minimum-norm minimiser of Eq. 4.
    * ε is relative: stop when ``‖X − WDA‖² < tol · ‖X‖²_F`` (the paper gives no value).
    * ``objective`` records Eq. 3, ``‖X − WDA‖² + λ‖A‖²``, after every iteration of every
      layer (Figure 3); ``history["objective_w"]`` the same after each W-update, and
      ``history["layer"]`` the layer of each entry. Within a layer the sequence
      ``objective_w[t], objective[t], objective_w[t+1], ...`` is non-increasing (both
      updates are exact block minimisers). Reaching T iterations is the paper's normal
      end (T = 5 "to balance performance and speed"): no warning; ``converged`` says
      whether the ε rule fired in the last layer.
    """

    name = "dlc"
    out_of_sample = True  # places new points (projection or per-anchor values)
    accepts = frozenset({graphclust.GraphKind.ANCHOR})
    needs_features = True
    provides = frozenset({graphclust.SolutionField.EMBEDDING})

    n_layers: int = graphclust.param(
        2, doc="Number of stacked layers L (Algorithm 2; 1 = SLC, paper's DLC: 2).",
        check=graphclust.integer(1))
    lam: float = graphclust.param(
        1.0, doc="Ridge weight λ on the codes (Eq. 3, 6, 7; paper: 1).",
        check=graphclust.real(0, low_open=True))
    n_iter: int = graphclust.param(
        5, doc="Alternations T per layer (Algorithm 1; paper: 5).",
        check=graphclust.integer(1))
    tol: float = graphclust.param(
        1e-6, doc="ε of Algorithm 1 step 6, relative to ‖X‖²_F.",
        check=graphclust.real(0))
    layer_anchors: object = graphclust.param(
        None, doc="Landmark selector of layers 2..L (a part spec); None: k-means with "
                  "~10 iterations and as many landmarks as layer 1 (Section 3.4).",
        check=graphclust.optional(graphclust.part_spec("anchors")))
    layer_neighbors: object = graphclust.param(
        None, doc="k nearest landmarks in layers 2..L; None: the landmark-codes graph's k "
                  "(else 5).",
        check=graphclust.optional(graphclust.integer(1)))
    layer_sigma: object = graphclust.param(
        None, doc="Gaussian bandwidth σ in layers 2..L; None: the landmark-codes graph's σ "
                  "(else 1).",
        check=graphclust.optional(graphclust.real(0, low_open=True)))
    embedding: str = graphclust.param(
        "compact", doc="'compact': isometric n×r copy of the last codes; 'codes': the n×m codes Aᵀ.",
        check=graphclust.one_of("compact", "codes"))
    q_reg: float = graphclust.param(
        1e-10, doc="Relative ridge ε·tr(Q)/d added to Q before inverting it (Eq. 5).",
        check=graphclust.real(0, 1, high_open=True))

    def solve(self, graph, X, n_clusters, ctx):
        if not isinstance(graph, graphclust.AnchorGraph):
            raise graphclust.InputError("solver 'dlc' needs an anchor graph (landmark codes)")
        if X is None:
            raise graphclust.InputError("solver 'dlc' needs the features X")
        if graph.anchors is None:  # a given Z without its landmarks
            raise graphclust.InputError("solver 'dlc' needs the graph's landmarks "
                                        "(graph.anchors); a given graph must carry them")
        X = as_float(X)
        n, d = X.shape
        if graph.n != n:
            raise ValueError(f"solver 'dlc': graph has {graph.n} points but X has {n}")
        codes = graph.state if isinstance(graph.state, LandmarkCodesState) else None
        k = self.layer_neighbors or (codes.n_neighbors if codes is not None else 5)
        sigma = self.layer_sigma or (codes.sigma if codes is not None else 1.0)
        m1 = graph.n_anchors
        progress = ctx.progress
        progress.start(self.n_layers * self.n_iter)

        S = _slc.gram(X)
        U = np.asarray(graph.anchors.points, dtype=np.float64)
        Z = graph.Z
        XtZ, ZtZ, z_sq = _slc.sparse_cross(X, Z)
        # M maps X to the current layer's input (compact coordinates): Y_l = X M.
        M = np.eye(d)
        Y = X
        objective, objective_w, recon, layer_of = [], [], [], []
        layers = []
        stopped = False
        done = 0
        for layer in range(self.n_layers):
            t0 = time.perf_counter()
            if layer > 0:
                selector = layer_selector(self.layer_anchors, m1)
                anchors = selector.select(Y, ctx.child(f"dlc.layer{layer + 1}"))
                U = np.asarray(anchors.points, dtype=np.float64)
                Z = gaussian_codes(Y, U, k, sigma)
                XtZ, ZtZ, z_sq = _slc.sparse_cross(Y, Z)

            def on_iter(t, value, _layer=layer):
                progress.step(done + t, self.n_layers * self.n_iter,
                              f"layer {_layer + 1} iteration {t}: objective {value:.6g}")

            # memory-small d×d / m×m algebra: one BLAS thread (LAPACK factorisations
            # of this size gain nothing from threads and lose a lot on a busy machine)
            with threadpool_limits(limits=1, user_api="blas"):
                res = _slc.slc_layer(S, XtZ, ZtZ, z_sq, U, self.lam, self.n_iter, self.tol,
                                     self.q_reg, on_iter=on_iter)
                R = res["R"]
                Vr = _slc.compact_basis(S, R)
            done += res["n_iter"]
            stopped = res["stopped"]
            objective.extend(res["objective"])
            objective_w.extend(res["objective_w"])
            recon.extend(res["reconstruction"])
            layer_of.extend([layer + 1] * res["n_iter"])
            with threadpool_limits(limits=1, user_api="blas"):
                # d×d products on one thread, like the layer algebra above: their last
                # bits feed the next layer's k-means and nearest landmarks (discrete
                # choices), so they must not depend on the thread count
                L = R @ Vr
            layers.append({
                "landmarks": U, "R": R, "W": res["W"], "basis": Vr, "n_anchors": U.shape[0],
                "input_dim": S.shape[0], "rank": Vr.shape[1], "n_iter": res["n_iter"],
                "stopped": stopped, "seconds": time.perf_counter() - t0,
            })
            last = layer == self.n_layers - 1
            if last:
                with threadpool_limits(limits=1, user_api="blas"):
                    M_out = M @ (R if self.embedding == "codes" else L)
                Y = None  # free the previous layer's input before the embedding
                E = _slc.project(X, M_out)
            else:
                with threadpool_limits(limits=1, user_api="blas"):
                    S = L.T @ S @ L
                    M = M @ L
                Y = None
                Y = _slc.project(X, M)
        progress.end()
        return graphclust.Solution(
            embedding=E,
            objective=np.array(objective),
            n_iter=done,
            converged=bool(stopped),
            projection=M_out,
            center=np.zeros(d),
            history={"objective_w": np.array(objective_w),
                     "reconstruction": np.array(recon),
                     "layer": np.array(layer_of)},
            info={"layers": layers, "embedding": self.embedding},
        )
