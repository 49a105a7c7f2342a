"""``dpclaims check-variant``: check a user's mechanism the way the papers' are checked.

A variant is any object following the :class:`~dpclaims.audits.mechanism.Mechanism`
protocol (or a zero-argument factory returning one), loaded from ``FILE.py:OBJECT``
or from an importable ``package.module:OBJECT`` (e.g. the literature's mechanisms,
``dpclaims.mechanisms:report_noisy_max_value``). Besides the protocol's ``name``,
``claim`` and ``release``, the checks use these optional attributes:

``query(data)`` and ``sensitivity``
    The property test of the claimed sensitivity (a :class:`Sensitivity`, or a
    plain number read as the L2 sensitivity), and the canary search.
``data``
    The dataset the neighbouring pairs are built around.
``domain``
    The record domain (:mod:`dpclaims.analysis.domains`: ``Box``, ``Ball``,
    ``FiniteSet``, ``Product``): without ``data``, the property test and the pair search draw
    datasets from it; with ``data``, its patterns are tried as canaries too.
``candidates``
    Records the canary search and the property test draw from (default: the
    records of ``data``).
``records``
    A hypothesis strategy of single records for the property test (default: the
    domain's records, else ``sampled_from(candidates)``).
``neighbouring_pairs()``
    Pairs to consider besides the searched ones (e.g. the literature's).
``score``
    The audit's attack score (a name of :mod:`dpclaims.audits.scores` or a callable
    ``outputs (n, k) -> (n,)``); default ``--score`` (auto).

One verdict per claim the variant makes:

``<name>/sensitivity``  (when it states a sensitivity) property test: is the
    sensitivity a bound on ``||query(D) - query(D')||`` over neighbours under the
    claim's relation?
``<name>/accounting``  (when its claim has a ``dp_event``) the event recomputed by
    every accountant (:func:`~dpclaims.analysis.accounting.account_event`):
    ``refuted`` when an exact accountant (the analytic Gaussian for compositions of
    plain Gaussians; the pure-DP composition at delta = 0) gives a larger epsilon,
    ``holds`` when an upper-bound accountant gives at most the claimed epsilon,
    ``inconclusive`` otherwise.
``<name>/empirical-audit``  (always) :func:`~dpclaims.audits.core.audit` on the pair
    chosen by :func:`~dpclaims.audits.search.select_pair` among
    :func:`~dpclaims.audits.search.candidate_pairs` (a selection phase on trials of
    its own; the certificate on fresh trials at the full alpha).

A check that cannot run (a sensitivity but no query, no data and no domain, no
pair to audit on) gives ``not-checkable``: nothing was checked for that claim.

Exit codes (:func:`exit_code`): 0 every claim of the variant was checked and none
is refuted; 1 a claim is refuted; 2 bad input; 3 none is refuted but at least
one claim was not checkable (nothing was checked for it).
"""

from __future__ import annotations

import contextlib

from dpclaims.analysis.accounting import account_event
from dpclaims.analysis.records import dataset_as_lists
from dpclaims.audits.capabilities import has_run, is_factory, read_mechanism
from dpclaims.audits.mechanism import (
    InvalidMechanismError,
    sensitivity_note,
    sensitivity_of,
    validate_data,
    validate_mechanism,
)
from dpclaims.audits.scores import ScoreError
from dpclaims.audits.search import (
    candidate_pairs,
    derived_seed,
)
from dpclaims.audits.whole_run import validate_algorithm
from dpclaims.claims import Claim, InputError, Verdict
from dpclaims.claims.budgets import VariantBudget  # noqa: F401  (re-exported)
from dpclaims.claims.checks.bounds import audit_verdict, epsilon_bounds, search_verdict
from dpclaims.claims.checks.mechanism import property_test, record_strategy, select_and_audit
from dpclaims.claims.checks.whole_run import check_algorithm
from dpclaims.claims.headline import (  # noqa: F401  (re-exported: check-variant's codes)
    EXIT_BAD_INPUT,
    EXIT_NOT_CHECKED,
    EXIT_OK,
    EXIT_REFUTED,
    exit_code,
)
from dpclaims.claims.kernel import Claimed, decide, not_checkable
from dpclaims.execution.user_code import (  # noqa: F401  (re-exported)
    USER_SOURCES,
    describe_user_error,
    load_object,
    register_source,
    user_frame,
)
from dpclaims.property_tests.strategies import neighbouring_datasets


