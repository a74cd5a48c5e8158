"""The ``envhost`` command of the wheel: the same command as the ``envhost`` binary."""
import signal
import sys

from ._envhost import cli


def main() -> None:
    """Runs ``envhost`` with this process's arguments and exits with its status. SIGINT is left
    to the command (a server shuts down on it), not turned into a KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise SystemExit(cli(["envhost", *sys.argv[1:]]))
