"""dpclaims.audits."""
