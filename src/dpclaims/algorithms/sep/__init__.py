"""SEP and DP-SEP (Vinaroz & Park): the SEP / DP-SEP site updates
(:mod:`~dpclaims.algorithms.sep.sep`), probit and linear-Gaussian likelihoods, PBP for
Bayesian neural networks and its VI / point-estimate baselines, the mixture-of-Gaussians
reproduction, one DP-SEP step as a mechanism (:mod:`~dpclaims.algorithms.sep.step`), a
shuffled DP-SEP pass as a whole run, and the Prop. 1 strategies."""
