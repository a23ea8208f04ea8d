"""Parquet copies of a dataset export's JSONL files, with the images embedded.

``<split>.parquet`` holds the same records as ``<split>.jsonl`` plus an ``image_files``
column: every image the record names (any ``images/...`` path in it), as ``{"path", "bytes"}``
in the order first named; the layout of Hugging Face's ``Image`` feature, so
``ds.cast_column("image_files", Sequence(Image()))`` decodes them.

Records are read and written in batches (memory does not grow with the dataset); the schema is
the union of every batch's, found in a first pass. Parquet cannot store an object with no
fields: a field that is ``{}`` in every record of a file (an anchor's ``evidence``, say) is
null in the Parquet copy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajectories.validation import InvalidData

# pyarrow is the ``parquet`` extra: a deployment without it exports everything but Parquet.
MISSING_EXTRA = (
    "options.parquet: Parquet export needs the parquet extra: pip install 'waypoint[parquet]'"
)

BATCH = 256
IMAGE_PREFIX = "images/"
CARD_SECTION = """
## Parquet

`{files}` hold the same records with the images embedded in an `image_files` column (a list of
`{{"path", "bytes"}}`, paths as in the JSONL). A field that is an empty object in every record of
a file is null there (Parquet cannot store an object with no fields).

```python
from datasets import Image, Sequence, load_dataset
ds = load_dataset("parquet", data_files={{{mapping}}})
ds = ds.cast_column("image_files", Sequence(Image()))
```
"""


def _image_paths(value: Any, found: dict[str, None]) -> None:
    if isinstance(value, str):
        if value.startswith(IMAGE_PREFIX):
            found.setdefault(value)
    elif isinstance(value, dict):
        for item in value.values():
            _image_paths(item, found)
    elif isinstance(value, list):
        for item in value:
            _image_paths(item, found)


def _batches(path: Path, folder: Path | None) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if folder is not None:
                found: dict[str, None] = {}
                _image_paths(record, found)
                record["image_files"] = [
                    {"path": name, "bytes": (folder / name).read_bytes()} for name in found
                ]
            batch.append(record)
            if len(batch) == BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def _storable(kind: Any) -> Any:
    """``kind`` with every struct that has no fields (which Parquet cannot store) made null."""
    import pyarrow as pa

    if pa.types.is_struct(kind):
        if kind.num_fields == 0:
            return pa.null()
        return pa.struct([field.with_type(_storable(field.type)) for field in kind])
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        item = kind.value_field.with_type(_storable(kind.value_type))
        return pa.list_(item) if pa.types.is_list(kind) else pa.large_list(item)
    return kind


def _conform(value: Any, kind: Any) -> Any:
    """``value`` fitted to the type made by :func:`_storable` (its empty objects as None)."""
    import pyarrow as pa

    if value is None or pa.types.is_null(kind):
        return None
    if pa.types.is_struct(kind) and isinstance(value, dict):
        return {field.name: _conform(value.get(field.name), field.type) for field in kind}
    if (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and isinstance(value, list):
        return [_conform(item, kind.value_type) for item in value]
    return value


def check_parquet_extra() -> None:
    """Refuse a Parquet export, naming the extra, where pyarrow is not installed (before the
    export is queued, and again when it runs)."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InvalidData(MISSING_EXTRA) from None


def write_parquet(jsonl: Path, out: Path, folder: Path) -> None:
    """Write ``out`` from ``jsonl``, embedding the images found under ``folder``."""
    check_parquet_extra()
    import pyarrow as pa
    import pyarrow.parquet as pq

    image_type = pa.list_(pa.struct([("path", pa.string()), ("bytes", pa.binary())]))
    schemas = [pa.Table.from_pylist(batch).schema for batch in _batches(jsonl, None)]
    if schemas:
        unified = pa.unify_schemas(schemas, promote_options="permissive")
        schema = pa.schema([field.with_type(_storable(field.type)) for field in unified])
        # Only the fields whose type changed need their values fitted.
        changed = [field for field, old in zip(schema, unified, strict=True) if field != old]
        schema = schema.append(pa.field("image_files", image_type))
    else:
        changed = []
        schema = pa.schema([pa.field("image_files", image_type)])
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for batch in _batches(jsonl, folder):
            for record in batch:
                for field in changed:
                    record[field.name] = _conform(record.get(field.name), field.type)
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))


APART_SECTION = """
`{name}.parquet` has columns of its own: load it apart,
`load_dataset("parquet", data_files="{name}.parquet")`.
"""


def card_section(split_names: list[str], apart: list[str] = ()) -> str:
    """The card's Parquet section: the splits load together; ``apart`` files each alone."""
    files = "`, `".join(f"{name}.parquet" for name in [*split_names, *apart])
    mapping = ", ".join(f'"{name}": "{name}.parquet"' for name in split_names)
    return CARD_SECTION.format(files=files, mapping=mapping) + "".join(
        APART_SECTION.format(name=name) for name in apart
    )
