"""Print the shell commands of README.md's "Set up" section, one per line, as written.

``.ci/run`` runs exactly these in a fresh virtual environment before anything else, so CI
meets what a newcomer meets: the README's set-up and test commands, with only the extras
they name. ``tests/core/test_core_test_tiers.py`` checks that the section holds both.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def setup_commands(readme: str) -> list[str]:
    """The ``bash`` blocks of the ``## Set up`` section of ``readme``, one command each
    (a block's lines joined, comments and blank lines left out)."""
    section = re.search(r"^## Set up\n(.*?)(?=^## )", readme, re.S | re.M)
    if section is None:
        raise SystemExit("README.md has no '## Set up' section")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section.group(1), re.S):
        lines = [line for line in block.splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        commands.append(" ".join(lines).replace("\\ ", " "))
    return commands


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    for command in setup_commands(text):
        sys.stdout.write(command + "\n")
