"""Deprecated: moved to :mod:`dpclaims.execution.cluster` (issue 39).

``dpclaims.claims.cluster`` is that module itself (not a copy: its names and state are
the same objects); importing it warns once.
"""

import sys
import warnings

from dpclaims.execution import cluster

warnings.warn("dpclaims.claims.cluster is deprecated: it moved to dpclaims.execution.cluster",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = cluster
