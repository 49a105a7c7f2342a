"""dpclaims.reports."""
