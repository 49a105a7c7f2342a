"""Sphinx configuration: the API reference of dpclaims, built from its docstrings.

Build with ``make docs`` (warnings are errors). The docstrings are numpy-style
(napoleon); the CLI page is generated from the click commands (sphinx-click); the
guide's pages are Markdown (myst-parser).
"""

import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

project = "dpclaims"
author = "the dpclaims authors"
copyright = "2026, the dpclaims authors"
from dpclaims import __version__ as release  # noqa: E402

version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_click",
    "myst_parser",
]

# The user's guide, the papers' findings, the architecture and the benchmarks are
# Markdown (MyST), read beside the reStructuredText reference.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Types from annotations only where a parameter is documented (a dataclass documents
# its fields as Attributes; an added "Parameters" list would repeat them).
autodoc_typehints_description_target = "documented"
autodoc_typehints_format = "short"

# Option names such as --relation stay as typed (no en dashes).
smartquotes = False

# Ambiguous cross-references only (e.g. two budgets both have an ``n_trials`` field,
# which napoleon links from "shape (n_trials, ...)"): not an error in a docstring.
suppress_warnings = ["ref.python"]

exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = []
html_title = f"dpclaims {release}"
