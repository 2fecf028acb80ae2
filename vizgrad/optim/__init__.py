"""Optimizers and learning-rate schedules with PyTorch's names: ``vizgrad.optim.Adam``, ..."""

from . import lr_scheduler
from .algorithms import SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "lr_scheduler"]
