"""Twenty-five emu runs, some ended by SIGINT or SIGKILL of the runner midway, five of them
through a PEP (a third namespace with a relay in it): afterwards none of their
namespaces, TUN devices or processes is left (after `tcplab emu cleanup`'s function for
the runners killed with SIGKILL, which cannot clean up themselves).
Needs root (CI has it), TUN devices and network namespaces.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from tcplab.emu import cleanup, leftovers

RUNNER = str(Path(__file__).with_name("emu_runner.py"))
# (how the run ends, how many): normal ends, Ctrl-C and SIGKILL of the runner mid-run;
# "+pep" runs through a PEP.
ENDINGS = ["normal"] * 10 + ["SIGINT"] * 3 + ["SIGTERM"] * 2 + ["SIGKILL"] * 5
ENDINGS += ["normal+pep"] * 2 + ["SIGINT+pep", "SIGTERM+pep", "SIGKILL+pep"]
BATCH = 5


def namespaces_of(pid: int) -> list[str]:
    return [n for n in leftovers() if n.startswith(f"tcplab-{pid}-")]


def children_of(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def wait_for_traffic(runner: subprocess.Popen[str], pep: bool, timeout_s: float = 30) -> set[int]:
    """Wait until the runner's namespaces exist and both measurement processes run (and
    the relay, through a PEP)."""
    deadline = time.monotonic() + timeout_s
    count = 3 if pep else 2
    while time.monotonic() < deadline:
        kids = children_of(runner.pid)
        if len(namespaces_of(runner.pid)) == count and len(kids) >= count:
            time.sleep(0.5)  # into the transfer itself
            return kids | children_of(runner.pid)
        time.sleep(0.05)
    raise AssertionError("the runner never started its transfer")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_no_namespace_device_or_process_outlives_a_run() -> None:
    started: list[tuple[str, subprocess.Popen[str], set[int]]] = []
    for first in range(0, len(ENDINGS), BATCH):
        batch = []
        for ending in ENDINGS[first : first + BATCH]:
            duration = "1" if ending.startswith("normal") else "30"
            pep = ["pep"] if ending.endswith("+pep") else []
            runner = subprocess.Popen(
                [sys.executable, RUNNER, duration, *pep], stdout=subprocess.PIPE, text=True
            )
            batch.append((ending, runner))
        for ending, runner in batch:
            how = ending.removesuffix("+pep")
            kids = wait_for_traffic(runner, ending.endswith("+pep")) if how != "normal" else set()
            if how != "normal":
                runner.send_signal(getattr(signal, how))
            runner.communicate(timeout=60)
            started.append((ending, runner, kids))
    for ending, runner, _ in started:
        if ending.startswith("normal"):
            assert runner.returncode == 0, ending
    killed = {runner.pid for ending, runner, _ in started if ending.startswith("SIGKILL")}
    # A runner killed with SIGKILL leaves its namespaces; cleanup removes exactly those.
    time.sleep(0.5)
    removed = cleanup()
    assert {n.split("-")[1] for n in removed} <= {str(pid) for pid in killed}
    for ending, runner, kids in started:
        assert namespaces_of(runner.pid) == [], ending
        assert not [pid for pid in kids if alive(pid)], ending
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert "tcplab" not in links
