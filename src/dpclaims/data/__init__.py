"""The data loaders (layer 1): the UCI regression sets and the embedded statsmodels
data (:mod:`~dpclaims.data.datasets`), Adult (:mod:`~dpclaims.data.adult`) and the
Wikipedia excerpt (:mod:`~dpclaims.data.wikipedia`), read from ``--data-dir`` (the
layout of ``../shared/data``) and never copied into the repository."""
