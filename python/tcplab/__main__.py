"""`python -m tcplab` is the `tcplab` command."""

from tcplab.cli import main

main()
