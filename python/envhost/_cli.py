"""The ``envhost`` command of the wheel: the same command as the ``envhost`` binary."""
import sys

from ._envhost import cli


def main() -> None:
    """Runs ``envhost`` with this process's arguments and exits with its status."""
    raise SystemExit(cli(["envhost", *sys.argv[1:]]))
