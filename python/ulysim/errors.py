"""ulysim.errors: the exceptions of the package, one per exit status of the
``ulysim`` command, carrying the command's own one-line message."""
import re

__all__ = ["Error", "UsageError", "UnknownOptionError", "NoFitError", "InternalError"]

# "--flag 'value': ..." or "--flag value: ...": the flag, then its value as
# the CLI quotes it (text_quote: single quotes, backslash escapes)
_FLAG_VALUE = re.compile(r"^(--[A-Za-z0-9][\w-]*)(?:[ =]('(?:[^'\\]|\\.)*'|[^\s:']+))?")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _unquote(s):
    if len(s) >= 2 and s[0] == "'" and s[-1] == "'":
        s = s[1:-1]
        return re.sub(r"\\(.)", r"\1", s)
    return s


class Error(Exception):
    """A command the CLI refuses or fails on.

    message: the line the CLI prints on stderr (``ulysim: ...``), exactly;
    status:  the CLI's exit status; flag: the option it names, or None;
    value:   the offending value as typed (unquoted), or None."""

    def __init__(self, message, status, argv=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.argv = list(argv) if argv is not None else None
        body = message.split(": ", 1)[1] if message.startswith("ulysim: ") else message
        m = _FLAG_VALUE.match(body)
        self.flag = m.group(1) if m else None
        self.value = _unquote(m.group(2)) if m and m.group(2) else None
        if self.value is None:
            q = _QUOTED.search(body)
            self.value = _unquote(q.group(0)) if q else None


class UsageError(Error, ValueError):
    """Exit status 2: a bad flag or value (the CLI's one line names it and what would be valid)."""


class UnknownOptionError(UsageError, TypeError):
    """Exit status 2 for a keyword argument the CLI does not know as a flag."""


class NoFitError(Error):
    """Exit status 3 (require_fit=True): the request ran and no plan fits."""


class InternalError(Error, RuntimeError):
    """Exit status 1: an internal failure, or a validation past its limits."""


def error_for(status, stderr, argv=None):
    """The exception for a CLI exit status and its stderr (the last line that says something)."""
    lines = [ln.split("\r")[-1].strip() for ln in stderr.splitlines()]
    lines = [ln for ln in lines if ln]
    message = lines[-1] if lines else "ulysim: exit status %d" % status
    if status == 2:
        cls = UnknownOptionError if "unknown option" in message else UsageError
    elif status == 3:
        cls = NoFitError
    else:
        cls = InternalError
    return cls(message, status, argv)
