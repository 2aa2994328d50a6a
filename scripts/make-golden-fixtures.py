#!/usr/bin/python3
"""Writes test/fixtures/golden-training.json: training runs done by PyTorch
itself (Debian's python3-torch 1.13, the same libtorch firebrand links; metrics by
python3-sklearn), which
test/golden.test.ts replays through firebrand and compares.

libtorch's C++ modules initialise weights with the same generator calls as
Python's, so torch.manual_seed(seed) before building the model gives both the
same starting weights. Run: /usr/bin/python3 scripts/make-golden-fixtures.py
With --version-dependent it writes only the cases whose numbers depend on the
version's kernels (bf16) to test/fixtures/torch-<major.minor>/golden-training.json,
for that python3-torch's libtorch (2.14: run it in the sid chroot of
scripts/ci-libtorch-latest.sh).
"""
import json
import math
import pathlib
import sys
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F

SAMPLES, FEATURES, CLASSES, BATCH, EPOCHS = 48, 4, 3, 16, 3


def make_data():
    # A formula, not a random generator, so the data does not depend on RNG state.
    inputs = [[math.sin(0.7 * i + 1.3 * j) for j in range(FEATURES)] for i in range(SAMPLES)]
    labels = [int((x[0] + 0.5 * x[1] - x[2] + 3) * 10) % CLASSES for x in inputs]
    targets = [[0.5 * x[0] - x[3]] for x in inputs]
    return inputs, labels, targets


def multi_label_targets(inputs):
    return [[1.0 if x[j] > 0 else 0.0 for j in range(CLASSES)] for x in inputs]


def distribution_targets(inputs):
    return torch.softmax(torch.tensor(inputs, dtype=torch.float64)[:, :CLASSES] * 2, dim=1).tolist()


def make_model(log_softmax=False):
    layers = [nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, CLASSES)]
    return nn.Sequential(*layers, *([nn.LogSoftmax(dim=1)] if log_softmax else []))


def param_groups(model, options):
    """The groups firebrand plans: paramGroups by name prefix, then the rest; with
    noDecayOnBiasAndNorm, parameters of one dimension or less get weight_decay 0."""
    specs = options.get("paramGroups", [])
    decayed = [[] for _ in range(len(specs) + 1)]
    not_decayed = [[] for _ in range(len(specs) + 1)]
    for name, parameter in model.named_parameters():
        index = next((i for i, spec in enumerate(specs) if any(name.startswith(p) for p in spec["params"])), len(specs))
        no_decay = options.get("noDecayOnBiasAndNorm", False) and parameter.dim() <= 1
        (not_decayed if no_decay else decayed)[index].append(parameter)
    groups = []
    for index in range(len(specs) + 1):
        overrides = {}
        if index < len(specs) and "lr" in specs[index]:
            overrides["lr"] = specs[index]["lr"]
        if index < len(specs) and "weightDecay" in specs[index]:
            overrides["weight_decay"] = specs[index]["weightDecay"]
        if decayed[index]:
            groups.append({"params": decayed[index], **overrides})
        if not_decayed[index]:
            groups.append({"params": not_decayed[index], **overrides, "weight_decay": 0.0})
    return groups


def make_optimizer(name, options, model):
    params = param_groups(model, options)
    if name == "sgd":
        return torch.optim.SGD(params, lr=options["lr"], momentum=options.get("momentum", 0),
                               nesterov=options.get("nesterov", False), weight_decay=options.get("weightDecay", 0))
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=options["lr"], alpha=options.get("alpha", 0.99),
                                   momentum=options.get("momentum", 0), centered=options.get("centered", False),
                                   weight_decay=options.get("weightDecay", 0))
    if name == "adagrad":
        return torch.optim.Adagrad(params, lr=options["lr"], lr_decay=options.get("lrDecay", 0),
                                   initial_accumulator_value=options.get("initialAccumulatorValue", 0),
                                   weight_decay=options.get("weightDecay", 0))
    cls = torch.optim.AdamW if name == "adamw" else torch.optim.Adam
    return cls(params, lr=options["lr"], weight_decay=options.get("weightDecay", 0.01 if name == "adamw" else 0))


