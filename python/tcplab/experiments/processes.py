"""Process helpers shared by the executors and the result store."""

from __future__ import annotations

import os


def is_alive(pid: int) -> bool:
    """Whether a process with this id exists (POSIX: signal 0 checks without sending)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True
