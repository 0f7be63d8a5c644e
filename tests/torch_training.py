#!/usr/bin/python3
"""Training against torch.optim.SGD (tests/check_torch_training.sh runs this). Random float64
lessons with `loss:` and `train:` (every parameter, or some, over several paths of the forward
pass) and every shipped lesson with `train:`: PyTorch runs the same forward pass and loss
(torch_gradients.reference), torch.optim.SGD at the lesson's learning rate over the parameters
it names, for its steps; attnstep's --json "training" losses and "trained" parameters must
equal PyTorch's within 1e-10. Fails (never skips) when PyTorch is missing.
Usage: torch_training.py ATTNSTEP SCRATCH_DIR [LESSON...]"""
import os
import sys

import torch_gradients as tg  # exits with the install hint when PyTorch is missing

torch = tg.torch
TOLERANCE = 1e-10
PARAMS = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
failures = tg.failures


def sgd(data, hidden, trained, steps, rate):
    """Losses at steps 0 … steps and the trained tensors, by torch.optim.SGD."""
    given = {name: torch.tensor(data["_params"][name], dtype=torch.float64, requires_grad=True)
             for name in trained}
    optimizer = torch.optim.SGD(list(given.values()), lr=rate)
    losses = []
    for k in range(steps + 1):
        optimizer.zero_grad()
        _, loss = tg.reference(data, hidden, given)
        losses.append(loss)
        if k < steps:
            optimizer.step()
    return losses, given


def compare(label, data, losses, given):
    got = data.get("training")
    if got is None or [entry["step"] for entry in got] != list(range(len(losses))):
        failures.append(f"{label}: --json's \"training\" is {got!r:.200}, not steps 0 … "
                        f"{len(losses) - 1}")
        return 0
    for entry, theirs in zip(got, losses):
        if abs(entry["loss"] - theirs) > TOLERANCE * max(1.0, abs(theirs)):
            failures.append(f"{label}: the loss at step {entry['step']} is {entry['loss']!r}, "
                            f"torch.optim.SGD's {theirs!r}")
    trained = data.get("trained", {})
    if sorted(trained) != sorted(given):
        failures.append(f"{label}: \"trained\" has {sorted(trained)}, SGD trained {sorted(given)}")
    checked = 0
    for name in sorted(set(trained) & set(given)):
        mine = torch.tensor(trained[name], dtype=torch.float64)
        theirs = given[name].detach().reshape(mine.shape)
        difference = (mine - theirs).abs().max().item()
        checked += mine.numel()
        if difference > TOLERANCE:
            failures.append(f"{label}: trained {name} differs from torch.optim.SGD's by "
                            f"{difference:.3g} (> {TOLERANCE:g})")
    return checked


CASES = [
    dict(tg.CASES[0], train={"steps": 8, "learning_rate": 0.05}),
    dict(tg.CASES[1], train={"steps": 5, "learning_rate": 0.1, "params": ["W_Q", "W_K"]}),
    dict(tg.CASES[4], train={"steps": 6, "learning_rate": 0.02}),
    dict(tg.CASES[5], train={"steps": 4, "learning_rate": 0.05, "params": ["W_V", "b_O"]}),
    dict(tg.CASES[9], train={"steps": 5, "learning_rate": 0.005}),
    dict(tg.CASES[12], train={"steps": 5, "learning_rate": 0.02}),
    dict(tg.CASES[15], train={"steps": 5, "learning_rate": 0.01}),
    dict(tg.CASES[16], train={"steps": 4, "learning_rate": 0.02,
                              "params": ["gain", "W_V", "b_O"]}),
    dict(tg.CASES[17], train={"steps": 5, "learning_rate": 0.01, "params": ["gain", "bias"]}),
    dict(tg.CASES[18], train={"steps": 4, "learning_rate": 0.01}),
]


def train_yaml(train):
    text = f"train:\n  steps: {train['steps']}\n  learning_rate: {train['learning_rate']!r}\n"
    if "params" in train:
        text += f"  params: [{', '.join(train['params'])}]\n"
    return text


def random_lessons():
    total = 0
    for seed, case in enumerate(CASES):
        x, src, params, target = tg.random_case(case, 2000 + seed)
        path = os.path.join(tg.SCRATCH, "train_" + case["name"] + ".yaml")
        with open(path, "w") as f:
            f.write(tg.lesson_text(case, x, src, params, target) + train_yaml(case["train"]))
        data = tg.run(path)
        if data is None:
            continue
        data["_params"] = {k: v.tolist() for k, v in params.items()}
        data["_target"], data["_case"] = target.tolist(), case
        mask, window = tg.mask_of(case)
        hidden = tg.hidden_cells(mask, x.shape[0],
                                 src.shape[0] if src is not None else x.shape[0], window)
        trained = case["train"].get("params", list(params))
        losses, given = sgd(data, hidden, trained, case["train"]["steps"],
                            case["train"]["learning_rate"])
        if not losses[-1] < losses[0]:   # a rate that diverges compares only large numbers
            failures.append(f"{case['name']}: the loss does not fall ({losses[0]!r} to "
                            f"{losses[-1]!r}): choose a smaller learning_rate")
        total += compare(case["name"], data, losses, given)
    return total


def shipped(path):
    data, hidden = tg.shipped_setup(path)
    if data is None:
        return 0
    if "training" not in data:
        failures.append(f"{path}: --json has no \"training\": the lesson does not train")
        return 0
    steps = len(data["training"]) - 1
    rate = data.get("learning_rate")
    if rate is None:
        failures.append(f"{path}: --json has no \"learning_rate\"")
        return 0
    losses, given = sgd(data, hidden, list(data["trained"]), steps, rate)
    return compare(os.path.basename(path), data, losses, given)


def main():
    total = random_lessons()
    for path in sys.argv[3:]:
        total += shipped(path)
    for failure in failures:
        print("check_torch_training: FAIL:", failure)
    if failures:
        sys.exit(1)
    print(f"check_torch_training: {len(CASES)} random lessons and {len(sys.argv) - 3} shipped: "
          f"the loss at every step and {total} trained cells equal torch.optim.SGD within "
          f"{TOLERANCE:g}")


main()
