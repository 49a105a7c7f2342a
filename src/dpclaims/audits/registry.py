"""The names of the audit's attack scores and threshold strategies: one table each.

:data:`SCORES` and :data:`THRESHOLDS` map a name to its factory and a one-line
description. They are the only lists of these names: the audit resolves a name through
them (``audit(..., score="fisher", threshold="rank")``), the CLI builds its ``--score``
help from them, a budget checks a score name against them, and the lists below are
generated from them. A new score or strategy is a module of its own implementing the
hooks of :class:`~dpclaims.audits.scores.AttackScore` or
:class:`~dpclaims.audits.thresholds.ThresholdStrategy`, plus its line here.

This module imports nothing but the standard library (the factories are imported when
built), so that the CLI can read it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class Named:
    """A named score or strategy: ``factory`` ("module:attribute", imported by
    :meth:`build`) called with ``args``, and what it is in one line."""

    factory: str
    description: str
    args: tuple = ()

    def build(self):
        module, attribute = self.factory.split(":")
        return getattr(import_module(module), attribute)(*self.args)


_SCORES = "dpclaims.audits.scores"

# the attack scores by name (dpclaims.audits.scores); the first is the default
SCORES: dict[str, Named] = {
    "auto": Named(f"{_SCORES}:AutoScore",
                  "chosen from the training outputs (likelihood-ratio for a finite output "
                  "space, fisher for continuous outputs, gradient-boosting for a mix)"),
    "fisher": Named(f"{_SCORES}:FisherScore",
                    "Fisher's linear discriminant (optimal for Gaussian noise on a vector)"),
    "likelihood-ratio": Named(f"{_SCORES}:LikelihoodRatioScore",
                              "the likelihood ratio of a finite output space, counted on "
                              "training outputs"),
    "logistic": Named(f"{_SCORES}:ClassifierScore",
                      "logistic regression on quadratic features (DP-Sniper)", ("logistic",)),
    "gradient-boosting": Named(f"{_SCORES}:ClassifierScore",
                               "a gradient-boosting classifier on the raw outputs (DP-Sniper)",
                               ("gradient-boosting",)),
}

# the threshold strategies by name (dpclaims.audits.thresholds and its siblings); the
# first is the default; a number is an explicit threshold
THRESHOLDS: dict[str, Named] = {
    "auto": Named("dpclaims.audits.thresholds_auto:AutoThreshold",
                  "a rank design at the rank the training AUROC points to, for a continuous "
                  "score and a claim with delta > 0 (5 % training, at least 400 trials); the "
                  "split otherwise"),
    "split": Named("dpclaims.audits.thresholds:SplitThreshold",
                   "chosen on a 20 % training split, certified on the other 80 %"),
    "bonferroni": Named("dpclaims.audits.thresholds:BonferroniThresholds",
                        "the 16 best thresholds of a 20 % training split, alpha / 16 each"),
    "rank": Named("dpclaims.audits.thresholds_rank:RankThreshold",
                  "an order statistic of D0's held-out scores at a rank anchored at the "
                  "claim (claims with delta > 0)"),
}


def quoted(table: dict[str, Named]) -> str:
    """The names as ``'a', 'b', 'c'`` (for error messages)."""
    return ", ".join(f"'{name}'" for name in table)


def described(table: dict[str, Named]) -> str:
    """The names with their descriptions, the first marked as the default, in one
    paragraph (for ``--help``)."""
    return "; ".join(f"{name}{' (default)' if i == 0 else ''}: {entry.description}"
                     for i, (name, entry) in enumerate(table.items()))


def _rst(table: dict[str, Named]) -> str:
    return "\n".join(f"``{name}``\n    {entry.description}" for name, entry in table.items())


__doc__ += f"""
The attack scores (:data:`SCORES`)
----------------------------------
{_rst(SCORES)}

The threshold strategies (:data:`THRESHOLDS`)
---------------------------------------------
{_rst(THRESHOLDS)}
"""
