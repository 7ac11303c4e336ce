"""``graphclust run --graph FILE``: cluster a graph file, write labels keyed by node id.

Part of the command line (:mod:`graphclust.cli`): the graph is read by
:func:`graphclust.io.read_graph` and fitted as ``GraphClustering(spec,
graph="precomputed").fit(A)``, the same call a Python user makes, so the labels are
those of that call. The command line's safety rules apply unchanged
(:func:`graphclust._cli_common.plan_outputs`): every output is checked before any work, never
the graph file, the spec or an existing folder, and written under a temporary name then
renamed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from graphclust._errors import InputError

__all__ = ["run_graph", "check_graph_options"]

#: Options of ``run`` that read features or labels, which a graph has not.
_NOT_WITH_GRAPH = (("data_dir", "--data-dir"), ("labels", "--labels"),
                   ("no_labels", "--no-labels"), ("scheduler", "--scheduler"),
                   ("chunk_mb", "--chunk-mb"), ("plot", "--plot"))


def check_graph_options(args) -> None:
    """Refuse, before any work, the options of ``run`` that do not apply to a graph and
    an ``--output`` that cannot hold node ids."""
    from graphclust._graphio import EDGE_LIST_FORMATS, GRAPH_FORMATS, LABEL_FORMATS

    given = [flag for attr, flag in _NOT_WITH_GRAPH if getattr(args, attr, None)]
    if args.n_clusters == "labels":
        given.append("--n-clusters labels")
    if given:
        raise InputError(f"--graph: {', '.join(given)} read features or labels of a data set; "
                         "a graph file has neither (leave them out)")
    suffix = Path(args.graph).suffix.lower()
    if suffix not in GRAPH_FORMATS:
        raise InputError(f"--graph {args.graph!r}: a graph is read from "
                         f"{', '.join(GRAPH_FORMATS)} (by the file's suffix)")
    if args.output:
        out = Path(args.output).suffix.lower()
        index_keyed = suffix not in EDGE_LIST_FORMATS  # .mtx / .npz: node i is row i
        if out not in LABEL_FORMATS and not (out == ".npy" and index_keyed):
            also = " (or .npy: node i is row i of a .mtx/.npz graph)" if index_keyed else ""
            raise InputError(f"--output {args.output!r}: labels of a graph are written with "
                             f"their node ids as {', '.join(LABEL_FORMATS)}{also}")
        if out == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise InputError(f"--output {args.output!r}: writing parquet needs pyarrow: "
                                 'pip install pyarrow (or "graphclust[dask]")') from None


def run_graph(args) -> int:
    """``graphclust run --graph FILE``: returns the exit status (errors raise)."""
    from graphclust import GraphClustering
    from graphclust._graphio import read_graph, write_node_labels, write_node_layers
    from graphclust._plan import refuse_feature_parts
    from graphclust._cli_common import (_json_safe, _note, _overrides, _write_output,
                                        _write_text, plan_outputs, write_labels,
                                        write_layers)

    check_graph_options(args)
    outputs = plan_outputs(args, False)  # the user's files first, before any work
    notes: list[str] = []
    spec = args.preset or args.spec or "auto"
    overrides = _overrides(args.set or [])
    if args.metrics is not None:
        overrides["metrics"] = [{"name": m} for m in args.metrics.split(",") if m]
    model = GraphClustering(spec, n_clusters=args.n_clusters, random_state=args.seed,
                            graph="precomputed", verbose=not args.quiet, n_jobs=args.n_jobs,
                            overrides=overrides, k_max=args.k_max, noise=args.noise)
    refuse_feature_parts(model)  # before the graph is read
    A, nodes = read_graph(args.graph)
    model.fit(A)
    selection = model.k_selection_
    if selection.estimated:
        _note(notes)(f"k = {model.n_clusters_} ({selection.describe()})")
    labels = np.asarray(model.labels_)
    confidence = np.asarray(model.confidence_, dtype=np.float64)
    sizes = np.bincount(labels[labels >= 0], minlength=int(model.n_clusters_))
    info = model.graph_.info
    result = {
        "graph": str(args.graph),
        "spec": spec if isinstance(spec, str) else "<spec>",
        "n_samples": int(A.shape[0]),
        "n_edges": int(model.graph_.adjacency.nnz // 2),
        "n_clusters": int(model.n_clusters_),
        "n_clusters_from": ("--n-clusters" if args.n_clusters is not None else
                            "the spec" if selection.method == "given" else "estimated"),
        "k_selection": _json_safe(selection.as_dict()),
        "seed": args.seed,
        "cluster_sizes": sizes.tolist(),
        "dropped": {k: int(info.get(f"dropped_{k}", 0)) for k in ("self_loops", "zeros")},
        "asymmetric_pairs": int(info.get("asymmetric", 0)),
        "timings": model.timings_,
        "mean_confidence": float(confidence.mean()) if confidence.size else 0.0,
        "confidence_source": model.confidence_source_,
        "resolved_spec": _json_safe(model.resolved_spec_),
    }
    if args.noise:
        result["n_noise"] = int(model.n_noise_)
    layers = None
    if args.layers:  # computed from what the fit kept (docs/layers.rst), keyed by node id
        layers = model.layers_.layers()
        result["layers"] = {"source": model.layers_.source,
                            "layers": model.layers_.summary()}
    if notes:
        result["notes"] = notes
    if args.output:
        out = outputs["--output"]
        if out.suffix.lower() == ".npy":
            written = _write_output("the labels", out, lambda: write_labels(out, labels))
        else:
            written = _write_output("the labels", out,
                                    lambda: write_node_labels(out, nodes, labels, confidence))
        result["output"] = str(written)
        if "confidence" in outputs:  # .npy: no columns, the confidence as a second array
            second = outputs["confidence"]
            result["confidence_output"] = str(_write_output(
                "the confidence", second, lambda: write_labels(second, confidence)))
        if layers is not None:
            where = outputs["layers"]
            result["layers_output"] = str(_write_output(
                "the layers", where,
                lambda: (write_layers(where, layers) if where.suffix.lower() == ".npy"
                         else write_node_layers(where, nodes, layers))))
        if "report" in outputs:
            report = outputs["report"]
            result["report"] = str(report)
            _write_output("the JSON report", report,
                          lambda: _write_text(report, json.dumps(result, indent=2) + "\n"))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.graph}: {result['n_samples']} nodes, {result['n_edges']} edges, "
          f"{model.pipeline_!r}")
    if not selection.estimated:
        print(f"k = {model.n_clusters_} (given by {result['n_clusters_from']})")
    print(f"cluster sizes: {' '.join(map(str, sizes))}"
          + (f"; {result['n_noise']} nodes noise (label -1)" if args.noise else ""))
    print("timings: " + ", ".join(f"{k} {v:.2f}s" for k, v in model.timings_.items()))
    if layers is not None:
        print(f"layers: {model.layers_.describe()}")
    if args.output:
        print(f"labels written to {args.output} (columns node, label, confidence)"
              if Path(args.output).suffix.lower() != ".npy" else
              f"labels written to {args.output} (confidence: {result['confidence_output']})")
        if "report" in result:
            print(f"JSON report written to {result['report']}")
    sys.stdout.flush()
    return 0
