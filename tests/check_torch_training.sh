#!/usr/bin/env bash
# Training against torch.optim.SGD (tests/torch_training.py): the losses of --json's "training"
# and its "trained" parameters, on random lessons over several paths of the forward pass and
# every shipped lesson with train:, within 1e-10. Fails with a clear message when python3-torch
# is missing (.ci/install-deps installs it).
set -u
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
exec /usr/bin/python3 tests/torch_training.py ./attnstep "$scratch" \
    $(grep -l "^train:" lessons/*.yaml)