def run(case, inputs, labels, targets):
    """Trains as firebrand's Trainer with shuffle off would. A case's "pytorchBatch"
    (default: its batchSize) is the batch PyTorch steps on: firebrand reaches the
    same steps with batchSize x gradientAccumulationSteps micro-batches."""
    torch.manual_seed(case["seed"])
    model = make_model(case.get("logSoftmax", False))
    optimizer = make_optimizer(case["optimizer"]["name"], case["optimizer"], model)
    batch = case.get("pytorchBatch", case.get("batchSize", BATCH))
    epochs = case.get("epochs", EPOCHS)
    scheduler = None
    if "lrScheduler" in case:  # onecycle: cycles the lr and SGD's momentum
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, case["lrScheduler"]["maxLr"], total_steps=epochs * math.ceil(SAMPLES / batch))
    x = torch.tensor(inputs, dtype=torch.float32)
    loss_name = case["loss"]["name"]
    if loss_name == "cross_entropy":
        y = torch.tensor(labels, dtype=torch.long)
        smoothing = case["loss"].get("labelSmoothing", 0.0)
        weight = torch.tensor(case["loss"]["weight"]) if "weight" in case["loss"] else None
        loss_fn = lambda out, t: F.cross_entropy(out, t, weight=weight, label_smoothing=smoothing)
    elif loss_name == "bce_with_logits":
        y = torch.tensor(multi_label_targets(inputs), dtype=torch.float32)
        pos_weight = torch.tensor(case["loss"]["posWeight"]) if "posWeight" in case["loss"] else None
        loss_fn = lambda out, t: F.binary_cross_entropy_with_logits(out, t, pos_weight=pos_weight)
    elif loss_name == "kl_div":
        y = torch.tensor(distribution_targets(inputs), dtype=torch.float32)
        loss_fn = lambda out, t: F.kl_div(out, t, reduction=case["loss"].get("reduction", "mean"))
    else:
        y = torch.tensor(targets, dtype=torch.float32).repeat(1, CLASSES)
        loss_fn = {
            "mse": F.mse_loss,
            "l1": F.l1_loss,
            "huber": lambda out, t: F.huber_loss(out, t, delta=case["loss"].get("delta", 1.0)),
            "smooth_l1": lambda out, t: F.smooth_l1_loss(out, t, beta=case["loss"].get("beta", 1.0)),
        }[case["loss"]["name"]]
    epoch_losses, step_losses, grad_norms = [], [], []
    # config.ema: timm's ModelEmaV3 (lerp; the first update copies; warm-up 1 - (1 + t)^(-2/3)).
    average = {k: v.detach().clone() for k, v in model.state_dict().items()} if "ema" in case else None
    updates = 0
    for _ in range(epochs):
        total = 0.0
        for start in range(0, SAMPLES, batch):
            xb, yb = x[start:start + batch], y[start:start + batch]
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=case.get("mixedPrecision") == "bf16"):
                loss = loss_fn(model(xb), yb)
            loss.backward()
            if "maxGradNorm" in case:
                grad_norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), case["maxGradNorm"])))
            if "clipValue" in case:
                torch.nn.utils.clip_grad_value_(model.parameters(), case["clipValue"])
            optimizer.step()
            if average is not None:
                updates += 1
                step = max(0, updates - 1)
                decay = 0.0 if step <= 0 else case["ema"]["decay"]
                if step > 0 and case["ema"].get("warmup"):
                    decay = max(min(1 - (1 + step) ** (-2 / 3), case["ema"]["decay"]), 0.0)
                with torch.no_grad():
                    for k, v in model.state_dict().items():
                        if v.is_floating_point():
                            average[k].lerp_(v, 1.0 - decay)
                        else:
                            average[k].copy_(v)
            if scheduler:
                scheduler.step()
            total += loss.item() * xb.shape[0]
            step_losses.append(loss.item())
        epoch_losses.append(total / SAMPLES)
    if average is not None:  # firebrand's model ends on the averaged weights
        model.load_state_dict(average)
    # firebrand predicts under the autocast it trains with, as Lightning does.
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=case.get("mixedPrecision") == "bf16"):
        predictions = model(x[:4]).float().flatten().tolist()
    final_weights = {name: value.detach().flatten().tolist() for name, value in model.state_dict().items()}
    result = {**case, "epochLosses": epoch_losses, "stepLosses": step_losses, "predictions": predictions,
              "finalWeights": final_weights}
    if grad_norms:
        result["gradNorms"] = grad_norms
    return result


