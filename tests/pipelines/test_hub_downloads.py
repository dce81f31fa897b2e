"""Models and datasets come from the Hub at run time only when the user opts in."""

from __future__ import annotations

import pytest
from huggingface_hub import constants

from builders.lveval.settings import HubSource
from pipelines.embed.encoder import Encoder
from pipelines.embed.models import ModelError, load_tokenizer
from pipelines.embed.registry import resolve
from pipelines.errors import ParamsError
from pipelines.hub_downloads import ENV
from pipelines.sources.hub.qa_sets import hub_items
from tests.support.network import no_network

MISSING = "benchsmith-tests/no-such-model"


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Lift make's HF_HUB_OFFLINE so that only benchsmith's own default keeps loads local.

    huggingface_hub also asks the Hub once per process for its agent registry (user-agent
    metadata, not model data); an empty one stands in so that the socket guard sees only
    model and dataset requests."""
    from huggingface_hub.utils import _detect_agent

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(_detect_agent, "_registry", _detect_agent._EMPTY_REGISTRY)
    monkeypatch.delenv(ENV, raising=False)
    return monkeypatch


def test_a_hub_tokenizer_is_not_downloaded_by_default(online):
    with no_network() as attempts, pytest.raises(ModelError, match=f"{ENV}=1") as err:
        load_tokenizer(MISSING)
    assert attempts == [] and MISSING in str(err.value)


def test_a_registry_encoder_not_on_disk_names_the_opt_in(online):
    with no_network() as attempts, pytest.raises(ModelError, match=f"(?s)'e5'.*{ENV}=1"):
        Encoder(resolve("e5"), device="cpu")
    assert attempts == []


def test_a_hub_qa_dataset_is_refused_by_default_naming_the_key(online):
    source = HubSource(path="benchsmith-tests/no-such-dataset", dataset="remote")
    with no_network() as attempts, pytest.raises(ParamsError, match=rf"0\]\.path: .*{ENV}=1"):
        hub_items(source, "[lveval -> hub_sources -> 0]")
    assert attempts == []


def test_opting_in_lets_a_hub_id_reach_the_network(online):
    online.setenv(ENV, "1")
    with no_network() as attempts, pytest.raises(ModelError):
        load_tokenizer(MISSING)
    assert attempts, "with downloads on, the loader asks the Hub"
