"""``python -m verilayout.cli`` runs the command line."""
import sys

from verilayout.cli.main import main

sys.exit(main())