def load_variant(spec: str, as_mechanism: bool = True):
    """Load ``FILE.py:OBJECT`` or ``package.module:OBJECT``: the object, or the result of
    calling it if it is a factory (a class, or a callable without ``release``).
    ``as_mechanism=False``: the object as it is (e.g. a query function), unchecked.

    A file is imported as a module named after it (registered in ``sys.modules``
    so that worker processes can unpickle its classes); a dotted name is imported
    with :func:`importlib.import_module`.

    Raises
    ------
    InputError
        A malformed spec, a missing file or module, an import error, a missing
        object, or an object that is not a mechanism (with the reason).
    """
    obj = load_object(spec, "variant")
    obj_name = spec.rpartition(":")[2]
    if not as_mechanism:
        return obj
    if is_factory(obj):
        try:
            obj = obj()
        except Exception as exc:
            where = describe_user_error(exc)
            raise InputError(f"calling the factory {obj_name}() failed: "
                             + (where or f"{type(exc).__name__}: {exc}")) from exc
    return validated(obj)


def validated(obj):
    """``obj`` if it is a usable mechanism or algorithm, else InputError: the one validation
    of a user's object, shared by ``check-variant`` and the ``[[audit]]`` entries of
    ``check`` (through :func:`load_variant` and :func:`check_variant`).

    The protocol (:func:`~dpclaims.audits.mechanism.validate_mechanism`, or
    :func:`~dpclaims.audits.whole_run.validate_algorithm` for an object with ``run``) and
    the records it brings (:func:`~dpclaims.audits.mechanism.validate_data`: real, finite,
    inside the declared domain). Its outputs are checked where they are drawn (every
    release by :func:`~dpclaims.audits.mechanism.draw_release`, the rng by
    :func:`~dpclaims.audits.mechanism.output_shape`); run the checks inside
    :func:`bad_input` so that those errors are bad input under both commands.
    """
    with bad_input():
        if has_run(obj):   # an algorithm (dpclaims.audits.whole_run)
            obj = validate_algorithm(obj)
        else:
            obj = validate_mechanism(obj)
        validate_data(obj)
    return obj


@contextlib.contextmanager
def bad_input():
    """Turn what a user's object did wrong (InvalidMechanismError: a release, run, query
    or data that is not what the protocol asks; ScoreError: a bad score) into InputError,
    bad input (exit 2), under ``check-variant`` and ``check`` alike."""
    try:
        yield
    except (InvalidMechanismError, ScoreError) as exc:
        raise InputError(str(exc)) from exc


def _claim(mech, kind: str, statement: str, check: str) -> Claim:
    kinds = {"sensitivity": "sensitivity", "accounting": "privacy-number",
             "empirical-audit": "audit"}
    return Claim(f"{mech.name}/{kind}", f"variant {mech.name!r}", "user mechanism",
                 statement, check, kind=kinds.get(kind))


