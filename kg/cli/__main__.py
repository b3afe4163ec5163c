"""``python -m kg.cli`` is the ``strata`` command."""

from kg.cli import main

main()
