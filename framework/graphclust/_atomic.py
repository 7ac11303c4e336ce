"""One file written atomically: under a temporary name in its folder, then renamed.

The rule of every output graphclust writes (nothing a user owns is half-written or lost):
the command line's labels and reports (:mod:`graphclust._cli_common`) and the labels of
a graph keyed by node id (:mod:`graphclust._graphio`) go through :func:`atomic_file`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_file"]


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[str]:
    """The temporary path to write ``path``'s content to; on success it gets the user's
    usual mode (``0o666`` minus the umask, not a temporary file's ``0o600``) and is
    renamed over ``path``; on any failure it is removed and ``path`` is untouched."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
