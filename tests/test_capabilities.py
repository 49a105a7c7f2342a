"""A mechanism's or an algorithm's members are read in one place.

The rule: a call of ``hasattr`` or ``getattr`` in ``src/dpclaims`` is either in the
resolver module, :mod:`dpclaims.audits.capabilities` (which reads a user's object once
into a frozen capabilities value), or applied to something that is not a mechanism or an
algorithm. Those unrelated uses are listed in :data:`ALLOWED` by the file's name and the
source of the call's first argument (a module, an exception, a dataclass's own ``self``,
a library's object, a record domain ...); anything else fails, so a new reading of a
user's object by name has to go through the resolver. The file's name, not its folder,
keys the list, so that a module moved to another package keeps its entries.

A second test: :mod:`dpclaims.testing` is a facade for users' tests; no module of
dpclaims imports it (the checks it re-exports live in
:mod:`dpclaims.claims.checks.mechanism`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpclaims

SRC = Path(dpclaims.__file__).resolve().parent
RESOLVER = SRC / "audits" / "capabilities.py"

#: (file name, source of the first argument): hasattr / getattr on no mechanism or algorithm
ALLOWED = {
    ("cli_endings.py", "exc"),                        # an exception
    ("enclosures.py", "out"),                         # a numpy array or a sequence (ravel)
    ("core.py", "checks"),                            # claims.core's moved names (PEP 562)
    ("checks.py", "exc"),                             # an exception (add_note)
    ("checks.py", "value"),                           # an exception (add_note)
    ("registry.py", "import_module(module)"),         # a module (the score/threshold table)
    ("plugin.py", "import_module(module)"),           # a module (PEP 562)
    ("__init__.py", "import_module(f'dpclaims.audits.{module}')"),  # a module (PEP 562)
    ("core.py", "self"),                              # a dataclass's own fields
    ("core.py", "scorer"),                            # a score object of audits.scores
    ("core.py", "obj"),                               # claims.core's JSON conversion
    ("core.py", "exc"),                               # an exception (add_note)
    ("core.py", "value"),                             # an exception (add_note)
    ("scores.py", "self.fn"),                         # a score function's __name__
    ("scores.py", "fitted"),                          # a fitted scikit-learn model
    ("cluster.py", "client"),                         # a Dask client
    ("processes.py", "o"),                            # any object being pickled (its module)
    ("processes.py", "type(o)"),                      # its type's module
    ("processes.py", "module"),                       # a module (its __file__)
    ("processes.py", "pool"),                         # a ProcessPoolExecutor's processes
    ("privacy_numbers.py", "entry"),                  # a dataclass's own fields
    ("registry.py", "ep"),                            # an entry point
    ("registry.py", "paper.run"),                     # a paper's run function (__module__)
    ("registry.py", "kinds"),                         # a type (__name__)
    ("user_code.py", "module"),                       # a module
    ("paper.py", "self"),                             # a dataclass's own fields
    ("sensitivity.py", "providers"),                  # hypothesis' module
    ("sensitivity.py", "obj"),                        # an example's __dict__ (shrinking)
    ("kl_tail_bound.py", "self"),                     # a dataclass's own fields
    ("checks_thm41.py", "st"),                        # a study's dataclass fields
    ("checks.py", "st"),                              # a study's dataclass fields
    ("checks_blr_sbn.py", "b"),                       # a budget's fields
    ("whole_run.py", "self"),                         # a family's own dataclass fields
    ("pbp.py", "self"),
    ("step.py", "self"),
    ("lda.py", "self"),
    ("sbn.py", "self"),
    ("mechanism.py", "domain"),                       # a record domain (analysis.domains)
}


def _calls():
    for path in sorted(SRC.rglob("*.py")):
        if path == RESOLVER:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("hasattr", "getattr") and node.args):
                yield path, node.lineno, ast.unparse(node.args[0])


def test_only_the_resolver_reads_an_object_by_name():
    bad = [f"{p.relative_to(SRC)}:{line}: {arg}" for p, line, arg in _calls()
           if (p.name, arg) not in ALLOWED]
    assert not bad, ("hasattr/getattr outside dpclaims.audits.capabilities on something "
                     "not in ALLOWED (read a mechanism's or an algorithm's members through "
                     "read_mechanism / read_algorithm):\n" + "\n".join(bad))


def test_no_module_of_dpclaims_imports_the_testing_facade():
    importers = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "testing.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if isinstance(node, ast.ImportFrom) and node.module == "dpclaims":
                names += [f"dpclaims.{a.name}" for a in node.names]
            if "dpclaims.testing" in names:
                importers.append(str(path.relative_to(SRC)))
    assert not importers, f"dpclaims.testing is a facade for users' tests: {importers}"


def test_a_value_read_once_is_returned_as_it_is():
    from dpclaims.audits.mechanism import validate_mechanism
    from dpclaims.mechanisms import laplace

    caps = validate_mechanism(laplace())
    assert validate_mechanism(caps) is caps and caps.sensitivity is not None
