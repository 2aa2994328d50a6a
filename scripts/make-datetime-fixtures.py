"""The calendar parts pandas gives ISO 8601 date/time texts, for test/datetime-columns.test.ts: each text read
by pandas.Timestamp (a written offset kept, so the parts are the wall-clock time's) and its .year, .month, .day,
.dayofweek (Monday 0), .dayofyear, .hour and .minute. Run in the sid chroot, where python3-pandas is:

    python3 scripts/make-datetime-fixtures.py
"""
import json
import pathlib

import pandas

ROOT = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "tables"

TEXTS = [
    "2024-02-29",
    "2023-12-31",
    "2024-12-31T23:59:59",
    "2024-01-01 00:00",
    "2000-03-01",
    "2100-02-28",
    "2100-03-01",
    "1900-02-28",
    "1899-12-31T12:30:00",
    "1969-12-31T23:00:00",
    "1970-01-01",
    "1752-09-14",
    "1700-03-01T06:07:08",
    "2024-03-10T08:30:00+05:30",
    "2024-03-10T08:30:00-08:00",
    "2024-03-10T08:30:00Z",
    "2024-06-15T12:00:00.250Z",
    "2024-02-29T13:45:30.250Z",
    "2262-04-11",
]

PARTS = {
    "year": "year",
    "month": "month",
    "day": "day",
    "dayOfWeek": "dayofweek",
    "dayOfYear": "dayofyear",
    "hour": "hour",
    "minute": "minute",
}


def main():
    rows = []
    for text in TEXTS:
        stamp = pandas.Timestamp(text)
        rows.append({"text": text, **{name: int(getattr(stamp, field)) for name, field in PARTS.items()}})
    golden = {"pandas": pandas.__version__, "rows": rows}
    (ROOT / "datetime-parts.golden.json").write_text(json.dumps(golden, indent=1) + "\n")


if __name__ == "__main__":
    main()
