"""A realistic CSV file and what pandas.read_csv and scikit-learn's ColumnTransformer make of it, for
test/tables.test.ts. Run in the sid chroot, where python3-sklearn (1.9) and python3-pandas are (see README):

    python3 scripts/make-table-fixtures.py

test/fixtures/tables/passengers.csv: a header row, CRLF line ends, a UTF-8 byte-order mark, quoted cells
with commas, quotes and a line break, empty cells, two text columns and a numeric one that is categorical.
Its first 30 rows train, the last 10 are new rows (with categories the training rows lack).
examples/data/passengers.csv: 600 passengers of the same columns whose survival follows sex, class and age
(with noise), for examples/tabular-http.ts and the README's serving example.
test/fixtures/tables/passengers.golden.json: how pandas reads each column (dtype, missing cells), and for
each preprocessing below (the same spec in firebrand's terms beside it) sklearn's feature names, the
transformed training and new rows (float64), the classes (LabelEncoder) and the training targets' indices.
"""
import csv
import json
import pathlib
import random

import pandas
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelEncoder, MinMaxScaler, OneHotEncoder, OrdinalEncoder, StandardScaler

OUT = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "tables"
HEADER = ["id", "name", "age", "fare", "sex", "port", "class", "survived"]
TRAIN_ROWS = 30


def rows():
    """40 passengers: ages and fares with gaps, ports with gaps, and in the last 10 a port and a class unseen before."""
    generator = random.Random(7)
    names = ["Smith, John", 'O"Brien, Ann', "Lee\nMin", "Garcia, Ana", "Brown", "Müller, Jörg"]
    out = []
    for i in range(40):
        new = i >= TRAIN_ROWS
        age = "" if generator.random() < 0.2 else f"{generator.uniform(1, 80):.1f}"
        fare = "" if generator.random() < 0.1 else f"{generator.uniform(5, 250):.4f}"
        sex = generator.choice(["female", "male"])
        port = "" if generator.random() < 0.15 else generator.choice(["C", "Q", "S", "S"] + (["X"] if new else []))
        klass = generator.choice([1, 2, 3] + ([4] if new else []))
        survived = generator.choice(["no", "yes"])
        out.append([str(i + 1), generator.choice(names), age, fare, sex, port, str(klass), survived])
    return out


PREPROCESSINGS = {
    "median-indicator-standard-onehot": dict(
        spec=dict(numeric=dict(columns=["age", "fare"], impute="median", indicator=True, scale="standard"),
                  categorical=dict(columns=["sex", "port"], impute="most_frequent", encode="onehot",
                                   handleUnknown="ignore"),
                  target="survived"),
        sklearn=lambda: ColumnTransformer([
            ("num", Pipeline([("impute", SimpleImputer(strategy="median", add_indicator=True)),
                              ("scale", StandardScaler())]), ["age", "fare"]),
            ("cat", Pipeline([("impute", SimpleImputer(strategy="most_frequent")),
                              ("encode", OneHotEncoder(handle_unknown="ignore", sparse_output=False))]), ["sex", "port"]),
        ])),
    "mean-minmax-missing-category-index": dict(
        spec=dict(numeric=dict(columns=["age", "fare"], impute="mean", scale="minmax"),
                  categorical=[dict(columns=["sex", "port"], encode="onehot", handleUnknown="ignore"),
                               dict(columns=["class"], encode="index", handleUnknown="ignore")],
                  target="survived"),
        sklearn=lambda: ColumnTransformer([
            ("num", Pipeline([("impute", SimpleImputer(strategy="mean")), ("scale", MinMaxScaler())]), ["age", "fare"]),
            ("cat0", OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["sex", "port"]),
            # The index after the last for an unseen class: one more embedding row.
            ("cat1", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=3), ["class"]),
        ])),
    "constant-unscaled-constant-category": dict(
        spec=dict(numeric=dict(columns=["age", "fare"], impute={"constant": -1}, indicator=True, scale="none"),
                  categorical=dict(columns=["port", "sex"], impute={"constant": "unknown"}, encode="onehot",
                                   handleUnknown="ignore"),
                  target="survived"),
        sklearn=lambda: ColumnTransformer([
            ("num", SimpleImputer(strategy="constant", fill_value=-1, add_indicator=True), ["age", "fare"]),
            ("cat", Pipeline([("impute", SimpleImputer(strategy="constant", fill_value="unknown")),
                              ("encode", OneHotEncoder(handle_unknown="ignore", sparse_output=False))]),
             ["port", "sex"]),
        ])),
}


def write_example_table():
    """examples/data/passengers.csv: a logit of 1.2 for female, -0.9 a class step, -0.03 a year past 30."""
    generator = random.Random(11)
    names = ["Smith, John", 'O"Brien, Ann', "Garcia, Ana", "Brown", "Müller, Jörg", "Lee, Min"]
    out = []
    for i in range(600):
        age = generator.uniform(1, 80)
        fare = generator.uniform(5, 250)
        sex = generator.choice(["female", "male"])
        klass = generator.choice([1, 2, 3])
        logit = 1.2 * (sex == "female") - 0.9 * (klass - 2) - 0.03 * (age - 30) + generator.gauss(0, 0.7)
        out.append([str(i + 1), generator.choice(names),
                    "" if generator.random() < 0.2 else f"{age:.1f}", "" if generator.random() < 0.05 else f"{fare:.2f}",
                    sex, "" if generator.random() < 0.05 else generator.choice(["C", "Q", "S", "S"]), str(klass),
                    "yes" if logit > 0 else "no"])
    example = OUT.parent.parent.parent / "examples" / "data" / "passengers.csv"
    with open(example, "w", newline="", encoding="utf-8-sig") as file:
        writer = csv.writer(file, lineterminator="\r\n")
        writer.writerow(HEADER)
        writer.writerows(out)
    print(f"wrote {example}")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    write_example_table()
    data = rows()
    csv_file = OUT / "passengers.csv"
    with open(csv_file, "w", newline="", encoding="utf-8-sig") as file:
        writer = csv.writer(file, lineterminator="\r\n")
        writer.writerow(HEADER)
        writer.writerows(data)
    frame = pandas.read_csv(csv_file)
    train, new = frame.iloc[:TRAIN_ROWS], frame.iloc[TRAIN_ROWS:]
    golden = {
        "generatedBy": "scripts/make-table-fixtures.py", "sklearn": sklearn.__version__, "pandas": pandas.__version__,
        "trainRows": TRAIN_ROWS,
        "columns": {name: {"dtype": str(frame[name].dtype), "missing": int(frame[name].isna().sum())}
                    for name in frame.columns},
        "preprocessings": {},
    }
    labels = LabelEncoder().fit(train["survived"])
    for name, case in PREPROCESSINGS.items():
        transformer = case["sklearn"]().fit(train)
        golden["preprocessings"][name] = {
            "spec": case["spec"],
            "featureNames": [str(feature) for feature in transformer.get_feature_names_out()],
            "train": transformer.transform(train).tolist(),
            "new": transformer.transform(new).tolist(),
            "classes": [str(label) for label in labels.classes_],
            "trainTargets": labels.transform(train["survived"]).tolist(),
        }
    (OUT / "passengers.golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {csv_file} and its golden: " + ", ".join(PREPROCESSINGS))


if __name__ == "__main__":
    main()
