"""Optimizers and learning-rate schedules with PyTorch's names: ``vizgrad.optim.Adam``, ..."""

from . import lr_scheduler
from .algorithms import ASGD, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam, RMSprop, Rprop
from .lbfgs import LBFGS
from .optimizer import Optimizer

__all__ = ["ASGD", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "Optimizer", "RAdam",
           "RMSprop", "Rprop", "lr_scheduler"]
