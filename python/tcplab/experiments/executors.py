"""Where a sweep's runs execute: a local process pool, or a Dask distributed cluster.

A task is one run's scenario (a canonical spec dict that carries its seed and backend); its
outcome is the backend's result dict, or the error text if the run raised. Both executors
call the same `execute`, so the same task gives the same result wherever it runs. Outcomes
come back as they finish; the caller stores each one, so stopping early loses only the runs
still in flight.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Literal

from tcplab.api import run
from tcplab.errors import TcplabError
from tcplab.experiments.processes import is_alive
from tcplab.result import RESULT_PARTS

ExecutorName = Literal["local", "dask"]
EXECUTORS: tuple[ExecutorName, ...] = ("local", "dask")
# Seconds to wait for a Dask scheduler to answer before giving up.
DASK_CONNECT_TIMEOUT_S = 10
# How often a local worker checks that the sweep that started it is still there.
PARENT_POLL_S = 0.5


@dataclass(frozen=True)
class Task:
    run_id: str
    spec: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    run_id: str
    result: dict[str, Any] | None
    error: str | None = None


def execute(task: Task) -> Outcome:
    """Run one task; any exception becomes the outcome's error, so a bad point cannot stop a
    sweep (or take a worker down with it)."""
    try:
        result = run(task.spec)
    except TcplabError as error:
        return Outcome(task.run_id, None, str(error))
    except Exception as error:  # noqa: BLE001 - recorded with the run, not swallowed
        return Outcome(task.run_id, None, f"{type(error).__name__}: {error}")
    return Outcome(task.run_id, {part: getattr(result, part) for part in RESULT_PARTS})


def run_tasks(
    tasks: Iterable[Task],
    executor: ExecutorName = "local",
    jobs: int | None = None,
    scheduler: str | None = None,
) -> Generator[Outcome, None, None]:
    """Execute `tasks`, yielding each outcome as it finishes (in no particular order).

    local: a pool of `jobs` processes (default: one per CPU). dask: the cluster whose
    scheduler listens at `scheduler`. Closing the iterator early, or an interrupt while it
    waits, cancels the runs not yet finished.
    """
    tasks = list(tasks)
    if executor == "local":
        if scheduler is not None:
            raise TcplabError("--scheduler is for --executor dask")
        if jobs is not None and jobs < 1:
            raise TcplabError(f"jobs: {jobs} is not a number of processes; give 1 or more")
        return _run_local(tasks, jobs or os.cpu_count() or 1)
    if executor == "dask":
        if scheduler is None:
            raise TcplabError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
        if jobs is not None:
            raise TcplabError(
                "-j is for the local executor; a Dask cluster runs as many runs at once as its"
                " workers have threads"
            )
        return _run_dask(tasks, scheduler)
    raise TcplabError(f"unknown executor {executor!r}; accepted: {', '.join(EXECUTORS)}")


def _init_worker(parent: int) -> None:
    # Ctrl-C reaches the whole process group. The parent decides what happens to a sweep;
    # a worker interrupted on its own would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker blocks on its task queue forever once the parent is gone (it holds the
    # queue's write end itself), so a killed sweep would leave its pool behind: exit then.
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    while is_alive(parent):
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _run_local(tasks: list[Task], jobs: int) -> Generator[Outcome, None, None]:
    if not tasks:
        return
    # forkserver: workers are forked from a clean server process, never from this one,
    # which may be running threads (the progress bar, a Dask client) that fork would copy
    # in whatever state they were in.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(tasks)),
        mp_context=context,
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )
    try:
        # Submitting starts the workers.
        with _interrupts_held(), _main_module_left_out():
            pending: set[Future[Outcome]] = {pool.submit(execute, task) for task in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield _local_outcome(future)
    except BaseException:  # an interrupt, or the caller closing the iterator early
        _stop(pool)
        raise
    pool.shutdown()


@contextlib.contextmanager
def _main_module_left_out() -> Iterator[None]:
    """Start workers that do not run the caller's main module again.

    multiprocessing has each new worker run the parent's `__main__` (by its `__file__`, or
    its module name for `python -m`) so that functions defined there unpickle. A worker
    here runs only tcplab's `execute`, and running the caller's main breaks it: from stdin
    ('<stdin>' is no file), in Jupyter (ipykernel_launcher would start another kernel), or
    from a script that calls tcplab.sweep without an `if __name__ == "__main__":` guard
    (the worker would start a sweep of its own). Hidden while the workers start, the main
    module gives multiprocessing (spawn.get_preparation_data) nothing to run.
    """
    main = sys.modules["__main__"]
    saved: dict[str, Any] = {
        name: main.__dict__[name] for name in ("__file__", "__spec__") if name in vars(main)
    }
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C back until the block is done, then deliver it.

    Submitting starts the workers. A worker the pool has begun to start but not yet
    registered cannot be stopped, and dies with a traceback once the pool is gone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals, and only it may set handlers
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: held.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held and callable(previous):
        previous(signal.SIGINT, None)  # Python's own handler raises KeyboardInterrupt


def _local_outcome(future: Future[Outcome]) -> Outcome:
    try:
        return future.result()
    except BrokenProcessPool:
        # Every run still queued would fail the same way, so stop the sweep rather than
        # record them all as failed.
        raise TcplabError(
            "a worker process died (killed, or out of memory); the runs finished so far are"
            " stored, and running the sweep again resumes"
        ) from None


def _stop(pool: ProcessPoolExecutor) -> None:
    """Shut the pool down now: queued runs are cancelled and running ones killed."""
    # ProcessPoolExecutor can stop a running task only from Python 3.14 on
    # (terminate_workers); before that its table of worker processes is the way in.
    workers = list((pool._processes or {}).values())
    # Workers first: one still starting up would otherwise try to open the queues that
    # shutting the pool down releases, and die with a traceback on the terminal.
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join()
    # wait=True joins the pool's manager thread here. Left running, it races the
    # interpreter's exit: CPython 3.11's _python_exit wakes it without the lock that its
    # wakeup pipe is closed under (gh-125451, fixed in 3.12), and now and then an
    # "Exception ignored ... Bad file descriptor" traceback followed our one-line message.
    pool.shutdown(wait=True, cancel_futures=True)


def _dask_outcome(task: Task, future: Any) -> Outcome:
    """The future's outcome; a task that failed outside `execute` (its worker lost more
    often than the cluster allows) fails its run the same way a raising run does."""
    try:
        outcome: Outcome = future.result()
    except Exception as error:  # noqa: BLE001 - recorded with the run, not swallowed
        return Outcome(task.run_id, None, f"{type(error).__name__}: {error}")
    return outcome


def _run_dask(tasks: list[Task], scheduler: str) -> Generator[Outcome, None, None]:
    # Imported here: Dask takes a second to import, only this executor needs it, and it is
    # an optional part of the installation (the dask extra).
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise TcplabError(
            "--executor dask needs Dask distributed, which this installation lacks:"
            ' pip install "tcplab[dask]"'
        ) from None

    try:
        client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as error:
        raise TcplabError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
    try:
        # pure=False: a key derived from the task would let the cluster hand back a result
        # cached by an earlier sweep, computed by whatever tcplab version its workers had.
        futures = {client.submit(execute, task, pure=False): task for task in tasks}
        try:
            for future in as_completed(futures):
                yield _dask_outcome(futures[future], future)
        finally:
            client.cancel(list(futures))
    finally:
        client.close()
