"""ulysim.search(): every layout the search prices, in arrays. Checked
against the ulysim executable's sweep of the same flags: as many rows per
(strategy, GPUs, sequence) as the sweep says it evaluated, and the best of
them (worked out here: feasible first, then most tokens/s, then fewest
bytes) is the layout and speed the sweep reports."""
import array

import pytest

import ulysim

CASES = [
    dict(gpus=[16, 64], seq=["128K", "1M"]),
    dict(gpus=32, seq="256K", model="llama3-70b", global_batch=32),
    dict(gpus=64, seq="512K", strategy="usp,ring", pp="auto"),
    dict(gpus=16, seq="64K", tensor_model_parallel_size=2, cluster="dgx-a100-80g"),
]


def argv_of(kwargs):
    argv = ["sweep"]
    for k, v in kwargs.items():
        argv += ["--" + k.replace("_", "-"), ",".join(map(str, v)) if isinstance(v, list) else str(v)]
    return argv


def better(rows, i, j):
    """Is row i better than row j (as the search ranks them, written out here)?"""
    if rows["feasible"][i] != rows["feasible"][j]:
        return rows["feasible"][i] > rows["feasible"][j]
    if rows["feasible"][i]:
        if rows["tokens_per_s"][i] != rows["tokens_per_s"][j]:
            return rows["tokens_per_s"][i] > rows["tokens_per_s"][j]
        bi = rows["comm_fwd_bytes"][i] + rows["comm_bwd_bytes"][i]
        bj = rows["comm_fwd_bytes"][j] + rows["comm_bwd_bytes"][j]
        return bi < bj
    return False  # infeasible ties keep the first: compared on the feasible ones only


@pytest.mark.parametrize("kwargs", CASES, ids=[repr(c) for c in CASES])
def test_search_against_sweep(cli_json, kwargs):
    swept = cli_json(*argv_of(kwargs))
    got = ulysim.search(**kwargs)
    cols = got.columns
    assert all(isinstance(v, array.array) and len(v) == len(got) for v in cols.values())
    assert got.evaluated == len(got)
    groups = {}
    for i in range(len(got)):
        key = (got.strategies[cols["strategy"][i]], cols["gpus"][i], cols["seq"][i])
        groups.setdefault(key, []).append(i)
    n_checked = 0
    for row in swept["plans"]:
        key = (row["strategy"], row["gpus"], row["seq"])
        idx = groups.get(key, [])
        assert len(idx) == row["layouts_evaluated"], key
        if not row["feasible"] or not idx:
            continue
        best = idx[0]
        for i in idx[1:]:
            if better(cols, i, best):
                best = i
        d = row["degrees"]
        assert (cols["ulysses"][best], cols["ring"][best], cols["tp"][best], cols["dp"][best], cols["pp"][best]) == (
            d["ulysses"], d["ring"], d["tp"], d["dp"], d["pp"]), key
        assert cols["tokens_per_s"][best] == pytest.approx(row["step"]["tokens_per_s"], rel=1e-14)  # JSON: 15 digits
        assert list(got.placement(best)) == row["placement"]
        n_checked += 1
    assert n_checked >= 2


def test_search_pandas_and_numpy():
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    got = ulysim.search(gpus=64, seq="1M")
    a = got.to_numpy()
    assert a["tokens_per_s"].dtype == np.float64 and len(a["gpus"]) == len(got)
    df = got.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == len(got)
    assert set(df["strategy"].cat.categories) == set(got.strategies)
    assert df["feasible"].sum() == got.n_feasible


def test_search_errors_as_the_cli(cli):
    rc, _, err = cli("sweep", "--gpus", "8,x", "--tp", "8")
    assert rc == 2
    with pytest.raises(ulysim.UsageError) as e:
        ulysim.search(gpus="8,x", tp=8)
    assert e.value.message == err.strip()
