"""Pure mathematics: Gaussian exponential-family algebra, accounting, Thm. 4.1's bound.

Imports nothing else of the project.
"""