SCHEDULE_STEPS, SCHEDULE_EPOCHS = 30, 2


def hf_lambda(name, warmup, total, num_cycles=0.5):
    """transformers' get_{constant,linear,cosine}_schedule_with_warmup factors."""
    def factor(step):
        if step < warmup:
            return float(step) / float(max(1, warmup))
        if name == "constant":
            return 1.0
        if name == "linear":
            return max(0.0, float(total - step) / float(max(1, total - warmup)))
        progress = float(step - warmup) / float(max(1, total - warmup))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
    return factor


def schedule(case):
    """Learning rate (and momentum) used at each of SCHEDULE_STEPS optimizer steps."""
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=case["lr"], momentum=0.9)
    spec, lr_scheduler = case["lrScheduler"], torch.optim.lr_scheduler
    name = spec["name"]
    if name in ("constant", "linear", "cosine"):
        scheduler = lr_scheduler.LambdaLR(optimizer, hf_lambda(name, spec.get("warmupSteps", 0), SCHEDULE_STEPS,
                                                               spec.get("numCycles", 0.5)))
    elif name == "step":
        scheduler = lr_scheduler.StepLR(optimizer, spec["stepSize"], gamma=spec.get("gamma", 0.1))
    elif name == "multistep":
        scheduler = lr_scheduler.MultiStepLR(optimizer, spec["milestones"], gamma=spec.get("gamma", 0.1))
    elif name == "exponential":
        scheduler = lr_scheduler.ExponentialLR(optimizer, spec["gamma"])
    else:
        scheduler = lr_scheduler.OneCycleLR(optimizer, spec["maxLr"], total_steps=SCHEDULE_STEPS,
                                            pct_start=spec.get("pctStart", 0.3),
                                            anneal_strategy=spec.get("annealStrategy", "cos"))
    lrs, momenta = [], []
    for _ in range(SCHEDULE_STEPS):
        lrs.append(optimizer.param_groups[0]["lr"])
        momenta.append(optimizer.param_groups[0]["momentum"])
        parameter.grad = torch.zeros(1)
        optimizer.step()
        scheduler.step()
    return {**case, "lrs": lrs, **({"momenta": momenta} if name == "onecycle" else {})}


def plateau(metrics, **options):
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, **options)
    lrs = []
    for metric in metrics:
        lrs.append(optimizer.param_groups[0]["lr"])
        scheduler.step(metric)
    return lrs


def write_schedules():
    cases = [
        {"lr": 0.1, "lrScheduler": {"name": "constant", "warmupSteps": 5}},
        {"lr": 0.1, "lrScheduler": {"name": "linear", "warmupSteps": 6}},
        {"lr": 0.1, "lrScheduler": {"name": "cosine", "warmupSteps": 4}},
        {"lr": 0.1, "lrScheduler": {"name": "cosine", "numCycles": 1.5}},
        {"lr": 0.1, "lrScheduler": {"name": "step", "stepSize": 7, "gamma": 0.5}},
        {"lr": 0.1, "lrScheduler": {"name": "multistep", "milestones": [3, 10, 25], "gamma": 0.3}},
        {"lr": 0.1, "lrScheduler": {"name": "exponential", "gamma": 0.9}},
        {"lr": 0.1, "lrScheduler": {"name": "onecycle", "maxLr": 0.5}},
        {"lr": 0.1, "lrScheduler": {"name": "onecycle", "maxLr": 0.2, "pctStart": 0.5, "annealStrategy": "linear"}},
    ]
    fixture = {
        "generatedBy": "scripts/make-golden-fixtures.py",
        "torchVersion": torch.__version__,
        "steps": SCHEDULE_STEPS, "epochs": SCHEDULE_EPOCHS,
        "cases": [schedule(case) for case in cases],
        # Losses that fall every epoch, as a training loss does: in mode 'max' none after the first improves.
        "plateauMaxModePatience0": plateau([5, 4, 3, 2, 1], mode="max", factor=0.5, patience=0),
    }
    out = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "golden-schedules.json"
    out.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {out}")


