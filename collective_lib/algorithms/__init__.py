"""The algorithms of the book, one module per chapter topic.

Importing a module registers its programs in :func:`collective_lib.catalog`.
"""
