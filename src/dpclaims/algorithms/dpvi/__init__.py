"""DPVI and DPVIm (Jälkö, Prediger, Honkela, Kaski): DP-SGD on the ELBO with vanilla,
aligned, natural and full-rank gradients (:mod:`~dpclaims.algorithms.dpvi.dpvi`), one
step's release as a mechanism (:mod:`~dpclaims.algorithms.dpvi.step`) and T steps as a
whole run."""
