"""The README's ``graphclust run`` lines give a good result as written: on digits and
USPS they find 10 ± 1 clusters (digits and USPS have ten classes), whether the line
gives ``--n-clusters`` or the pipeline estimates it.

Each line is taken from README.md itself (the blocks ``tests/docs/test_code_blocks.py``
finds, without a ``not-run`` or ``slow-run`` marker), run in a temporary folder holding
the README's spec files, with ``--json --quiet`` added to read the result. USPS comes
from the data folder; without it its lines are skipped with that reason.
"""

from __future__ import annotations

import json
import shlex

import pytest
from graphclust.cli import main
from test_code_blocks import FILE_NAME, ROOT, blocks_of, graphclust_pieces

README = ROOT / "README.md"
#: The README's data sets with ten classes, and the clusters a good result finds.
TEN_CLASSES = ("digits", "usps")
TARGET, SLACK = 10, 1


def _dataset(argv: list[str]) -> str | None:
    return argv[argv.index("--dataset") + 1] if "--dataset" in argv else None


def readme_runs() -> list[list[str]]:
    """The argv of every README ``graphclust run`` line on digits or USPS."""
    out = []
    for block in blocks_of(README):
        if block.kind != "console" or block.marker is not None:
            continue
        for command in block.commands():
            for piece in graphclust_pieces(command):
                argv = shlex.split(piece, comments=True)
                if argv[:2] == ["graphclust", "run"] and _dataset(argv) in TEN_CLASSES:
                    out.append(argv[1:])
    return out


RUNS = readme_runs()


def test_the_readme_has_run_lines_on_digits_and_usps():
    """The extraction sees the README's lines (else the test below would check nothing)."""
    assert len(RUNS) >= 3 and {_dataset(a) for a in RUNS} == set(TEN_CLASSES)


@pytest.mark.slow  # the auto line runs UMAP+HDBSCAN on digits: 20-100 s on two cores
@pytest.mark.parametrize("argv", RUNS, ids=[" ".join(a) for a in RUNS])
def test_readme_run_line_finds_ten_clusters(argv, tmp_path, monkeypatch, capsys, request):
    if _dataset(argv) == "usps":
        request.getfixturevalue("data_dir")  # skips, with the reason, without the folder
    if "--plot" in argv:
        pytest.importorskip("matplotlib", reason="--plot needs the plot extra")
    for block in blocks_of(README):  # the spec files the README has the reader save
        if block.kind == "file":
            name = FILE_NAME.match(block.code.splitlines()[0].strip()).group(1)
            (tmp_path / name).write_text(block.code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    extra = [a for a in ("--json", "--quiet") if a not in argv]
    code = main([*argv, *extra])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    k = result["n_clusters"]
    assert abs(k - TARGET) <= SLACK, (
        f"{' '.join(argv)}: k = {k} ({result['n_clusters_from']}), scores {result['scores']}")
    assert len(result["cluster_sizes"]) == k and min(result["cluster_sizes"]) > 0
