"""``python -m aifabric`` runs the CLI."""

from aifabric.cli import main

main()