def write_metrics():
    """Metrics by scikit-learn (python3-sklearn) on fixed logits and labels; the test feeds
    the logits through a model without parameters (nn.flatten()), so outputs = inputs."""
    from sklearn import metrics as sk

    generator = torch.Generator().manual_seed(21)
    samples, classes = 200, 5
    logits = torch.randn(samples, classes, generator=generator, dtype=torch.float64)
    logits[:, 4] -= 100  # class 4 is never predicted ...
    labels = torch.randint(0, 4, (samples,), generator=generator)  # ... nor a label: macro averages skip it
    predicted = logits.argmax(1)
    y, p = labels.numpy(), predicted.numpy()
    classification = {
        "accuracy": sk.accuracy_score(y, p),
        "top2Accuracy": sk.top_k_accuracy_score(y, logits.numpy(), k=2, labels=list(range(classes))),
        "top3Accuracy": sk.top_k_accuracy_score(y, logits.numpy(), k=3, labels=list(range(classes))),
        "confusionMatrix": sk.confusion_matrix(y, p, labels=list(range(classes))).tolist(),
        "perplexity": math.exp(F.cross_entropy(logits, labels).item()),
    }
    for average in ("macro", "micro", "weighted"):
        precision, recall, f1, _ = sk.precision_recall_fscore_support(y, p, average=average, zero_division=0)
        suffix = average.capitalize()
        classification.update({f"precision{suffix}": precision, f"recall{suffix}": recall, f"f1{suffix}": f1})
    report = sk.classification_report(y, p, labels=list(range(classes)), output_dict=True, zero_division=0)
    classification["classificationReport"] = {
        name: [float(report[str(label)][key]) for label in range(classes)]
        for name, key in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score"), ("support", "support"))
    }

    outputs = torch.randn(samples, 2, generator=generator, dtype=torch.float64)
    targets = outputs * 0.7 + 0.3 * torch.randn(samples, 2, generator=generator, dtype=torch.float64) + 0.5
    flat_targets, flat_outputs = targets.flatten().numpy(), outputs.flatten().numpy()
    regression = {
        "mse": sk.mean_squared_error(flat_targets, flat_outputs),
        "mae": sk.mean_absolute_error(flat_targets, flat_outputs),
        "r2": sk.r2_score(flat_targets, flat_outputs),
    }
    fixture = {
        "generatedBy": "scripts/make-golden-fixtures.py (scikit-learn " + __import__("sklearn").__version__ + ")",
        "classes": classes,
        "logits": logits.tolist(), "labels": labels.tolist(), "classification": classification,
        "outputs": outputs.tolist(), "targets": targets.tolist(), "regression": regression,
    }
    out = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "golden-metrics.json"
    out.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {out}")


class ScriptedClassifier(nn.Module):
    """A model scripted in Python: firebrand trains it with its own loss function."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(FEATURES, 8)
        self.out = nn.Linear(8, CLASSES)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


class ScriptedRegressor(nn.Module):
    """A model with its own steps: firebrand calls training_step / validation_step."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, 1)

    def forward(self, x):
        return self.linear(x).squeeze(1)

    @torch.jit.export
    def training_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        prediction = self.forward(batch["input"])
        error = prediction - batch["target"]
        return {"loss": (error * error).mean(), "mae": error.abs().mean()}

    @torch.jit.export
    def validation_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        error = self.forward(batch["input"]) - batch["target"]
        return {"loss": (error * error).mean(), "max_error": error.abs().max()}


