"""ulysim: the analytic planner of sequence parallelism for transformer
training, from Python. One function per command of the ``ulysim`` CLI, its
keyword arguments named as the CLI's long flags (underscores for dashes;
Megatron-LM's names too, as the CLI takes them); each runs the CLI's own
code in this process through the C extension (ulysim._ext), and returns
the command's JSON output wrapped (to_dict() is exactly that JSON).

    >>> import ulysim
    >>> p = ulysim.plan(gpus=64, seq="1M", model="llama3-8b")
    >>> p.recommended_strategy
"""
import os as _os

from . import _ext

__version__ = _ext.version

# a wheel used away from the checkout it was built from: its own presets
_here = _os.path.join(_os.path.dirname(__file__), "presets")
if not _os.path.isdir(_ext.preset_dir_source) and _os.path.isdir(_here):
    _os.environ.setdefault("ULYSIM_PRESETS", _here)

from . import plot  # noqa: E402
from ._cli import run_json as _run_json, run as _run, to_argv as _to_argv  # noqa: E402
from .errors import Error, UsageError, UnknownOptionError, NoFitError, InternalError  # noqa: E402
from .results import Plan, MaxSeq, MinGpus, Sweep, Validation  # noqa: E402
from .search import SearchResult, search  # noqa: E402
from .specs import Model, Cluster  # noqa: E402

__all__ = ["plan", "max_seq", "min_gpus", "sweep", "search", "validate_runs", "presets", "cli", "Model", "Cluster",
           "Plan", "MaxSeq", "MinGpus", "Sweep", "SearchResult", "Validation", "Error", "UsageError",
           "UnknownOptionError", "NoFitError", "InternalError", "plot", "__version__"]


def _planning(command, result_type, doc):
    """The function of one planning command: its flags in, result_type out."""

    def run(**kwargs):
        status, data, argv = _run_json(command, kwargs)
        return result_type(data, argv, status)

    run.__name__ = run.__qualname__ = command.replace("-", "_")
    run.__doc__ = doc
    return run


plan = _planning("plan", Plan, "`ulysim plan`: each strategy's best layout and the recommendation (a Plan).")
max_seq = _planning("max-seq", MaxSeq, "`ulysim max-seq`: the longest sequence each strategy fits on gpus= GPUs.")
min_gpus = _planning("min-gpus", MinGpus, "`ulysim min-gpus`: the fewest GPUs each strategy needs for seq=.")
sweep = _planning("sweep", Sweep, "`ulysim sweep`: each strategy's best layout at every gpus= x seq= (lists or ranges).")


def presets():
    """`ulysim presets`: {"models": [...], "clusters": [...]} with names, descriptions and sources."""
    import json

    return json.loads(_run(["presets", "--format", "json"])[1])


def validate_runs(runs, **kwargs):
    """`ulysim validate --runs FILE`: measured runs (a runs file, docs/runs.md;
    or a pandas DataFrame of its columns) against the model's prices. Limits
    (max_error=, max_run_error=) exceeded: .passed is False, as the CLI's exit 1."""
    import json
    import tempfile

    tmp = None
    if hasattr(runs, "to_csv"):  # a DataFrame: its columns are the runs file's
        fd, tmp = tempfile.mkstemp(prefix="ulysim-runs-", suffix=".csv")
        _os.close(fd)
        _runs_frame_for_cli(runs).to_csv(tmp, index=False)
        runs = tmp
    try:
        argv = ["validate", "--runs", _os.fspath(runs)] + _to_argv(None, kwargs) + ["--format", "json"]
        status, text = _run(argv, ok=(0, 1))
        try:
            data = json.loads(text)
        except ValueError:
            raise InternalError("ulysim: validate --runs: exit %d without a result" % status, status, argv) from None
        return Validation(data, argv, status)
    finally:
        if tmp:
            _os.unlink(tmp)


def _runs_frame_for_cli(df):
    """A DataFrame's switches as the runs file spells them (true/false, docs/runs.md)."""
    df = df.copy()
    for col in df.columns:
        vals = df[col].dropna()
        if len(vals) and all(isinstance(v, (bool,)) or type(v).__name__ == "bool_" for v in vals):
            df[col] = df[col].map(lambda v: "" if v is None or v != v else ("true" if v else "false"))
    return df


def cli(*args):
    """Any ulysim command line, in process: (exit status, stdout text, stderr text)."""
    status, out, err = _ext.run([str(a) for a in args])
    return status, out.decode("utf-8"), err
