"""Deprecated: moved to :mod:`dpclaims.execution.user_code` (issue 39).

``dpclaims.claims.user_code`` is that module itself (not a copy: its names and state are
the same objects); importing it warns once.
"""

import sys
import warnings

from dpclaims.execution import user_code

warnings.warn("dpclaims.claims.user_code is deprecated: it moved to dpclaims.execution.user_code",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = user_code