class TinyGan(nn.Module):
    """Two models, two losses: firebrand steps a generator and a discriminator optimizer."""

    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(2, 2)
        self.disc = nn.Linear(2, 1)

    def forward(self, noise):
        return self.gen(noise)

    @torch.jit.export
    def training_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        noise, real = batch["input"], batch["target"]
        fake = self.gen(noise)
        ones = torch.ones(real.size(0), 1)
        zeros = torch.zeros(real.size(0), 1)
        loss_d = F.binary_cross_entropy_with_logits(self.disc(real), ones) + \
            F.binary_cross_entropy_with_logits(self.disc(fake.detach()), zeros)
        loss_g = F.binary_cross_entropy_with_logits(self.disc(fake), ones)
        return {"loss_g": loss_g, "loss_d": loss_d}


def gan_data():
    noise = [[math.sin(1.1 * i), math.cos(0.7 * i)] for i in range(SAMPLES)]
    real = [[2.0 + 0.3 * math.sin(0.5 * i), -1.0 + 0.2 * math.cos(0.9 * i)] for i in range(SAMPLES)]
    return noise, real


def write_gan(folder):
    """Each optimizer gets the gradient of its own loss only, then both step (generator first)."""
    torch.manual_seed(32)
    path = folder / "gan.pt"
    torch.jit.save(torch.jit.script(TinyGan()), str(path))
    module = torch.jit.load(str(path))
    named = dict(module.named_parameters())
    gen = [named["gen.weight"], named["gen.bias"]]
    disc = [named["disc.weight"], named["disc.bias"]]
    opt_g = torch.optim.Adam(gen, lr=0.01)
    opt_d = torch.optim.SGD(disc, lr=0.05)
    noise_list, real_list = gan_data()
    noise, real = torch.tensor(noise_list), torch.tensor(real_list)
    step_losses, epoch_means = [], []
    for _ in range(2):
        sums = {"loss_g": 0.0, "loss_d": 0.0}
        for start in range(0, SAMPLES, 8):
            out = module.training_step({"input": noise[start:start + 8], "target": real[start:start + 8]})
            grads_g = torch.autograd.grad(out["loss_g"], gen, retain_graph=True, allow_unused=True)
            grads_d = torch.autograd.grad(out["loss_d"], disc, allow_unused=True)
            for parameter, grad in zip(gen + disc, list(grads_g) + list(grads_d)):
                parameter.grad = grad
            opt_g.step()
            opt_d.step()
            step_losses.append(out["loss_g"].item() + out["loss_d"].item())
            for key in sums:
                sums[key] += out[key].item() * 8
        epoch_means.append({key: value / SAMPLES for key, value in sums.items()})
    with torch.no_grad():
        predictions = module(noise[:3]).flatten().tolist()
    return {"noise": noise_list, "real": real_list, "stepLosses": step_losses, "epochMeans": epoch_means,
            "predictions": predictions}


def write_float64_mlp(folder):
    """A TorchScript MLP of float64 parameters (300 -> 21 -> 3), for test/fused-optimizers.test.ts."""
    torch.manual_seed(40)
    model = nn.Sequential(nn.Linear(300, 21), nn.Tanh(), nn.Linear(21, 3)).double()
    path = folder / "float64-mlp.pt"
    torch.jit.save(torch.jit.script(model), str(path))
    print(f"wrote {path}")


