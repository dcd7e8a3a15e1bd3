"""The one error for input ddpsim cannot use."""


class InputError(Exception):
    """Input that cannot be used; str() is one line naming the file and what was expected.

    Every command of the package prints it on stderr and exits with status 2.
    """

    def __init__(self, path, expected, got=None):
        message = f"{path}: expected {expected}"
        if got is not None:
            message += f", got {got}"
        super().__init__(message)
