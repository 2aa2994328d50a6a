"""Parquet files as pyarrow writes them (what Hugging Face datasets and pandas.to_parquet give), and what
pandas.read_parquet reads from them, for test/parquet.test.ts. Run in the sid chroot, where python3-pyarrow
and python3-pandas are (see README):

    python3 scripts/make-parquet-fixtures.py

test/fixtures/tables/passengers.parquet: passengers.csv as pandas.read_csv reads it, written with ZSTD pages,
dictionary-encoded strings and row groups of 16 rows (so 3 groups), so that a table read from it must equal
the one read from the CSV (and the preprocessing goldens hold for it).
test/fixtures/tables/kinds.parquet (Snappy) and kinds.golden.json: one column of each kind a table meets (int64
with a null, float64 with NaN, strings of digits, booleans, dates, UTC timestamps, an enum-like category, a
list column), and each cell as pandas reads it (null for missing; dates and timestamps as ISO 8601 text).
test/fixtures/pretrained/chat-masks.parquet: the conversations of chat-tokenizer-masks.golden.json as a chat
dataset's shard: a `messages` column of list<struct<role, content>>, a row group a row.
"""
import json
import math
import pathlib

import pandas
import pyarrow
import pyarrow.parquet

ROOT = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures"


def passengers():
    frame = pandas.read_csv(ROOT / "tables" / "passengers.csv")
    frame.to_parquet(ROOT / "tables" / "passengers.parquet", compression="zstd", row_group_size=16, index=False)


def kinds():
    table = pyarrow.table({
        "count": pyarrow.array([3, None, -7, 2**40], pyarrow.int64()),
        "ratio": pyarrow.array([0.5, float("nan"), None, -1.25], pyarrow.float64()),
        "code": pyarrow.array(["007", "042", None, "100"], pyarrow.string()),
        "member": pyarrow.array([True, False, None, True], pyarrow.bool_()),
        "day": pyarrow.array([pandas.Timestamp("2024-02-29").date(), None,
                              pandas.Timestamp("1999-12-31").date(), pandas.Timestamp("2024-03-01").date()],
                             pyarrow.date32()),
        "seen": pyarrow.array([pandas.Timestamp("2024-02-29T13:45:30.250Z"), None,
                               pandas.Timestamp("1970-01-01T00:00:00Z"), pandas.Timestamp("2030-06-01T08:00:00Z")],
                              pyarrow.timestamp("ms", tz="UTC")),
        "species": pyarrow.array(["Adelie", "Gentoo", "Adelie", None]).dictionary_encode(),
        "tags": pyarrow.array([["a"], [], None, ["b", "c"]], pyarrow.list_(pyarrow.string())),
    })
    pyarrow.parquet.write_table(table, ROOT / "tables" / "kinds.parquet", compression="snappy")
    frame = pandas.read_parquet(ROOT / "tables" / "kinds.parquet")

    def cell(value, kind):
        if value is None or value is pandas.NaT or (isinstance(value, float) and math.isnan(value)):
            return None
        if kind == "day":
            return value.isoformat()
        if kind == "seen":
            return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else float(value)

    scalar = [name for name in frame.columns if name != "tags"]
    golden = {
        "columns": scalar,
        "rows": [{name: cell(frame[name].iloc[row], name) for name in scalar} for row in range(len(frame))],
        "dtypes": {name: str(frame[name].dtype) for name in frame.columns},
    }
    (ROOT / "tables" / "kinds.golden.json").write_text(json.dumps(golden, indent=1) + "\n")


def chat():
    golden = json.loads((ROOT / "pretrained" / "chat-tokenizer-masks.golden.json").read_text())
    messages = [case["messages"] for case in golden["cases"]]
    message = pyarrow.struct([("role", pyarrow.string()), ("content", pyarrow.string())])
    table = pyarrow.table({"messages": pyarrow.array(messages, pyarrow.list_(message))})
    pyarrow.parquet.write_table(table, ROOT / "pretrained" / "chat-masks.parquet", row_group_size=1)


if __name__ == "__main__":
    passengers()
    kinds()
    chat()
    print("pyarrow", pyarrow.__version__, "pandas", pandas.__version__)
