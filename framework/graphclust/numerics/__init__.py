"""graphclust's shared numerics, called by every bundle (as scikit-learn's estimators call
``sklearn.utils``).

========================  ==========================================================
module                    what it holds
========================  ==========================================================
:mod:`.eigen`             leading eigenvectors: the one dense-vs-ARPACK rule; signs
:mod:`.anchor_rows`       Gaussian and adaptive (ULGE Eq. 18) anchor-graph rows
:mod:`.distances`         blocked squared distances, nearest-``s`` search (all or
                          grouped candidates), kNN
:mod:`.rows`              row normalisation (unit length, unit sum); degree
                          scaling without division by zero (``safe_inverse``)
:mod:`.scaling`           the ``scale`` stage: blocked column statistics, fitted
                          :class:`Scaling` reapplied at predict
:mod:`.pca`               principal-component reduction (:class:`Projection`)
:mod:`.pca_routes`        its route: the blocked ``d x d`` covariance or
                          randomized subspace iteration, the cheaper for (n, d, p)
:mod:`.sparse`            sparse rows kept sparse: row/column statistics, column
                          scaling; :func:`densify` within :data:`DENSIFY_LIMIT_BYTES`
:mod:`.csr_rows`          row-wise argmax / margin of a sparse soft assignment, row
                          blocks of a CSR graph of bounded entries
:mod:`.dtypes`            the keep-float32 rule
:mod:`.exact`             :class:`ExactSum`: sums that do not depend on their order
:mod:`.random`            seeded draws (ARPACK start vectors, row samples)
:mod:`.threads`           :func:`fixed_threads`: one BLAS/OpenMP thread for the steps
                          whose last bits feed later decisions (thread-count-free)
:mod:`.hierarchy`         merge sequences over atoms: nested cuts at every ``k``,
                          Ward's merges, persistence (a fit's layers)
:mod:`.confidence`        the framework's noise rule: cluster Gaussians plus a
                          uniform noise component
:mod:`.graph_noise`       the noise rule of a graph input: a node below the
                          configuration model's expectation for its cluster
:mod:`.null_reference`    the null test of an eigengap's ``k``: its spectrum against
                          a Gaussian reference of the data's mean and covariance
========================  ==========================================================

A bundle that needs a numeric another bundle already has moves it here instead of
copying it.
"""

from graphclust.numerics.anchor_rows import (
    adaptive_anchor_rows,
    adaptive_weights,
    gaussian_anchor_rows,
    gaussian_weights,
    rows_to_csr,
    scaled_anchor_rows,
    self_tuning_sigma,
)
from graphclust.numerics.distances import (
    clamp_anchors,
    clamp_neighbors,
    default_block_size,
    distance_reference,
    grouped_nearest,
    knn,
    mean_sq_distance,
    nearest_anchors,
    self_first_neighbors,
    smallest_per_row,
    sparse_pair_sq,
    sparse_sq_distances,
    sq_distances,
)
from graphclust.numerics.sparse import (DENSIFY_LIMIT_BYTES, SPARSE_ROWS_ZEROS, ColumnMap,
                                        as_csr, densify, densify_limit, drop_empty_columns,
                                        float_rows, rows_by_zeros)
from graphclust.numerics.exact import ExactSum
from graphclust.numerics.dtypes import as_dense_float, as_float, common_float_dtype, float_dtype
from graphclust.numerics.eigen import (
    leading_eigenvectors,
    sign_flip,
    singular_values_from_gram,
    use_dense_eigensolver,
)
from graphclust.numerics.random import (
    fit_rows,
    random_block_rows,
    random_orthonormal,
    sample_rows,
    start_vector,
)
from graphclust.numerics.knn_size import exact_knn_seconds, resolve_knn_method
from graphclust.numerics.labels import same_partition
from graphclust.numerics.pca import Projection, fit_pca
from graphclust.numerics.rows import normalize_rows, row_norms, safe_inverse
from graphclust.numerics.csr_rows import (ROW_BLOCK_ENTRIES, row_blocks, sparse_row_argmax,
                                          sparse_row_margin)
from graphclust.numerics.scaling import (SCALE_KINDS, ColumnStats, Scaling, fit_scaling,
                                         magnitude_limits, magnitude_unit,
                                         safe_magnitude_limits,
                                         unit_for_magnitude)
from graphclust.numerics.threads import fixed_threads

__all__ = [
    "DENSIFY_LIMIT_BYTES",
    "as_csr",
    "magnitude_unit",
    "magnitude_limits",
    "unit_for_magnitude",
    "safe_magnitude_limits",
    "ColumnMap",
    "drop_empty_columns",
    "densify",
    "densify_limit",
    "float_rows",
    "sparse_pair_sq",
    "sparse_sq_distances",
    "SCALE_KINDS",
    "ExactSum",
    "ColumnStats",
    "Scaling",
    "fit_scaling",
    "fixed_threads",
    "Projection",
    "fit_pca",
    "rows_by_zeros",
    "ROW_BLOCK_ENTRIES",
    "row_blocks",
    "sparse_row_argmax",
    "sparse_row_margin",
    "SPARSE_ROWS_ZEROS",
    "adaptive_anchor_rows",
    "adaptive_weights",
    "as_dense_float",
    "as_float",
    "clamp_anchors",
    "clamp_neighbors",
    "common_float_dtype",
    "default_block_size",
    "float_dtype",
    "gaussian_anchor_rows",
    "scaled_anchor_rows",
    "gaussian_weights",
    "grouped_nearest",
    "knn",
    "leading_eigenvectors",
    "mean_sq_distance",
    "distance_reference",
    "nearest_anchors",
    "normalize_rows",
    "same_partition",
    "exact_knn_seconds",
    "resolve_knn_method",
    "random_block_rows",
    "random_orthonormal",
    "row_norms",
    "rows_to_csr",
    "safe_inverse",
    "fit_rows",
    "sample_rows",
    "self_first_neighbors",
    "self_tuning_sigma",
    "sign_flip",
    "singular_values_from_gram",
    "smallest_per_row",
    "sq_distances",
    "start_vector",
    "use_dense_eigensolver",
]
