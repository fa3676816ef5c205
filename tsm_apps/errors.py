"""Errors that the CLI reports as a one-line message with exit code 2 (no traceback)."""


class UserError(Exception):
    """Bad input from the user: a file, line or shape that is not what was expected."""
