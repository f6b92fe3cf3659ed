"""ulysim.search(): every layout the search prices, in columns. The C
extension resolves the request as `ulysim sweep` does and calls libulysim's
uly_search_each on each (GPUs, sequence, strategy); each priced layout is
one row of the arrays (array.array), not one Python object."""
from . import _cli, _ext
from .errors import error_for

__all__ = ["SearchResult", "search"]

_STRATEGIES, _GROUPS = _ext.names()


class SearchResult:
    """Columns of equal length, one row per layout priced:
    strategy (id into .strategies), gpus, seq, ulysses, ring, tp, dp, pp, vpp,
    order (the rank order, innermost first, 4 bits a group: .placement(i)),
    micro_batch, feasible, step_s, tokens_per_s, tflops_per_gpu, mfu,
    mem_bytes, comm_fwd_bytes, comm_bwd_bytes (per rank per layer)."""

    strategies = tuple(_STRATEGIES)

    def __init__(self, columns, evaluated, feasible, argv):
        self.columns = columns
        self.evaluated = evaluated
        self.n_feasible = feasible
        self.argv = argv

    def __len__(self):
        return len(self.columns["gpus"])

    def __getitem__(self, name):
        return self.columns[name]

    def __getattr__(self, name):
        cols = self.__dict__.get("columns")
        if cols is not None and name in cols:
            return cols[name]
        raise AttributeError(name)

    def keys(self):
        return list(self.columns)

    def placement(self, i):
        """Row i's rank order, innermost group first: ('tp', 'ulysses', 'ring', 'dp')."""
        code = self.columns["order"][i]
        return tuple(_GROUPS[(code >> (4 * k)) & 15] for k in range(4) if (code >> (4 * k)) & 15)

    def strategy(self, i):
        return self.strategies[self.columns["strategy"][i]]

    def row(self, i):
        """Row i as a dict (names for strategy and placement)."""
        d = {k: v[i] for k, v in self.columns.items()}
        d["strategy"] = self.strategy(i)
        d["placement"] = self.placement(i)
        d["feasible"] = bool(d["feasible"])
        return d

    def to_numpy(self):
        """{column: numpy array} sharing the arrays' memory (no copy)."""
        import numpy as np

        return {k: np.frombuffer(v, dtype=np.dtype(v.typecode)) for k, v in
                self.columns.items()}

    def to_pandas(self):
        """A DataFrame, strategy as a categorical of the strategies' names."""
        import pandas as pd

        cols = self.to_numpy()
        df = pd.DataFrame(cols)
        df["strategy"] = pd.Categorical.from_codes(cols["strategy"].astype("int64"), categories=list(self.strategies))
        df["feasible"] = df["feasible"].astype(bool)
        return df

    def __repr__(self):
        return "<ulysim.SearchResult: %d layouts priced, %d feasible>" % (len(self), self.n_feasible)


def search(**kwargs):
    """Every layout priced by the search of `ulysim sweep` with these flags
    (gpus and seq may be lists or ranges, e.g. gpus="8..1024", seq=[131072,
    "1M"]): a SearchResult of arrays."""
    if "format" in kwargs:
        raise TypeError("format: search returns arrays")
    argv = _cli.to_argv("sweep", kwargs)
    got = _ext.search(argv)
    if got[0] != 0:
        raise error_for(got[0], "ulysim: " + got[1], argv)
    return SearchResult(got[1], got[2], got[3], argv)
