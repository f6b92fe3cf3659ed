"""ulysim._cli: keyword arguments to the ulysim command line, and one run of
it in this process (ulysim._ext.run: the code the ``ulysim`` executable runs).
Only the spelling changes here; every value is checked by the CLI."""
import json
import numbers

from . import _ext
from .errors import error_for


def flag_name(key):
    """A keyword to its flag: tensor_model_parallel_size -> --tensor-model-parallel-size."""
    return "--" + key.replace("_", "-")


def value_text(value):
    """A value as the CLI reads it: sizes as ints or the CLI's strings ("1M"),
    lists and ranges as A,B,C, Model and Cluster objects as their file."""
    if hasattr(value, "_cli_value"):
        return value._cli_value()
    if isinstance(value, (list, tuple, range)):
        return ",".join(value_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


def to_argv(command, kwargs):
    """argv after the program name: the command, then each keyword as a flag
    (True: the switch; False: its --no- form; None: left out)."""
    argv = [command] if command else []
    for key, value in kwargs.items():
        if value is None:
            continue
        flag = flag_name(key)
        if value is True:
            argv.append(flag)
        elif value is False:
            argv.append("--no-" + flag[2:])
        else:
            text = value_text(value)
            # a value starting with '-' would read as an option: NAME=VALUE
            argv.extend([flag + "=" + text] if text.startswith("-") else [flag, text])
    return argv


def run(argv, ok=(0,)):
    """Runs argv; returns (status, stdout text). A status outside ok raises
    the ulysim.Error subclass of the CLI's exit status, with its message."""
    status, out, err = _ext.run(list(argv))
    if status not in ok:
        raise error_for(status, err, argv)
    return status, out.decode("utf-8")


def run_json(command, kwargs, ok=(0,)):
    """A planning command with --format json: (status, the parsed output)."""
    if "format" in kwargs:
        raise TypeError("format: results are Python objects (to_dict() is the CLI's JSON)")
    argv = to_argv(command, kwargs) + ["--format", "json"]
    status, text = run(argv, ok)
    return status, json.loads(text), argv
