"""`tcplab sweep`: every point of a scenario's [sweep] into a results store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from tcplab.cli.common import (
    INTERRUPTED,
    RUNS_FAILED,
    console,
    fail,
    print_json,
    print_table,
)
from tcplab.errors import TcplabError

if TYPE_CHECKING:
    from tcplab.experiments.executors import ExecutorName
    from tcplab.experiments.store import Store


def sweep_command(
    file: Annotated[Path, typer.Argument(help="scenario file (TOML)", show_default=False)],
    jobs: Annotated[
        int | None,
        typer.Option("-j", "--jobs", min=1, help="local processes [default: one per CPU]"),
    ] = None,
    executor: Annotated[str, typer.Option(help="local or dask")] = "local",
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="run again the runs already stored")
    ] = False,
    out: Annotated[
        Path | None, typer.Option(help="results directory [default: results/<name>]")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the points as one JSON object instead")
    ] = False,
    backend: Annotated[
        str | None, typer.Option(help="sim, model or emu; overrides the scenario's backend")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="overrides the scenario's seed")] = None,
) -> None:
    """Run every point of a scenario's [sweep], `repetitions` times each, into a results store.

    Runs already stored are not run again, so an interrupted sweep resumes where it stopped.
    """
    sweep_file(
        file,
        out=out,
        json_output=json_output,
        backend=backend,
        seed=seed,
        jobs=jobs,
        executor=executor,
        scheduler=scheduler,
        force=force,
    )


def sweep_file(
    file: Path,
    *,
    out: Path | None,
    json_output: bool,
    backend: str | None,
    seed: int | None,
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    force: bool = False,
) -> None:
    # The store's packages (the 'store' extra) load with the command, not with `tcplab --help`.
    from tcplab.cli.sweep_output import SweepProgress, points_json, points_table
    from tcplab.experiments import sweeps

    try:
        plan = sweeps.plan_sweep(file, out=out, force=force, backend=backend, seed=seed)
    except TcplabError as error:
        raise fail(error) from None
    store = plan.store
    total = len(plan.runs)
    show_progress = not json_output and console.is_terminal
    try:
        with SweepProgress(console, total, total - len(plan.pending), show_progress) as progress:
            # run_tasks refuses a name that is neither.
            name = cast("ExecutorName", executor)
            sweeps.run_sweep(plan, name, jobs, scheduler, on_run=progress)
    except TcplabError as error:
        raise fail(error) from None
    except KeyboardInterrupt:
        stored = len(store.run_ids() & {run.run_id for run in plan.runs})
        typer.echo(
            f"interrupted: {stored} of {total} runs are stored in {store.directory}; run the"
            " same command again to resume",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    stored_ids = store.run_ids()
    failed = [run for run in plan.runs if run.run_id not in stored_ids]
    if json_output:
        counts = {"total": total, "ran": len(plan.pending), "failed": len(failed)}
        print_json(
            {"directory": str(store.directory), "runs": counts, "points": points_json(store)}
        )
    else:
        print_table(points_table(store, store_title(store)))
        console.print(
            f"{total - len(failed)} of {total} runs stored in {store.directory};"
            f" {len(plan.pending)} ran now"
        )
    if failed:
        errors = store.failures().set_index("run_id")["error"]
        typer.echo(
            f"error: {len(failed)} of {total} runs failed, e.g. {failed[0].run_id}:"
            f" {errors.get(failed[0].run_id)}; the errors are in {store.directory}/failures/,"
            " and running the sweep again retries them",
            err=True,
        )
        raise typer.Exit(RUNS_FAILED)


def store_title(store: Store) -> str:
    manifest = store.manifest()
    title = f"{manifest['name']} ({manifest['backend']}"
    repetitions = manifest["repetitions"]
    return title + (f", mean ± 95 % CI of {repetitions} repetitions)" if repetitions > 1 else ")")
