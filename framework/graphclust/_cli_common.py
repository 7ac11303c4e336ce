"""What the command line's subcommands share: ``--set`` parsing, the plan of the files a
run writes (checked before any work) and atomic writes.

:mod:`graphclust.cli` and the graph runner (:mod:`graphclust._cli_graph`) both import it,
so neither imports the other. The rules it enforces: nothing a user owns is lost — an
output is written under a temporary name then renamed, never over an input, a spec or an
existing folder, and an unusable output is refused before any work.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tomllib
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np

from graphclust._atomic import atomic_file
from graphclust._errors import InputError

__all__ = ["GRAPH_LAYER_FORMATS", "LAYER_FORMATS", "layers_path", "plan_outputs", "write_labels", "write_layers"]


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


_KEY_PART = re.compile(r"^[A-Za-z0-9_-]+$")


def _overrides(pairs: list[str]) -> dict:
    """``--set SECTION.PARAM=VALUE`` strings as a nested overrides dict.

    Every malformed string is a :class:`~graphclust.SpecError` naming it: no ``=``, an
    empty or odd path component, or a key that both sets a value and descends into it
    (``--set graph=3 --set graph.k=1``).
    """
    from graphclust._errors import Problem, SpecError

    out: dict[str, Any] = {}
    problems: list[Problem] = []
    owner: dict[tuple[str, ...], str] = {}  # path -> the --set string that gave it a value
    for pair in pairs:
        if "=" not in pair:
            problems.append(Problem(f"--set {pair}", "expected SECTION.PARAM=VALUE"))
            continue
        key, value = pair.split("=", 1)
        parts = key.strip().split(".")
        if not all(_KEY_PART.match(p) for p in parts):
            problems.append(Problem(f"--set {key.strip() or '(empty)'}",
                                    "the key must be dot-separated names "
                                    "(letters, digits, '-', '_'), e.g. graph.n_neighbors"))
            continue
        node = out
        clash = None
        for depth, p in enumerate(parts[:-1]):
            prefix = tuple(parts[:depth + 1])
            child = node.get(p)
            if child is None:
                child = node[p] = {}
            if not isinstance(child, dict):
                clash = owner.get(prefix, ".".join(prefix))
                break
            node = child
        if clash is None and isinstance(node.get(parts[-1]), dict) and tuple(parts) not in owner:
            clash = f"--set {'.'.join(parts)}.<param>"
        if clash is not None:
            problems.append(Problem(f"--set {key.strip()}",
                                    f"conflicts with {clash}: a key cannot both hold a value "
                                    "and have parameters set under it"))
            continue
        node[parts[-1]] = _parse_value(value.strip())
        owner[tuple(parts)] = f"--set {pair}"
    if problems:
        raise SpecError(problems, title="invalid --set")
    return out


def _json_safe(value: Any) -> Any:
    """``value`` with floats that JSON cannot hold (nan, inf) as strings."""
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` under a temporary name, then rename (never half-written;
    :func:`graphclust._atomic.atomic_file`)."""
    with atomic_file(path) as tmp, os.fdopen(os.open(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
        fh.write(data)


def write_labels(path: str | os.PathLike, labels: np.ndarray, confidence=None) -> Path:
    """Write labels atomically (:func:`_atomic_write`): ``.npy`` as NumPy binary, anything
    else (``.csv``, ``.txt``) as text, one label a line. With ``confidence``, a ``.csv``
    file has a header and two columns, ``label,confidence`` (the other formats have no
    columns: the caller writes the confidence as a second array,
    :func:`graphclust.io.confidence_path`)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".npy":
        buf = BytesIO()
        np.save(buf, labels)
        data = buf.getvalue()
    elif confidence is not None and out.suffix.lower() == ".csv":
        conf = np.asarray(confidence, dtype=np.float64)
        data = ("label,confidence\n" + "".join(
            f"{int(v)},{c:.9g}\n" for v, c in zip(labels, conf, strict=True))).encode()
    elif np.issubdtype(np.asarray(labels).dtype, np.floating):  # a confidence array
        data = "".join(f"{float(v):.9g}\n" for v in labels).encode()
    else:
        data = "".join(f"{int(v)}\n" for v in labels).encode()
    _atomic_write(out, data)
    return out


def _input_paths(args) -> list[Path]:
    """The user's files this run reads: the data set (a path, or the data-folder file a
    name stands for) and the spec file."""
    from graphclust.data import find_data_dir

    paths = [Path(args.dataset or args.graph)]
    if args.spec:
        paths.append(Path(args.spec))
    if args.dataset and not Path(args.dataset).exists():
        with contextlib.suppress(InputError, OSError):
            folder = find_data_dir(args.data_dir)
            if folder is not None:
                paths += [folder / args.dataset, *(folder / f"{args.dataset}{ext}" for ext in
                                                   (".npz", ".mat", ".csv", ".svm", ".libsvm"))]
    return [p for p in paths if p.exists()]


def _same_or_inside(path: Path, other: Path) -> bool:
    """Whether ``path`` is ``other`` (also through links) or lies inside it."""
    a, b = path.resolve(), other.resolve()
    if a == b or b in a.parents:
        return True
    with contextlib.suppress(OSError):
        return path.exists() and os.path.samefile(path, other)
    return False


def _is_report(path: Path) -> bool:
    """Whether ``path`` holds the JSON report of an earlier run (which may be replaced)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"cluster_sizes", "resolved_spec", "n_samples"} <= set(data)


def _check_writable(path: Path, option: str) -> None:
    """Refuse an output that is an existing folder or whose folder cannot be written."""
    if path.is_dir():
        raise InputError(f"{option} {str(path)!r} is an existing folder; graphclust never "
                         "replaces a folder: remove it or choose another name")
    parent = path.parent
    while not parent.exists():
        if parent.is_symlink():  # a dangling link is not a folder that can be made
            break
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"{option} {str(path)!r}: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{option} {str(path)!r}: the folder {str(parent)!r} is not writable")


