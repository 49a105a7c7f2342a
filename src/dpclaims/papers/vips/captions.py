"""Captions of the figures vips's checks write: a shell-style pattern of the
figure's file name (relative to the report folder) -> what it shows. The report puts
each under its figure (``Paper.captions``)."""

CAPTIONS = {
    'blr_auc.png': (
        'VIPS Sec. 6.4 / Fig. 6 at a reduced size: test AUC of private BLR per seed at each '
        "noise multiplier σ (boxes), with ε by the paper's reading and with two releases per "
        'step; dashed: non-private full-batch VB.'),
    'sbn_accuracy.png': (
        'VIPS Sec. 7.1 / Fig. 8 at a reduced size: held-out prediction accuracy per paired '
        'seed of non-private, moments-accountant and strong-composition SBN training, per '
        'minibatch size (grey lines pair the seeds of MA and SC).'),
    'lda_perplexity.png': (
        'VIPS Sec. 4.3 / Fig. 2 at a reduced size: held-out perplexity (upper bound) per '
        'iteration, mean over seeds with min-max band, for each method at the same total (ε, '
        'δ); dashed: the word-frequency baseline.'),
}
