"""dpclaims.algorithms."""
