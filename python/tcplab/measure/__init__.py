"""Real-socket traffic tools: `tcplab measure server` and `tcplab measure client`.

They run between two namespaces of the emulator (the `emu` backend) or between two real
machines, and need nothing but Python's standard library and Linux. See docs/cli.md.
"""
