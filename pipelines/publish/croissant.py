"""``croissant.json``: the export described as Croissant 1.1 JSON-LD, with Responsible-AI fields.

Every Parquet shard is a ``cr:FileObject`` (its sha256 from the manifest), every config a
``cr:FileSet`` of its shards and a ``cr:RecordSet`` with one field per column, typed from the
shards' Arrow schema. Lists are ``isArray`` fields (fixed-size vectors with their
``arrayShape``); structs and lists of structs have a ``subField`` per struct member.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.publish.export import ExportedConfig
from pipelines.publish.manifest import Manifest
from pipelines.publish.provenance import Provenance
from pipelines.publish.registry import DatasetSpec

CROISSANT = "croissant.json"
CONFORMS_TO = ["http://mlcommons.org/croissant/1.1", "http://mlcommons.org/croissant/RAI/1.0"]
PARQUET = "application/x-parquet"
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""mlcroissant's standard 1.1 ``@context`` (any other context only earns a warning)."""
URL = re.compile(r"https?://[^\s)\]]+")


@dataclass(frozen=True)
class CroissantInputs:
    """What the export knows about one dataset when its manifest is built."""

    spec: DatasetSpec
    configs: list[ExportedConfig]
    manifest: Manifest
    repo_id: str | None
    provenance: Provenance
    citations: list[str]


def data_type(arrow: pa.DataType) -> str:
    """The Croissant ``dataType`` of a scalar Arrow type (text for anything else)."""
    if pa.types.is_boolean(arrow):
        return "sc:Boolean"
    if pa.types.is_integer(arrow):
        return "sc:Integer"
    if pa.types.is_floating(arrow):
        return "sc:Float"
    if pa.types.is_timestamp(arrow):
        return "sc:DateTime"
    if pa.types.is_date(arrow):
        return "sc:Date"
    return "sc:Text"


def _is_list(arrow: pa.DataType) -> bool:
    return (
        pa.types.is_list(arrow)
        or pa.types.is_large_list(arrow)
        or pa.types.is_fixed_size_list(arrow)
    )


def field_of(record_set: str, name: str, arrow: pa.DataType, source: dict[str, Any]) -> dict:
    """The ``cr:Field`` of column (or struct member) ``name`` of type ``arrow``, read via
    ``source``."""
    field: dict[str, Any] = {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "description": f"Parquet type: {arrow}.",
    }
    inner = arrow
    if _is_list(arrow):
        inner = arrow.value_type
        field["isArray"] = True
        field["arrayShape"] = str(arrow.list_size) if pa.types.is_fixed_size_list(arrow) else "-1"
    if pa.types.is_struct(inner):
        field["subField"] = [
            field_of(f"{record_set}/{name}", child.name, child.type, _member(source, child.name))
            for child in inner
        ]
    else:
        field["dataType"] = data_type(inner)
    field["source"] = source
    return field


def _member(source: dict[str, Any], member: str) -> dict[str, Any]:
    """The source of a struct member: its parent's column, then ``jsonPath``."""
    return {**source, "transform": {"jsonPath": member}}


def shard_objects(configs: list[ExportedConfig], manifest: Manifest) -> list[dict[str, Any]]:
    """A ``cr:FileObject`` per shard (with its sha256) and a ``cr:FileSet`` per config."""
    objects: list[dict[str, Any]] = []
    for config in configs:
        for split, files in config.splits.items():
            for path in files.files:
                objects.append(
                    {
                        "@type": "cr:FileObject",
                        "@id": path,
                        "name": path,
                        "description": f"Config {config.name}, split {split}.",
                        "contentUrl": path,
                        "contentSize": f"{manifest.files[path]['bytes']} B",
                        "encodingFormat": PARQUET,
                        "sha256": manifest.files[path]["sha256"],
                    }
                )
        objects.append(
            {
                "@type": "cr:FileSet",
                "@id": f"{config.name}-parquet",
                "name": f"{config.name}-parquet",
                "description": f"Every Parquet shard of config {config.name}.",
                "encodingFormat": PARQUET,
                "includes": f"{config.name}/*.parquet",
            }
        )
    return objects


