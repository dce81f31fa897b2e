"""``params.yaml`` loaded into one pydantic model with a key per stage (as the stage table lists
them) and the shared sections, with errors that name the key."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import Field, ValidationError, model_validator

from builders.releases import Release, check_history
from builders.settings import Strict
from builders.summhay.settings import SummhaySettings
from builders.wikigen.settings import WikigenSettings
from pipelines.dag.table import RENAMED
from pipelines.embed.settings import ChunkSettings, EmbedSettings
from pipelines.errors import ParamsError
from pipelines.evaluation.contamination_settings import ContaminationSettings
from pipelines.evaluation.lveval_baselines_settings import LVEvalBaselines
from pipelines.evaluation.summhay_baselines_settings import SummhayBaselines
from pipelines.evaluation.validate_settings import ValidateSettings
from pipelines.evaluation.wikigen_baselines_settings import WikigenBaselines
from pipelines.llm.settings import LLMSettings, default_key_env
from pipelines.publish.settings import PublishSettings
from pipelines.retrieval.settings import RetrievalSettings
from pipelines.settings_hints import env_variable, nearest_key, unsupported_values
from pipelines.sources.web.settings import WebSettings
from pipelines.sources.wiki.settings import WikiSettings
from pipelines.synthesis.lveval_settings import LVEvalStageSettings


class ParamsBase(Strict):
    """What the whole ``params.yaml`` offers besides its keys (declared by :class:`Params`)."""

    if TYPE_CHECKING:  # the keys these methods read; fields of Params, in the table's order
        wiki: WikiSettings
        embed: EmbedSettings
        publish: PublishSettings
        retrieval: RetrievalSettings

    def resolved_retrieval(self) -> RetrievalSettings:
        """``retrieval`` with the dense retriever on the embed stage's encoder unless one is
        named there."""
        r = self.retrieval
        return r if r.dense_model else r.model_copy(update={"dense_model": self.embed.model})

    def releases(self) -> list[Release]:
        """``publish.history``, then the current release (``publish.version``, covering up to
        ``wiki.created_before``)."""
        current = Release(self.publish.version, self.wiki.created_before)
        return [h.release() for h in self.publish.history] + [current]

    @model_validator(mode="after")
    def _history_in_order(self) -> ParamsBase:
        try:
            check_history(self.releases())
        except ValueError as exc:
            raise ValueError(f"publish.history with the current release: {exc}") from None
        return self


# the validate stage's key shadows pydantic's deprecated ``BaseModel.validate``, which nothing calls
warnings.filterwarnings("ignore", 'Field name "validate" in "Params"', UserWarning)


class Params(ParamsBase):
    """The whole ``params.yaml``: one key per stage of the stage table (in its order), plus the
    shared sections (``SECTIONS``). A key whose model has a default for everything may be left
    out; ``tests/pipelines/dag/test_table.py`` checks these fields against the table."""

    wiki: WikiSettings
    web: WebSettings
    wikigen: WikigenSettings = Field(default_factory=WikigenSettings)
    summhay: SummhaySettings = Field(default_factory=SummhaySettings)
    summhay_baselines: SummhayBaselines = Field(default_factory=SummhayBaselines)
    chunk: ChunkSettings = Field(default_factory=ChunkSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    lveval: LVEvalStageSettings = Field(default_factory=LVEvalStageSettings)
    lveval_baselines: LVEvalBaselines = Field(default_factory=LVEvalBaselines)
    wikigen_baselines: WikigenBaselines = Field(default_factory=WikigenBaselines)
    contamination: ContaminationSettings = Field(default_factory=ContaminationSettings)
    validate: ValidateSettings = Field(default_factory=ValidateSettings)  # type: ignore[assignment]
    publish: PublishSettings = Field(default_factory=PublishSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)


def _location(loc: tuple[Any, ...]) -> str:
    return " -> ".join(str(part) for part in loc if not str(part).startswith("function-"))


def _unknown_key(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """What to say about an unknown key: the variable it belongs in for a secret, else the
    nearest known key."""
    llm = data.get("llm")
    given = llm.get("api_key_env") if isinstance(llm, dict) else None
    default = default_key_env(llm.get("backend") if isinstance(llm, dict) else None)
    llm_env = given if isinstance(given, str) and given.isidentifier() else default
    variable = env_variable(loc, llm_env)
    if variable is not None:
        whose = " (named by llm.api_key_env)" if variable == llm_env else ""
        return (
            f"keys are never read from params.yaml: set the {variable} environment variable"
            f"{whose} and remove this key"
        )
    nearest = nearest_key(Params, loc)
    if nearest is not None:
        return f"unknown key; did you mean {nearest!r}?"
    return "unknown key (check the spelling; see docs/settings/ for the settings)"


def format_validation_error(
    exc: ValidationError, source: Path, data: dict[str, Any] | None = None
) -> str:
    """Render pydantic errors as ``params.yaml: [wiki -> min_wrds] Extra inputs ...`` lines;
    ``data`` (the file's mapping) tells where a misplaced secret belongs."""
    return "\n".join(line for _, line in _validation_lines(exc, source, data or {}))


def _validation_lines(
    exc: ValidationError, source: Path, data: dict[str, Any]
) -> Iterator[tuple[str, str]]:
    """``(key path, line)`` for each pydantic error."""
    for err in exc.errors():
        where = _location(err["loc"]) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = _unknown_key(err["loc"], data)
        elif err["type"] == "missing":
            message = "required key is missing"
        elif "input" in err and err["type"] not in {"value_error", "assertion_error"}:
            message = f"{message} (got {err['input']!r})"
        yield where, f"{source}: [{where}] {message}"


def _read_yaml(path: Path) -> tuple[Any, dict[str, str]]:
    """The YAML document of ``path``, and the values in it DVC refuses in params: an error line
    naming the line of the file, by key path."""
    loader = yaml.SafeLoader(path.read_text(encoding="utf-8"))
    try:
        node = loader.get_single_node()
        refused = {
            _location(at): f"{path}:{line}: [{_location(at)}] {message}"
            for line, at, message in unsupported_values(node)
        }
        return (loader.construct_document(node) if node is not None else None), refused
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML: {exc}") from exc
    finally:
        loader.dispose()


def load_params(path: Path | str = "params.yaml") -> Params:
    """Read and validate ``params.yaml``; raise :class:`ParamsError` naming the key and file of
    every problem: a value DVC would refuse, then what the model refuses elsewhere."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: file not found; run from the project root")
    data, refused = _read_yaml(path)
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping of stage keys, got {type(data).__name__}")
    if old := [k for k in RENAMED if k in data]:
        raise ParamsError(
            "\n".join(
                f"{path}: [{k}] this key was renamed; its settings now live in {RENAMED[k]}"
                for k in old
            )
        )
    problems = list(refused.values())
    try:
        params = Params.model_validate(data, context={"root": path.resolve().parent})
    except ValidationError as exc:
        lines = _validation_lines(exc, path, data)
        problems += [line for where, line in lines if where not in refused]
    if problems:
        raise ParamsError("\n".join(problems))
    return params
