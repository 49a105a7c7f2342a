"""dpclaims.property_tests."""
