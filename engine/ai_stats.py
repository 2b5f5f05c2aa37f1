"""Small statistics for the arena: a mean with a 95% interval clustered by seed, percentiles.

The four games of one seed share a wall, so they are not independent; the interval treats
each seed's mean as one observation (a cluster), which is what makes it honest.

>>> est = clustered_mean({1: [2.0, 4.0], 2: [0.0, 2.0], 3: [1.0, 3.0]})
>>> est.mean, est.clusters
(2.0, 3)
>>> percentile([5.0, 1.0, 3.0], 50)
3.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Two-sided 97.5% quantiles of Student's t for small cluster counts; 1.96 beyond the table.
_T975 = {
    1: 12.71,
    2: 4.30,
    3: 3.18,
    4: 2.78,
    5: 2.57,
    6: 2.45,
    7: 2.36,
    8: 2.31,
    9: 2.26,
    10: 2.23,
    15: 2.13,
    20: 2.09,
    30: 2.04,
    60: 2.00,
    120: 1.98,
}


@dataclass(frozen=True, slots=True)
class Estimate:
    mean: float
    low: float  # 95% interval
    high: float
    clusters: int

    def to_dict(self) -> dict[str, float | int]:
        return {"mean": self.mean, "ci95_low": self.low, "ci95_high": self.high, "clusters": self.clusters}


def _t_quantile(df: int) -> float:
    for bound in sorted(_T975):
        if df <= bound:
            return _T975[bound]
    return 1.96


def clustered_mean(values_by_cluster: Mapping[object, Sequence[float]]) -> Estimate:
    """Mean over all values with a 95% interval from the spread of the cluster means."""
    means = [sum(v) / len(v) for v in values_by_cluster.values() if v]
    n = len(means)
    if n == 0:
        return Estimate(0.0, 0.0, 0.0, 0)
    mean = sum(means) / n
    if n == 1:
        return Estimate(mean, -math.inf, math.inf, 1)
    var = sum((m - mean) ** 2 for m in means) / (n - 1)
    half = _t_quantile(n - 1) * math.sqrt(var / n)
    return Estimate(mean, mean - half, mean + half, n)


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]
