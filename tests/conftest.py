"""Shared fixtures."""

from __future__ import annotations

import pytest

from pipelines.settings import Params, load_params
from tests.support.snapshot import ROOT


@pytest.fixture(scope="session")
def params() -> Params:
    """The project's own params.yaml."""
    return load_params(ROOT / "params.yaml")


@pytest.fixture()
def no_network():
    """The socket guard: use ``with no_network(): ...`` around code that must stay offline."""
    from tests.support.network import no_network as guard

    return guard


@pytest.fixture(scope="module")
def no_network_module():
    """The socket guard, for module-scoped fixtures."""
    from tests.support.network import no_network as guard

    return guard