def record_set(config: ExportedConfig, folder: Path) -> dict[str, Any]:
    """The ``cr:RecordSet`` of one config: a field per column of its first shard's schema."""
    first = next(f for s in config.splits.values() for f in s.files)
    schema = pq.read_schema(folder / first)
    fields = []
    for column in schema:
        source = {"fileSet": {"@id": f"{config.name}-parquet"}, "extract": {"column": column.name}}
        fields.append(field_of(config.name, column.name, column.type, source))
    splits = ", ".join(f"{name} ({files.rows} rows)" for name, files in config.splits.items())
    return {
        "@type": "cr:RecordSet",
        "@id": config.name,
        "name": config.name,
        "description": f"{config.spec.description} Splits: {splits}.",
        "field": fields,
    }


def licenses(spec: DatasetSpec) -> list[str]:
    """The licence URLs named by the dataset's terms, or its single licence."""
    urls = [u for _, terms in spec.license_terms for u in URL.findall(terms)]
    return sorted(set(urls)) or [spec.license]


def rai_fields(inputs: CroissantInputs) -> dict[str, Any]:
    """Responsible-AI statements the registry and provenance back up."""
    spec, prov = inputs.spec, inputs.provenance
    terms = [f"{which}: {terms}" for which, terms in spec.license_terms]
    return {
        "rai:dataCollection": (
            f"Built by the benchsmith pipeline from Wikipedia event articles created "
            f"{prov.event_window} ({prov.snapshot}) and the web documents they cite or that "
            f"search found for them; generated text comes from the configured LLM "
            f"({prov.llm}). Code: benchsmith {prov.toolkit_version}, commit {prov.git_commit}."
        ),
        "rai:dataCollectionType": ["Web Scraping", "Secondary Data Analysis", "Synthetic Data"],
        "rai:dataCollectionRawData": "Wikipedia articles (CC BY-SA 4.0) and the web pages "
        "they cite; URLs are kept with the text they were taken from.",
        "rai:dataPreprocessingProtocol": [
            "Web pages are fetched respecting robots.txt, text is extracted, and each "
            "document's fetch outcome is recorded.",
            *terms,
        ],
        "rai:personalSensitiveInformation": [
            "Not screened: Wikipedia articles and news pages about public events name public "
            "figures and may name private persons; no other personal data is collected."
        ],
        "rai:dataBiases": [
            "English Wikipedia and the web pages it cites only: their coverage and viewpoints.",
            f"Events are limited to articles created {prov.event_window}.",
        ],
        "rai:dataLimitations": [
            f"Small and recent: {sum(c.rows for c in inputs.configs)} rows over "
            f"{len(inputs.configs)} configs; generated text may contain model errors.",
            "Web text may be outdated, dead or changed since it was fetched.",
        ],
        "rai:dataUseCases": [
            f"Evaluating models on {', '.join(spec.task_categories)} over events newer than "
            "their training data."
        ],
        "rai:dataSocialImpact": "A research benchmark; the text is quoted from public sources.",
        "rai:dataReleaseMaintenancePlan": (
            "Versioned releases tagged on the Hub; benchsmith.json lists every shard's sha256."
        ),
    }


def croissant(inputs: CroissantInputs, folder: Path) -> dict[str, Any]:
    """The Croissant JSON-LD of the export in ``folder``."""
    spec, manifest = inputs.spec, inputs.manifest
    url = f"https://huggingface.co/datasets/{inputs.repo_id}" if inputs.repo_id else None
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": spec.name,
        "alternateName": [spec.pretty_name],
        "description": f"{spec.pretty_name}, built with benchsmith. Configs: "
        + " ".join(f"{c.name}: {c.spec.description}" for c in inputs.configs),
        "license": licenses(spec),
        "version": manifest.version,
        "keywords": list(spec.tags),
        "inLanguage": list(spec.language),
        "creator": {"@type": "sc:Organization", "name": "benchsmith"},
        "citeAs": "\n\n".join(inputs.citations) or None,
        "url": url,
        "isLiveDataset": False,
        **rai_fields(inputs),
        "distribution": shard_objects(inputs.configs, manifest),
        "recordSet": [record_set(c, folder) for c in inputs.configs],
    }
    return {k: v for k, v in document.items() if v is not None}


def write_croissant(inputs: CroissantInputs, folder: Path) -> Path:
    """Write ``folder/croissant.json``."""
    path = folder / CROISSANT
    path.write_text(json.dumps(croissant(inputs, folder), indent=2) + "\n", "utf-8")
    return path
