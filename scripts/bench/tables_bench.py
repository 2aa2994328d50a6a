"""The Python side of scripts/bench/tables.ts, one measure a process (prints one JSON line):

    tables_bench.py write-parquet FILE ROWS   the bench's Parquet file, as pyarrow writes it
    tables_bench.py read-parquet FILE         pyarrow.parquet.read_table(FILE).to_pandas()
    tables_bench.py train-table CSV           scikit-learn's MLPClassifier on the CSV, as tables-child.ts trains
"""
import json
import resource
import sys
import time


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_parquet(file, rows):
    import pyarrow
    import pyarrow.parquet

    species = ["Adelie", "Gentoo", "Chinstrap"]
    table = pyarrow.table({
        "id": pyarrow.array(range(rows), pyarrow.int32()),
        "mass": pyarrow.array([None if i % 17 == 0 else 3000.0 + i % 2000 for i in range(rows)], pyarrow.float64()),
        "species": pyarrow.array([species[i % 3] for i in range(rows)]).dictionary_encode(),
        "note": pyarrow.array([f"bird {i} seen" for i in range(rows)]),
    })
    pyarrow.parquet.write_table(table, file, row_group_size=50_000, compression="snappy")
    print(json.dumps({"seconds": 0, "peakRssMb": peak_rss_mb()}))


def read_parquet(file):
    import pandas  # noqa: F401 (imported before the clock starts, as to_pandas would import it)
    import pyarrow.parquet

    started = time.perf_counter()
    frame = pyarrow.parquet.read_table(file).to_pandas()
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peakRssMb": peak_rss_mb(), "rows": len(frame)}))


def train_table(csv):
    started = time.perf_counter()
    import pandas
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    frame = pandas.read_csv(csv)
    train, validation = frame.iloc[:480], frame.iloc[480:]
    features = ColumnTransformer([
        ("num", Pipeline([("impute", SimpleImputer(strategy="median", add_indicator=True)),
                          ("scale", StandardScaler())]), ["age", "fare"]),
        ("cat", Pipeline([("impute", SimpleImputer(strategy="most_frequent")),
                          ("encode", OneHotEncoder(handle_unknown="ignore"))]), ["sex", "port", "class"]),
    ])
    model = Pipeline([("features", features), ("mlp", MLPClassifier(
        hidden_layer_sizes=(16,), solver="adam", learning_rate_init=0.01, batch_size=32, max_iter=60,
        random_state=0))])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached: the same 60 epochs as firebrand's
        model.fit(train, train["survived"])
    accuracy = float((model.predict(validation) == validation["survived"]).mean())
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peakRssMb": peak_rss_mb(), "accuracy": accuracy}))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "write-parquet":
        write_parquet(sys.argv[2], int(sys.argv[3]))
    elif mode == "read-parquet":
        read_parquet(sys.argv[2])
    else:
        train_table(sys.argv[2])