def check_sensitivity_claim(mech, budget: VariantBudget, seed: int) -> Verdict | None:
    """The property test of the claimed sensitivity; None when the variant states none.

    Datasets come from ``data`` (pairs built around it, records from ``records``,
    the ``domain`` or ``candidates``) or, without data, from the ``domain``
    (:func:`~dpclaims.property_tests.strategies.neighbouring_datasets`).
    """
    mech = read_mechanism(mech)   # a mechanism, or an object with a query only (`check`)
    sens = sensitivity_of(mech)
    if sens is None:
        return None
    query = mech.query
    relation = mech.claim.relation
    claim = _claim(mech, "sensitivity",
                   f"||query(D) - query(D')||_{sens.norm} <= {sens.value} for {relation} "
                   "neighbours", "hypothesis property test")
    note = sensitivity_note(mech)
    data, domain = mech.data, mech.domain
    records = record_strategy(mech, domain)
    missing = []
    if query is None:
        missing.append("`query`")
    if data is None and domain is None:
        missing.append("`data` or a record `domain`")
    elif records is None:
        missing.append("records to draw (`candidates`, `records` or a `domain`)")
    if missing:
        return not_checkable(claim, "as-given",
                             f"{' and '.join(missing)}: the variant states a sensitivity, "
                             "but no neighbouring datasets can be evaluated",
                             evidence={"note": note} if note else {}, seed=seed)
    strategy = neighbouring_datasets(records, relation, base=data)
    res = property_test(query, sens, strategy, budget.max_examples, seed, mech.name)
    ev = {"claimed": sens.value, "norm": str(sens.norm), "max_ratio": res.max_ratio,
          "n_examples": res.n_examples, "relation": relation,
          "datasets": "around `data`" if data is not None else
          f"drawn from the domain {domain.to_dict()}"}
    if note:
        ev["note"] = note
    if res.violated:
        d0, d1 = res.counterexample
        ev["counterexample"] = {"d0": dataset_as_lists(d0), "d1": dataset_as_lists(d1),
                                "ratio": res.counterexample_ratio}
    return search_verdict(claim, "as-given", res, quantity=f"L{sens.norm} sensitivity",
                          pairs=f"{relation} pairs ({ev['datasets']})",
                          context=("Shrunk counterexample in the evidence."
                                   if res.violated else ""), evidence=ev, seed=seed)


def check_accounting_claim(mech, seed: int) -> Verdict | None:
    """The claim's ``dp_event`` recomputed by every accountant (module docstring); None
    when the claim has no dp_event (no accounting claim is made).

    The bracket of the verdict kernel: the smallest certified upper bound of any
    accountant and the largest certified lower bound (the exact Gaussian's bracket, the
    pure-DP composition at delta = 0, the optimistic PLD refined toward the claim). The
    query is a user's, not known to be a clipped sum: under replace-one with Poisson
    sampling the PLD's ball model is not used as a bound
    (:func:`~dpclaims.analysis.accounting.account_event`, ``query="general"``).
    """
    c = mech.claim
    if c.dp_event is None:
        return None
    claim = _claim(mech, "accounting", f"the dp_event is ({c.epsilon:.6g}, {c.delta:g})-DP "
                   f"under {c.relation}", "accounting recomputation")
    res = account_event(c.dp_event, c.delta, c.relation, query="general")
    claimed = Claimed("epsilon", c.epsilon)
    lower, upper, res = epsilon_bounds(res, claimed, f"the claim's dp_event, {c.relation}, "
                                       f"delta {c.delta:g}")
    rows = {r.name: r.epsilon for r in res.rows if r.epsilon is not None}
    table = ", ".join(f"{k} {v:.4g}" for k, v in rows.items())
    needs = [r.name for r in res.rows if r.epsilon is None and "needs delta > 0" in r.note]
    if needs:
        table += f"; {', '.join(needs)} need delta > 0"
    ev = {"claimed_epsilon": c.epsilon, "accounting": res.to_dict()}
    model = [r.name for r in res.rows if r.bound == "model" and r.epsilon is not None]
    if model:
        ev["note"] = (f"{', '.join(model)} not used as a bound: under replace-one with "
                      "Poisson sampling it assumes contributions centred in a ball of radius "
                      "Delta/2")
    return decide(claim, "as-given", claimed, lower=lower, upper=upper,
                  context=f"Every accountant: {table or 'none supported'}.", evidence=ev,
                  seed=seed)


