"""DP-SEP's experimental tables as printed (every paper version) and the statements its
text makes about them, quoted exactly: data only. The checks (exact arithmetic on the
tables, sign tests of the statements on our runs) are in
:mod:`dpclaims.papers.dpsep.checks_tables`.

Sources: v0 = dpsep_full_v0.txt (Tables 1-4), v1 = dpsep_extended_v1.txt (Tables 1-5),
v2 = dpsep_short_v2.txt (its one MoG table, captioned "Table 4" in its text).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpclaims.claims import Claim

PAPERS = {
    "v0": "DP-SEP v0 (dpsep_full_v0.txt)",
    "v1": "DP-SEP v1 (dpsep_extended_v1.txt)",
    "v2": "DP-SEP v2 (dpsep_short_v2.txt)",
}


@dataclass(frozen=True)
class PaperTable:
    """One table as printed: ``rows`` maps a row label to {column: (value, std or None)}.

    ``std`` is the number after "±" where the paper prints one (the paper does not say
    whether it is a standard deviation over splits or a standard error; PBP's paper, whose
    protocol Sec. 6.2 follows, reports standard errors).
    """

    key: str
    version: str
    location: str
    caption: str
    columns: tuple[str, ...]
    rows: dict

    def claim(self) -> Claim:
        """The table as a catalogue claim (id ``dpsep/<key>``, the caption quoted)."""
        return Claim(
            id=f"dpsep/{self.key}", kind="table",
            paper=PAPERS[self.version],
            location=self.location,
            statement=self.caption,
            check="the table's numbers beside a reduced-size reproduction; exact arithmetic "
                  "and cross-version consistency of the printed numbers",
        )


def _row(values, stds=None):
    stds = stds or [None] * len(values)
    return tuple(zip(values, stds, strict=True))


_UCI = ("Naval", "Kin8nm", "Power", "Wine", "Protein", "Year")
_BNN_METHODS = ("VI", "EP", "SEP", "SEP clipped", "DP-SEP")

_RMSE = {  # v0 Table 2 = v1 Table 3 (identical as printed)
    "Naval": _row([0.005, 0.003, 0.002, 0.002, 0.002], [0.0005, 0.0002, 0.0001, 0.0002, 0.0003]),
    "Kin8nm": _row([0.099, 0.088, 0.089, 0.078, 0.078], [0.0009, 0.0044, 0.0042, 0.0033, 0.0022]),
    "Power": _row([4.327, 4.098, 4.061, 4.013, 4.032], [0.0352, 0.1388, 0.1356, 0.1246, 0.1385]),
    "Wine": _row([0.646, 0.614, 0.623, 0.627, 0.627], [0.0081, 0.0382, 0.0436, 0.0411, 0.0362]),
    "Protein": _row([4.842, 4.654, 4.602, 4.581, 4.585],
                    [0.0305, 0.0572, 0.0649, 0.0599, 0.0589]),
    "Year": _row([9.034, 8.865, 8.873, 8.862, 8.862]),
}
_LOGLIK = {  # v0 Table 3 = v1 Table 4
    "Naval": _row([3.734, 4.164, 4.609, 4.710, 4.686], [0.116, 0.0556, 0.0531, 0.0746, 0.1053]),
    "Kin8nm": _row([0.897, 1.007, 0.999, 1.121, 1.125], [0.010, 0.0486, 0.0479, 0.0332, 0.0212]),
    "Power": _row([-2.890, -2.830, -2.821, -2.809, -2.814],
                  [0.010, 0.0313, 0.0316, 0.0293, 0.0323]),
    "Wine": _row([-0.980, -0.926, -0.936, -0.938, -0.938],
                 [0.013, 0.0487, 0.0643, 0.0581, 0.0486]),
    "Protein": _row([-2.992, -2.957, -2.945, -2.941, -2.941],
                    [0.006, 0.0121, 0.0139, 0.0128, 0.0130]),
    "Year": _row([-3.622, -3.604, -3.599, -3.598, -3.597]),
}


def _bnn_rows(table):
    return {ds: dict(zip(_BNN_METHODS, table[ds], strict=True)) for ds in _UCI}


_MOG_V0 = {
    "SEP (ε = ∞)": {"F-norm": (0.0007, None), "KL-divergence (proxy)": (4.3524, None)},
    "DP-SEP (ε = 50)": {"F-norm": (0.5650, None), "KL-divergence (proxy)": (516.8689, None)},
    "DP-SEP (ε = 5)": {"F-norm": (1.6237, None), "KL-divergence (proxy)": (955.0533, None)},
    "DP-SEP (ε = 1)": {"F-norm": (4.2722, None), "KL-divergence (proxy)": (4162.9041, None)},
}
_MOG_V2 = {
    "SEP (ε = ∞)": _MOG_V0["SEP (ε = ∞)"],
    "DP-SEP (ε = 50)": _MOG_V0["DP-SEP (ε = 50)"],
    "DP-SEP (ε = 5.5)": _MOG_V0["DP-SEP (ε = 5)"],
    "DP-SEP (ε = 1)": _MOG_V0["DP-SEP (ε = 1)"],
}
_V1_COLS = ("F-norm on mean", "F-norm on covariance", "average F-norm")
_MOG_V1 = {
    label: dict(zip(_V1_COLS, _row(vals), strict=True)) for label, vals in (
        ("SEP (ε = ∞)", (0.0020, 0.0004, 0.0012)),
        ("SEP-clipped C=20", (0.0263, 0.0004, 0.0134)),
        ("SEP-clipped C=10", (1.4950, 0.0005, 0.7477)),
        ("SEP-clipped C=1", (2.2065, 0.0459, 1.1262)),
        ("DP-EM (ε = 50)", (5.3769, 1.3189, 3.3479)),
        ("DP-EM (ε = 5)", (10.4548, 3.7573, 7.1060)),
        ("DP-EM (ε = 1)", (7.5166, 57.8665, 32.6916)),
        ("DP-SEP (ε = 50)", (2.2411, 0.0358, 1.1385)),
        ("DP-SEP (ε = 5)", (12.1623, 1.0655, 6.6139)),
        ("DP-SEP (ε = 1)", (82.9746, 5.0777, 44.0262)),
    )
}
_POINT_V1 = {
    "Naval": _row([0.001, 0.002], [0.0001, 0.0003]),
    "Kin8nm": _row([0.091, 0.078], [0.0015, 0.0022]),
    "Power": _row([4.182, 4.032], [0.0402, 0.1385]),
    "Wine": _row([0.645, 0.627], [0.0098, 0.0362]),
    "Protein": _row([4.539, 4.585], [0.0288, 0.0589]),
    "Year": _row([8.932, 8.862]),
}

PAPER_TABLES = (
    PaperTable("v0-table1-mog", "v0", "Sec. 6.1, Table 1",
               "Table 1: Accuracy of the posterior distribution (Mixture-of-Gaussian with "
               "Synthetic data)", ("F-norm", "KL-divergence (proxy)"), _MOG_V0),
    PaperTable("v1-table1-mog", "v1", "Sec. 6.1, Table 1",
               "Table 1: Accuracy of the posterior distribution (Mixture-of-Gaussian with "
               "Synthetic data) [...] The values reported in in Table 1 are averages across "
               "five independent runs of each method.", _V1_COLS, _MOG_V1),
    PaperTable("v2-table-mog", "v2", "Sec. 4 (the MoG table, called Table 4 in the text)",
               "In Table 4, we also provide a quantitative analysis of the results above in "
               "terms of F-norm [...] In addition, we use KL divergence",
               ("F-norm", "KL-divergence (proxy)"), _MOG_V2),
    PaperTable("v0-table2-rmse", "v0", "Sec. 6.2, Table 2",
               "Table 2: RMSE on test data (UCI datasets)", _BNN_METHODS, _bnn_rows(_RMSE)),
    PaperTable("v0-table3-loglik", "v0", "Sec. 6.2, Table 3",
               "Table 3: Test log-likelihood (UCI datasets)", _BNN_METHODS,
               _bnn_rows(_LOGLIK)),
    PaperTable("v1-table3-rmse", "v1", "Sec. 6.2, Table 3",
               "Table 3: RMSE on test data (UCI datasets)", _BNN_METHODS, _bnn_rows(_RMSE)),
    PaperTable("v1-table4-loglik", "v1", "Sec. 6.2, Table 4",
               "Table 4: Test log-likelihood (UCI datasets)", _BNN_METHODS,
               _bnn_rows(_LOGLIK)),
    PaperTable("v1-table5-point", "v1", "Appendix C, Table 5",
               "Table 5: RMSE on test data (UCI datasets) [point estimate vs DP-SEP]",
               ("Point Estimate", "DP-SEP"),
               {ds: dict(zip(("Point Estimate", "DP-SEP"), _POINT_V1[ds], strict=True))
                for ds in _UCI}),
)
TABLES = {t.key: t for t in PAPER_TABLES}

# Table 4 (v0) / Table 2 (v1): "Regression datasets. Size, number of numerical features."
DATASET_SIZES = {"Naval": (11934, 16), "Kin8nm": (8192, 8), "Power": (9568, 4),
                 "Wine": (1599, 11), "Protein": (45730, 9), "Year": (515345, 90)}


# --------------------------------------------------------------------------- the statements
def _statement(key, version, location, quote, check):
    return Claim(id=f"dpsep/{key}", kind="experiment-statement", paper=PAPERS[version],
                 location=location,
                 statement=quote, check=check)


TABLE4_CLAIM = Claim(
    id="dpsep/v0-table4-datasets", paper=PAPERS["v0"], location="Sec. 6.2, Table 4",
    statement="Table 4: Regression datasets. Size, number of numerical features.",
    check="row and feature counts of the standard UCI files", kind="table")

_SIGN = "exact one-sided sign tests over paired runs, Bonferroni over the cases compared"
STATEMENTS = {
    "mog-privacy-tradeoff": _statement(
        "mog-privacy-tradeoff", "v0", "Sec. 6.1 (Fig. 1, Table 1) and Sec. 7",
        "However, as we increase the privacy loss, the performance of DP-SEP gets closer to "
        "the non-private ones (SEP and EP) and the ground truth. [Sec. 7:] relaxing the "
        "privacy constraints improves the private posterior approximates.",
        f"F-norm on the means to the Gibbs ground truth: ε = 1 > ε = 5 > ε = 50 > SEP; {_SIGN}"),
    "mog-dpsep-higher-uncertainty": _statement(
        "mog-dpsep-higher-uncertainty", "v0", "Sec. 6.1",
        "The posterior from DP-SEP exhibits a higher uncertainty than the other non-private "
        "methods due to the added noise to the mean and covariance during training.",
        f"total posterior variance Σ_j tr V_j of DP-SEP (each ε) > SEP's and > EP's; {_SIGN}"),
    "clipping-improves-sep": _statement(
        "clipping-improves-sep", "v0", "Sec. 1 (contributions) and Sec. 3",
        "To our surprise, just applying the clipping norm to natural parameters of the "
        "approximate posterior distribution already improved the performance of SEP [...] "
        "just applying a mild form of clipping norm (mild in a sense that it contains most "
        "of the magnitudes of the natural parameters) to the natural parameters improve "
        "performance.",
        f"MoG: F-norm of clipped SEP (C = 1, 10, 20) < SEP's; BNN: see "
        f"bnn-clipping-reduces-rmse; {_SIGN}"),
    "bnn-dpsep-comparable-to-sep": _statement(
        "bnn-dpsep-comparable-to-sep", "v0", "Sec. 6.2 (Tables 2-3)",
        "The results show that DP-SEP performance over the different datasets is "
        "comparable to SEP",
        "per data set, test RMSE of DP-SEP minus SEP within ± the paper's own printed "
        "spread of SEP on that set (two exact sign tests); holds on every set"),
    "bnn-dpsep-better-kin8nm": _statement(
        "bnn-dpsep-better-kin8nm", "v0", "Sec. 6.2 (Tables 2-3)",
        "and even better in some cases as for Kin8nm.",
        "test RMSE of DP-SEP < SEP on Kin8nm; exact sign test over splits"),
    "bnn-clipping-reduces-rmse": _statement(
        "bnn-clipping-reduces-rmse", "v0", "Sec. 6.2 (Tables 2-3)",
        "In fact, clipping the norm of the natural parameters and the intermediate "
        "approximating factor on the SEP algorithm has a positive effect on the original "
        "algorithm and reduces the test averaged RMSE in most cases.",
        f"test RMSE of clipped SEP < SEP on more than half of the sets; {_SIGN}"),
    "bnn-dpsep-better-than-sep": _statement(
        "bnn-dpsep-better-than-sep", "v0", "Sec. 1 and Sec. 7",
        "DP-SEP also performed better than non-private SEP as a result. [Sec. 7:] The "
        "results on PBP show that DP-SEP often yields the posterior approximates that are "
        "better than those by SEP",
        f"test RMSE of DP-SEP < SEP on more than half of the sets ('often' read as 'most'); "
        f"{_SIGN}"),
    "bnn-dpsep-beats-point-estimate": _statement(
        "bnn-dpsep-beats-point-estimate", "v1", "Sec. 6.2 and Appendix C (Table 5)",
        "The results show that in most of the UCI datasets we considered, DP-SEP "
        "outperforms the point estimate.",
        f"test RMSE of DP-SEP < SGD point estimate on more than half of the sets; {_SIGN}"),
    "bnn-ep-beats-vi": _statement(
        "bnn-ep-beats-vi", "v0", "Sec. 1 (with Tables 2-3)",
        "In contrast, expectation Propagation (EP) is known to provide better posterior "
        "uncertainties than VI",
        f"test log-likelihood of EP > VI on every set; {_SIGN}"),
}
