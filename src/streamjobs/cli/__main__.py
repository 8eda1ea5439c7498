"""``python -m streamjobs.cli`` runs the ``streamjobs`` command."""

from streamjobs.cli.main import main

main()
