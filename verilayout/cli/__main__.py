"""``python -m verilayout.cli`` runs the command line."""
import sys

from verilayout.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
