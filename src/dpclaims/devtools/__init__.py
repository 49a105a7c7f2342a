"""Tools for the project's own structure (not used by the library at run time)."""
