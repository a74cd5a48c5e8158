"""``python -m envhost``: the ``envhost`` command."""
from ._cli import main

main()
