"""Device choice and seeding."""

import random

import numpy as np
import pytest
import torch

from course_utils import CourseInputError, get_device, seed_everything


def test_default_device_is_the_best_available():
    device = get_device()
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert device.type == expected


def test_environment_variable_forces_a_device(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present")
def test_asking_for_missing_cuda_is_a_clear_error():
    with pytest.raises(CourseInputError, match="CUDA is not available"):
        get_device("cuda")


def test_seed_everything_repeats_every_generator():
    def draw():
        generator = seed_everything(123)
        return (random.random(), np.random.rand(), torch.rand(1).item(), torch.rand(1, generator=generator).item())

    assert draw() == draw()
    seed_everything(124)
    assert torch.rand(1).item() != draw()[2]


@pytest.mark.parametrize("bad", [-1, 1.5, "7", 2**40, True])
def test_bad_seed_is_rejected(bad):
    with pytest.raises(CourseInputError, match="seed"):
        seed_everything(bad)
