"""``python -m verilayout.cli`` runs the command line (Ctrl-C at any point: one line, exit 130)."""
import sys


def run() -> None:
    """Run :func:`verilayout.cli.main.main` and exit with its code."""
    try:
        from verilayout.cli.main import main  # deferred: Ctrl-C while importing is one line too
        code = main()
    except KeyboardInterrupt:
        print("error: interrupted (Ctrl-C)", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    run()