def plan_outputs(args, chunked: bool) -> dict[str, Path]:
    """Every file the run will write, by option (``--output``, ``report``, ``--plot``),
    checked before any work: :class:`~graphclust.InputError` (exit 2) for an output that
    is the data set or the spec (or lies inside them), two outputs on one path or one
    inside another (a file used as a folder), an existing folder, an unwritable folder, or a report that would replace a file that is
    not an earlier run's report."""
    outputs: dict[str, Path] = {}
    if args.output:
        outputs["--output"] = Path(args.output)
        if chunked or Path(args.output).suffix.lower() in (".zarr", ".parquet"):
            outputs["report"] = Path(args.output).with_suffix(".json")
        from graphclust.io import confidence_path

        second = confidence_path(args.output)  # a format without columns: a second array
        if second is not None:
            outputs["confidence"] = second
        if getattr(args, "layers", False) and Path(args.output).name not in ("", ".."):
            outputs["layers"] = layers_path(  # (no file name: a folder, refused)
                args.output, GRAPH_LAYER_FORMATS if getattr(args, "graph", None) else
                LAYER_FORMATS)
    if args.plot:
        outputs["--plot"] = Path(args.plot)
    inputs = _input_paths(args)
    seen: dict[Path, str] = {}
    for option, path in outputs.items():
        what = (f"the JSON report {str(path)!r} (beside --output)" if option == "report"
                else f"the {option} {str(path)!r} (beside --output)"
                if option in ("confidence", "layers") else f"{option} {str(path)!r}")
        for given in inputs:
            if _same_or_inside(path, given) or _same_or_inside(given, path):
                kind = ("--spec" if args.spec and given == Path(args.spec) else
                        "--graph" if args.graph else "--dataset")
                raise InputError(f"{what} would overwrite the input {kind} {str(given)!r}; "
                                 "choose another output name")
        key = path.resolve()
        if key in seen:
            raise InputError(f"{what} is also {seen[key]}: two outputs of one run must have "
                             "different names")
        for other, other_what in seen.items():  # a file output used as another's folder
            if other in key.parents or key in other.parents:
                inner, outer = (what, other_what) if other in key.parents else (other_what, what)
                raise InputError(f"{inner} would lie inside {outer}, which the run writes as a "
                                 "file: choose output names in different places")
        seen[key] = what
        _check_writable(path, {"report": "the JSON report", "confidence": "the confidence",
                               "layers": "the layers"}.get(option, option))
        if option == "report" and path.exists() and not _is_report(path):
            raise InputError(f"{what}: {str(path)!r} exists and is not the report of an "
                             "earlier run; graphclust will not overwrite it: choose another "
                             "--output name or move the file")
    return {option: _effective(path) for option, path in outputs.items()}


#: Formats the layers are written in (one column a layer; ``.npy``: an ``n x L`` array).
LAYER_FORMATS = (".csv", ".txt", ".npy")
#: Formats the layers of a graph file are written in: a ``node`` column and one column a
#: layer (``.npy``: an ``n x L`` array, node ``i`` row ``i`` of a ``.mtx``/``.npz`` graph).
GRAPH_LAYER_FORMATS = (".csv", ".tsv", ".parquet", ".npy")


def layers_path(output: str | os.PathLike, formats: tuple[str, ...] = LAYER_FORMATS) -> Path:
    """Where ``--layers`` writes every layer beside ``--output`` (``l.csv`` →
    ``l.layers.csv``): refused before any work for a format not in ``formats`` (one
    written chunk by chunk)."""
    out = Path(output)
    if out.suffix.lower() not in formats:
        raise InputError(f"--layers writes every layer beside --output as "
                         f"{', '.join(formats)} (an in-memory fit's layers); "
                         f"--output {str(output)!r} is written chunk by chunk")
    return out.with_name(f"{out.stem}.layers{out.suffix}")


def write_layers(path: Path, layers: list[tuple[int, float, np.ndarray]]) -> Path:
    """Every layer's labels (``layers``: ``(k, stability, labels)`` coarse to fine),
    atomically: ``.npy`` an ``n x L`` int64 array, else text with a header ``k=K`` per
    column and one row a point."""
    table = np.column_stack([labels for _, _, labels in layers]).astype(np.int64)
    if path.suffix.lower() == ".npy":
        buf = BytesIO()
        np.save(buf, table)
        data = buf.getvalue()
    else:
        sep = "," if path.suffix.lower() == ".csv" else " "
        head = sep.join(f"k={k}" for k, _, _ in layers) + "\n"
        data = (head + "".join(sep.join(map(str, row)) + "\n" for row in table.tolist())).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, data)
    return path


def _effective(path: Path) -> Path:
    """The path a write lands on: ``sub/../l.npy`` is ``l.npy`` (resolved as the file
    system does), so no folder ``sub`` is made on the way."""
    return Path(os.path.realpath(path)) if ".." in path.parts else path


def _note(notes: list[str]):
    """A function that prints a line about the input to stderr and keeps it for --json."""
    def note(text: str) -> None:
        notes.append(text)
        print(f"note: {text}", file=sys.stderr)

    return note


def _write_output(what: str, path, write):
    """``write()``, a failure to write (full disk, permissions changed meanwhile) as an
    :class:`~graphclust.InputError` naming the file (the temporary is already removed)."""
    try:
        return write()
    except OSError as exc:
        raise InputError(f"cannot write {what} {str(path)!r}: "
                         f"{exc.strerror or type(exc).__name__}") from None


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (:func:`_atomic_write`)."""
    _atomic_write(path, text.encode())
