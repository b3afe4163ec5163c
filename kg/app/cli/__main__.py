"""``python -m kg.app.cli`` is the ``strata`` command."""

from kg.app.cli import main

main()
