"""VIPS (Park, Foulds, Chaudhuri, Welling): Bayesian logistic regression with Polya-Gamma
augmentation (:mod:`~dpclaims.algorithms.vips.blr`), LDA, sigmoid belief networks, their
noised expected sufficient statistics as mechanisms (:mod:`~dpclaims.algorithms.vips.step`)
and a VIPS run as a whole run."""