def write_scripted():
    """Saves two TorchScript modules and PyTorch's own training of each (SGD, batches of 4, in order)."""
    inputs, labels, targets = make_data()
    x = torch.tensor(inputs, dtype=torch.float32)
    folder = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "scripted"
    folder.mkdir(exist_ok=True)
    runs = {}
    for name, cls, seed in (("classifier", ScriptedClassifier, 30), ("regressor", ScriptedRegressor, 31)):
        torch.manual_seed(seed)
        path = folder / f"{name}.pt"
        torch.jit.save(torch.jit.script(cls()), str(path))
        module = torch.jit.load(str(path))
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)
        y = torch.tensor(labels) if name == "classifier" else torch.tensor([t[0] for t in targets])
        step_losses, maes = [], []
        for _ in range(2):
            for start in range(0, SAMPLES, 4):
                xb, yb = x[start:start + 4], y[start:start + 4]
                optimizer.zero_grad(set_to_none=True)
                if name == "classifier":
                    loss = F.cross_entropy(module(xb), yb)
                else:
                    out = module.training_step({"input": xb, "target": yb})
                    loss = out["loss"]
                    maes.append(out["mae"].item())
                loss.backward()
                optimizer.step()
                step_losses.append(loss.item())
        with torch.no_grad():
            predictions = module(x[:4]).flatten().tolist()
            validation = module.validation_step({"input": x, "target": y}) if name == "regressor" else None
        runs[name] = {"stepLosses": step_losses, "predictions": predictions}
        if maes:
            runs[name]["epochMae"] = [sum(maes[:12]) / 12, sum(maes[12:]) / 12]
            runs[name]["validation"] = {key: value.item() for key, value in validation.items()}
    runs["gan"] = write_gan(folder)
    write_float64_mlp(folder)
    out = folder / "golden-scripted.json"
    out.write_text(json.dumps({"torchVersion": torch.__version__, **runs}, indent=1) + "\n")
    print(f"wrote {out}")


def write_sampler_orders():
    """torch.utils.data.DistributedSampler's indices per (rank, epoch), and a plain seeded permutation."""
    from torch.utils.data import DistributedSampler

    dataset = list(range(10))
    shards = {}
    for world_size in (1, 3, 4):
        for rank in range(world_size):
            for epoch in (0, 1):
                sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=7)
                sampler.set_epoch(epoch)
                shards[f"{world_size}/{rank}/{epoch}"] = list(sampler)
    unshuffled = list(DistributedSampler(dataset, num_replicas=3, rank=2, shuffle=False))
    splits = {}
    for size, fraction, seed in ((10, 0.3, 5), (7, 0.5, 1), (50, 0.1, 42)):
        parts = torch.utils.data.random_split(list(range(size)), [1 - fraction, fraction],
                                              generator=torch.Generator().manual_seed(seed))
        splits[f"{size}/{fraction}/{seed}"] = [list(part) for part in parts]
    out = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "golden-sampler.json"
    out.write_text(json.dumps({"size": len(dataset), "seed": 7, "shards": shards, "unshuffledRank2Of3": unshuffled,
                               "randomSplits": splits}, indent=1) + "\n")
    print(f"wrote {out}")


def write_data_files():
    """Small .npy and .csv files for test/data-files.test.ts, in the layouts numpy writes."""
    import numpy as np

    folder = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "data"
    folder.mkdir(exist_ok=True)
    inputs = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    np.save(folder / "inputs-f32.npy", inputs)
    np.save(folder / "labels-i32-big-endian.npy", np.array([2, 0, 1, 1], dtype=">i4"))
    np.save(folder / "inputs-f64-fortran.npy", np.asfortranarray(inputs.astype(np.float64)))
    np.save(folder / "labels-i64.npy", np.array([2, 0, 1, 1], dtype=np.int64))
    (folder / "iris-like.csv").write_text("sepal,petal,species\n5.1,1.4,0\n6.2,4.5,1\n7.7,6.7,2\n4.9, 1.5 ,0\n")
    labels = np.array([2, 0, 1, 1], dtype=np.int64)
    np.savez(folder / "stored.npz", x_train=inputs, y_train=labels)
    np.savez_compressed(folder / "compressed.npz", input=inputs.astype(np.float64), target=labels.astype(np.int32))
    write_safetensors(folder / "tensors.safetensors", {
        "input": torch.from_numpy(inputs),
        "target": torch.from_numpy(labels),
        "weight_bf16": torch.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=torch.bfloat16),
        "mask_f16": torch.tensor([1.0, 0.5, 0.0, 1.0], dtype=torch.float16),
    }, {"format": "pt", "source": "make-golden-fixtures.py"})
    print(f"wrote {folder}")


