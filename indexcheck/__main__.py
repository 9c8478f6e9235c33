"""``python -m indexcheck``: the command line, as the ``indexcheck`` script runs it."""

from .cli import main

if __name__ == "__main__":
    main()