def check_audit_claim(mech, budget: VariantBudget, seed: int) -> tuple[Verdict, object]:
    """The empirical audit on the selected pair (module docstring); (verdict, result or None)."""
    c = mech.claim
    claim = _claim(mech, "empirical-audit", f"each release is ({c.epsilon:.6g}, {c.delta:g})-DP "
                   f"under {c.relation}", "empirical audit (Clopper-Pearson certificate)")
    pairs = candidate_pairs(mech, seed=derived_seed(seed, 6), n_random=budget.n_random_pairs)
    if not pairs:
        return not_checkable(claim, "as-given",
                             "a pair to audit on: the variant has no `data` (or fewer than two "
                             "distinct candidate records), no record `domain` and no "
                             "`neighbouring_pairs()`", seed=seed), None
    score = read_mechanism(mech).score or budget.score
    selection, r = select_and_audit(mech, pairs, n_trials=budget.n_trials,
                                    selection_trials=budget.pilot_trials, alpha=budget.alpha,
                                    score=score, seed=seed, workers=budget.workers)
    ev = {"alpha": budget.alpha, "pair_selection": selection.to_dict(), "audit": r.to_dict(),
          "threat_model": "black box: the adversary sees one output of the mechanism and "
                          "knows the neighbouring pair"}
    how = (f"{budget.n_trials} trials per dataset, score {r.score_name}"
           f"{'' if r.tie_probability is None else ' (randomised threshold)'}; "
           f"{selection.n_candidates} candidate pair(s)")
    return audit_verdict(claim, "as-given", r,
                         source=f"Clopper-Pearson audit on pair '{r.pair['description']}' "
                                f"({how})", evidence=ev, seed=seed), r


def check_variant(mech, budget: VariantBudget, seed: int = 0, tick=lambda name: None):
    """Run the checks of every claim ``mech`` makes; return (verdicts, sections, meta).

    Raises InputError when the variant misbehaves (a release of the wrong or a
    changing shape, non-finite values, a bad score, pairs under the wrong relation).
    An algorithm (``run`` instead of ``release``) is checked by
    :func:`dpclaims.claims.checks.whole_run.check_algorithm`.
    """
    mech = validated(mech)
    if has_run(mech):    # an algorithm (both run and release: InputError)
        with bad_input():
            verdicts, sections, meta = check_algorithm(
                mech, budget, seed, tick, accounting_check=check_accounting_claim)
        return verdicts, sections, {**meta, "exit code": exit_code(verdicts)}
    with bad_input():
        verdicts = []
        tick("property test of the sensitivity")
        v = check_sensitivity_claim(mech, budget, seed)
        if v is not None:
            verdicts.append(v)
        tick("accounting")
        v = check_accounting_claim(mech, seed)
        if v is not None:
            verdicts.append(v)
        tick("empirical audit")
        v, result = check_audit_claim(mech, budget, seed)
        verdicts.append(v)
    sections = []
    if result is not None:
        sel = v.evidence["pair_selection"]
        rows = [[p["pair"], f"{p['pilot_certificate']:.4g}", f"{p['pilot_credible_bound']:.4g}",
                 f"{p['pilot_auroc']:.3f}", p["score"]] for p in sel["pilots"]]
        sections.append({
            "title": "Audit",
            "text": (f"Claimed epsilon {mech.claim.epsilon:.6g} at delta {mech.claim.delta:g} "
                     f"under {mech.claim.relation}. Certificate (Clopper-Pearson, holds with "
                     f"the stated confidence): epsilon >= {result.epsilon_lower_bound:.4g} on "
                     f"'{result.pair['description']}', score: {result.score} "
                     f"({result.score_choice}). The GDP and credible values are estimates "
                     f"and never refute. Pair: {sel['rule']}."),
            "table": {"columns": ["candidate pair", "pilot certificate", "pilot credible bound",
                                  "pilot AUROC", "score"], "rows": rows} if rows else None,
        })
    not_made = []
    if sensitivity_of(mech) is None:
        not_made.append("sensitivity (none stated)")
    if mech.claim.dp_event is None:
        not_made.append("accounting (the claim has no dp_event)")
    meta = {"mechanism": mech.name, "claim": mech.claim.to_dict(), "seed": seed,
            "budget": budget.to_dict(), "claims not made": not_made,
            "exit code": exit_code(verdicts)}
    return verdicts, sections, meta
