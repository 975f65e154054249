"""The capability registry's shortcut: a backend a rule names as honouring its field
whatever the value is not checked against the plan for it (tcplab.backends.capabilities)."""

from __future__ import annotations

import pytest

from tcplab.backends import BACKENDS, capabilities
from tcplab.backends.capabilities import REGISTRY, At
from tcplab.errors import Unsupported
from tcplab.plan import resolve
from tcplab.spec import validate_spec

# A place no plan has, holding a value no field takes, in an empty plan: a rule whose
# answer depended on any of them would fail or refuse here.
NOWHERE = At(path="nowhere.at_all", value=object(), holder={}, plan={})


@pytest.mark.parametrize("rule", REGISTRY, ids=lambda rule: rule.field)
def test_a_backend_a_rule_calls_unconditional_honours_any_value(
    rule: capabilities.Capability,
) -> None:
    assert rule.unconditional <= set(BACKENDS)
    for backend in rule.unconditional:
        assert rule.honours(backend, NOWHERE)


def test_the_shortcut_still_refuses_what_a_backend_does_not_honour() -> None:
    plan = resolve(
        validate_spec(
            {
                "hosts": [{"name": "a", "tcp": {"cc": "bbr"}}, {"name": "b"}],
                "links": [{"rate": "1Mbps", "delay": "1ms"}],
            }
        )
    )
    capabilities.check(plan, "sim")
    with pytest.raises(Unsupported, match=r"hosts\.0\.tcp\.cc"):
        capabilities.check(plan, "model")


def test_emu_refuses_undo_false_only_where_linux_could_undo() -> None:
    # Linux tells a spurious reduction by D-SACKs (with SACK) or timestamps and always
    # undoes it; with neither it can tell nothing, so undo = false is what it does.
    def plan(**tcp: object) -> dict:
        host = {"tcp": {"undo": False, **tcp}}
        return resolve(
            validate_spec(
                {
                    "hosts": [{"name": "a", **host}, {"name": "b", **host}],
                    "links": [{"rate": "1Mbps", "delay": "1ms"}],
                }
            )
        )

    with pytest.raises(Unsupported, match=r"hosts\.0\.tcp\.undo: .* set undo = true"):
        capabilities.check(plan(), "emu")
    capabilities.check(plan(sack=False, timestamps=False, loss_recovery="classic"), "emu")
    capabilities.check(plan(), "sim")
