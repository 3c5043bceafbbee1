"""Space-filling-curve orderings for clustering: z-order (bit interleave) and Hilbert (Skilling's
transform), computed per row inside Spark tasks as a 63-bit ``_curve_key``; the key math is the
pure :mod:`engines.files.ordering`.

Each sort column is first mapped to an unsigned integer of ``63 // d`` bits that preserves its
order: numbers and timestamps by min/max scaling (one aggregate job), strings by their rank among
the column's distinct values (collected once; falls back to the first 7 bytes for columns with more
than 100,000 distinct values).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from engines.files.ordering import (
    MAX_STRING_RANKS,
    CurveColumn,
    bits_per_dimension,
    curve_coordinates,
    curve_key,
)


def with_curve_key(df: DataFrame, columns: Sequence[str], curve: str) -> DataFrame:
    """``df`` plus ``_curve_key`` (long) ordering rows along a z-order or Hilbert curve."""
    if curve not in ("zorder", "hilbert"):
        raise ValueError(f"unknown curve {curve!r}; expected zorder or hilbert")
    cols = list(columns)
    bits = bits_per_dimension(len(cols))
    kinds: dict[str, CurveColumn] = {}
    numeric_aggs = []
    for c in cols:
        dtype = df.schema[c].dataType
        if isinstance(dtype, StringType):
            distinct = [r[0] for r in df.select(c).distinct().limit(MAX_STRING_RANKS + 1).collect()]
            if len(distinct) <= MAX_STRING_RANKS:
                kinds[c] = CurveColumn("rank", ranks=tuple(sorted(v for v in distinct if v is not None)))
            else:
                kinds[c] = CurveColumn("prefix")
        else:
            numeric_aggs += [F.min(F.col(c).cast("double")).alias(f"lo_{c}"),
                             F.max(F.col(c).cast("double")).alias(f"hi_{c}")]
    bounds = df.select(*numeric_aggs).collect()[0].asDict() if numeric_aggs else {}
    for c in cols:
        if c not in kinds:
            kinds[c] = CurveColumn("numeric", bounds[f"lo_{c}"], bounds[f"hi_{c}"])
    src = df
    for c in cols:
        if kinds[c].kind == "numeric":
            src = src.withColumn(f"_num_{c}", F.col(c).cast("double"))
    schema = StructType(src.schema.fields + [StructField("_curve_key", LongType(), False)])
    columns = [kinds[c] for c in cols]
    value_columns = [f"_num_{c}" if kinds[c].kind == "numeric" else c for c in cols]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rb in batches:
            values = [rb.column(rb.schema.get_field_index(v)) for v in value_columns]
            key = curve_key(curve_coordinates(values, columns, bits), curve, bits)
            arr = pa.array(key.astype(np.int64), pa.int64())
            yield pa.RecordBatch.from_arrays(list(rb.columns) + [arr], names=list(rb.schema.names) + ["_curve_key"])

    keyed = src.mapInArrow(run, schema)
    return keyed.drop(*[f"_num_{c}" for c in cols if kinds[c].kind == "numeric"])