def write_pretrained():
    """A PyTorch MLP's weights as safetensors (as safetensors.torch.save_file writes them) and its
    outputs on a few inputs, for initWeightsFrom in test/checkpoints.test.ts."""
    folder = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "data"
    torch.manual_seed(123)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)).eval()
    write_safetensors(folder / "pretrained-mlp.safetensors", model.state_dict(), {"format": "pt"})
    inputs = torch.linspace(-1, 1, 12).reshape(3, 4)
    with torch.no_grad():
        outputs = model(inputs)
    (folder / "pretrained-mlp.json").write_text(json.dumps(
        {"inputs": inputs.flatten().tolist(), "outputs": outputs.flatten().tolist()}, indent=1) + "\n")


SAFETENSORS_DTYPES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
                      torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
                      torch.uint8: "U8", torch.bool: "BOOL"}


def write_safetensors(path, tensors, metadata):
    """The layout of safetensors.torch.save_file, written by hand (Debian has no safetensors module):
    tensors ordered by dtype size (largest first) then name, header padded with spaces to 8 bytes."""
    order = sorted(tensors, key=lambda name: (-tensors[name].element_size(), name))
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name in order:
        tensor = tensors[name].contiguous()
        data = tensor.view(torch.uint8).numpy().tobytes() if tensor.dim() else tensor.reshape(1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": SAFETENSORS_DTYPES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + b"".join(chunks))


def main():
    inputs, labels, targets = make_data()
    cases = [
        {"title": "sgd with momentum, cross_entropy", "seed": 0,
         "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "loss": {"name": "cross_entropy"}},
        {"title": "adamw, cross_entropy with label smoothing", "seed": 1,
         "optimizer": {"name": "adamw", "lr": 0.01}, "loss": {"name": "cross_entropy", "labelSmoothing": 0.1}},
        {"title": "adam with weight decay, mse", "seed": 2,
         "optimizer": {"name": "adam", "lr": 0.01, "weightDecay": 0.001}, "loss": {"name": "mse"}},
        {"title": "sgd with nesterov momentum, smooth_l1", "seed": 3,
         "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.8, "nesterov": True},
         "loss": {"name": "smooth_l1", "beta": 0.5}},
        {"title": "adamw, l1", "seed": 4, "optimizer": {"name": "adamw", "lr": 0.005}, "loss": {"name": "l1"}},
        {"title": "sgd, cross_entropy with class weights", "seed": 15,
         "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9},
         "loss": {"name": "cross_entropy", "weight": [0.2, 1.0, 3.0]}},
        {"title": "adam, huber with delta 0.3", "seed": 16, "optimizer": {"name": "adam", "lr": 0.01},
         "loss": {"name": "huber", "delta": 0.3}},
        {"title": "adam, bce_with_logits with pos_weight", "seed": 17, "optimizer": {"name": "adam", "lr": 0.01},
         "loss": {"name": "bce_with_logits", "posWeight": [2.0, 0.5, 1.0]}},
        {"title": "sgd, kl_div batchmean on log_softmax outputs", "seed": 18, "logSoftmax": True,
         "optimizer": {"name": "sgd", "lr": 0.5}, "loss": {"name": "kl_div", "reduction": "batchmean"}},
        # Step-level trajectories: 60 optimizer steps each.
        {"title": "60 steps of sgd with momentum", "seed": 5, "batchSize": 4, "epochs": 5,
         "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9}, "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of adam", "seed": 6, "batchSize": 4, "epochs": 5,
         "optimizer": {"name": "adam", "lr": 0.01}, "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of adamw with clip_grad_norm_(0.5)", "seed": 7, "batchSize": 4, "epochs": 5,
         "maxGradNorm": 0.5, "optimizer": {"name": "adamw", "lr": 0.01}, "loss": {"name": "mse"}},
        {"title": "60 steps of sgd with clip_grad_value_(0.05)", "seed": 8, "batchSize": 4, "epochs": 5,
         "clipValue": 0.05, "optimizer": {"name": "sgd", "lr": 0.2}, "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of rmsprop, centered with momentum", "seed": 10, "batchSize": 4, "epochs": 5,
         "optimizer": {"name": "rmsprop", "lr": 0.003, "momentum": 0.5, "centered": True, "weightDecay": 0.01},
         "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of adagrad with lr decay", "seed": 11, "batchSize": 4, "epochs": 5,
         "optimizer": {"name": "adagrad", "lr": 0.05, "lrDecay": 0.01, "initialAccumulatorValue": 0.1},
         "loss": {"name": "cross_entropy"}},
        {"title": "sgd with a parameter group of its own lr and weight decay", "seed": 12, "batchSize": 4, "epochs": 3,
         "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9,
                       "paramGroups": [{"params": ["0."], "lr": 0.01, "weightDecay": 0.05}]},
         "loss": {"name": "cross_entropy"}},
        {"title": "adamw without weight decay on biases", "seed": 13, "batchSize": 4, "epochs": 3,
         "optimizer": {"name": "adamw", "lr": 0.01, "weightDecay": 0.5, "noDecayOnBiasAndNorm": True},
         "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of sgd under onecycle, which also cycles the momentum", "seed": 14, "batchSize": 4,
         "epochs": 5, "lrScheduler": {"name": "onecycle", "maxLr": 0.3},
         "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of adamw with an EMA of the weights (warm-up, then decay 0.9)", "seed": 20, "batchSize": 4,
         "epochs": 5, "ema": {"decay": 0.9, "warmup": True}, "optimizer": {"name": "adamw", "lr": 0.01},
         "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of sgd with an EMA of decay 0.8", "seed": 21, "batchSize": 4, "epochs": 5,
         "ema": {"decay": 0.8}, "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "loss": {"name": "cross_entropy"}},
        {"title": "60 steps of adamw under bf16 autocast on the CPU", "seed": 19, "batchSize": 4, "epochs": 5,
         "mixedPrecision": "bf16", "optimizer": {"name": "adamw", "lr": 0.01}, "loss": {"name": "cross_entropy"}},
        # Accumulating 4 micro-batches of 5 equals one batch of 20; 48 samples end in a short group of 8.
        {"title": "gradient accumulation of 4 x 5 samples against batches of 20 (last group 8)", "seed": 9,
         "batchSize": 5, "gradientAccumulationSteps": 4, "pytorchBatch": 20, "epochs": 4,
         "optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "loss": {"name": "cross_entropy"}},
    ]
    fixtures = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures"
    version_only = "--version-dependent" in sys.argv
    if version_only:
        # Cases whose numbers depend on the version's kernels (bf16 rounding), for the
        # libtorch version of this python3-torch: test/fixtures/torch-<major.minor>/.
        cases = [case for case in cases if case.get("mixedPrecision")]
        major_minor = ".".join(torch.__version__.split(".")[:2])
        out = fixtures / f"torch-{major_minor}" / "golden-training.json"
        out.parent.mkdir(exist_ok=True)
    else:
        out = fixtures / "golden-training.json"
    fixture = {
        "generatedBy": "scripts/make-golden-fixtures.py" + (" --version-dependent" if version_only else ""),
        "torchVersion": torch.__version__,
        "batchSize": BATCH, "epochs": EPOCHS, "features": FEATURES, "classes": CLASSES,
        "inputs": inputs, "labels": labels, "regressionTargets": [t[0] for t in targets],
        "multiLabelTargets": multi_label_targets(inputs), "distributionTargets": distribution_targets(inputs),
        "cases": [run(case, inputs, labels, targets) for case in cases],
    }
    out.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {out}")
    if version_only:
        return
    write_schedules()
    write_metrics()
    write_scripted()
    write_data_files()
    write_pretrained()
    write_sampler_orders()


if __name__ == "__main__":
    main()
