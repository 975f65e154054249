"""`python -m tcplab` is the `tcplab` command."""

from tcplab.cli import main

# Guarded: the sweep's worker processes import the main module again, and must not start
# another tcplab there.
if __name__ == "__main__":
    main()
