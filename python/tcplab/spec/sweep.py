"""A grid of field values to run a scenario over ([sweep])."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

from tcplab.spec.fields import StrictModel


def _at_least_one_value(values: list[Any]) -> list[Any]:
    if not values:
        raise ValueError("an empty list; give at least one value")
    return values


SweepValues = Annotated[
    list[Any],
    AfterValidator(_at_least_one_value),
    WithJsonSchema({"type": "array", "minItems": 1}),
]


class Sweep(StrictModel):
    """Field paths (e.g. "hosts.0.tcp.sndbuf") mapped to the lists of values they take."""

    # The paths are the table's own keys, as people write them, so they are pydantic extras.
    # Whether a path and its values fit the scenario is checked when the sweep is expanded
    # (tcplab.experiments.sweeps.expand), since that needs the rest of the scenario.
    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, SweepValues] = Field(init=False)

    mode: Literal["grid", "zip"] = Field(
        "grid", description="grid: every combination of the lists; zip: the i-th values together"
    )

    @property
    def parameters(self) -> dict[str, list[Any]]:
        """The swept paths and their values, in the order they were written."""
        return dict(self.__pydantic_extra__ or {})

    @model_validator(mode="after")
    def _lists_fit_the_mode(self) -> Sweep:
        parameters = self.parameters
        if not parameters:
            raise ValueError('no field paths to sweep; add e.g. "links.0.delay" = ["10ms", "20ms"]')
        lengths = {len(values) for values in parameters.values()}
        if self.mode == "zip" and len(lengths) > 1:
            counts = ", ".join(f'"{path}" has {len(values)}' for path, values in parameters.items())
            raise ValueError(
                f'mode = "zip" pairs the i-th values, so the lists need equal lengths: {counts}'
            )
        return self
