"""ArviZ interop: ``to_inference_data()`` and diagnostics equal to ArviZ's on the same draws.

R-hat is ArviZ's rank-normalised split R-hat and ESS its bulk and tail ESS (Vehtari et al. 2021),
so every R-hat and ESS a results object reports must be what ``arviz.rhat``/``arviz.ess`` and
``arviz.summary`` give on the draws of its ``to_inference_data()``, also after a NetCDF round
trip."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from edueval.pairwise import BradleyTerry, HierarchicalBradleyTerry, RaterModel
from edueval.pairwise._sampler import arviz_module

from .reference import simulate
from .test_cli import SMALL, comparisons  # noqa: F401 - the fixture
from .test_hierarchical import simulate_pooled
from .test_raters import simulate_raters

QUICK = {"chains": 2, "warmup": 100, "draws": 100}


@pytest.fixture(scope="module")
def az():
    return arviz_module()


@pytest.fixture(scope="module")
def bt_fit():
    df, _ = simulate(5, 15, seed=4)
    return BradleyTerry(df, ties="drop", seed=2).fit(**QUICK)


def _summary(az, idata, var_names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.summary(idata, var_names=var_names, round_to="none")


def test_inference_data_has_named_dims_coords_and_sample_stats(bt_fit):
    idata = bt_fit.to_inference_data()
    post = idata.posterior
    G, K = bt_fit.design.n_groups, len(bt_fit.design.agents)
    assert post["alpha"].dims == ("chain", "draw", "group", "agent")
    assert post["alpha"].shape == (2, 100, G, K)
    assert post["alpha0"].dims == ("chain", "draw", "group")
    assert list(post["agent"].values) == list(bt_fit.design.agents)
    assert list(post["item"].values) == list(bt_fit.design.keys["item"])
    assert post["group"].values[0] == "/".join(bt_fit.design.keys.iloc[0].astype(str))
    np.testing.assert_array_equal(post["alpha"].values, bt_fit.alpha)
    assert idata.sample_stats["diverging"].shape == (2, 100)
    assert int(idata.sample_stats["n_steps"].sum()) == int(bt_fit.draws.num_steps.sum())


def test_rhat_and_ess_equal_arviz_on_the_same_draws(bt_fit, az, tmp_path):
    """Also through NetCDF: what ``--save-draws`` writes gives ArviZ the same diagnostics."""
    path = tmp_path / "posterior.nc"
    bt_fit.to_inference_data().to_netcdf(str(path))
    idata = az.from_netcdf(str(path))
    rhat = az.rhat(idata, method="rank")
    bulk, tail = az.ess(idata, method="bulk"), az.ess(idata, method="tail")
    summ = _summary(az, idata, ["alpha", "alpha0"])
    for row in bt_fit.abilities.itertuples():
        where = {"group": f"{row.item}/{row.attribute}", "agent": row.agent}
        assert row.rhat == pytest.approx(float(rhat["alpha"].sel(where)), rel=1e-12)
        assert row.ess_bulk == pytest.approx(float(bulk["alpha"].sel(where)), rel=1e-12)
        assert row.ess_tail == pytest.approx(float(tail["alpha"].sel(where)), rel=1e-12)
        s = summ.loc[f"alpha[{where['group']}, {row.agent}]"]
        assert (row.rhat, row.ess_bulk, row.ess_tail) == pytest.approx(
            (s["r_hat"], s["ess_bulk"], s["ess_tail"]), rel=1e-12
        )
    for row in bt_fit.groups.itertuples():
        s = summ.loc[f"alpha0[{row.item}/{row.attribute}]"]
        assert (row.alpha0_rhat, row.alpha0_ess_bulk, row.alpha0_ess_tail) == pytest.approx(
            (s["r_hat"], s["ess_bulk"], s["ess_tail"]), rel=1e-12
        )
    reported = [f"alpha[{r.item}/{r.attribute}, {r.agent}]" for r in bt_fit.abilities.itertuples()]
    reported += [f"alpha0[{r.item}/{r.attribute}]" for r in bt_fit.groups.itertuples()]
    assert bt_fit.max_rhat == pytest.approx(summ.loc[reported, "r_hat"].max(), rel=1e-12)
    assert bt_fit.min_ess == pytest.approx(
        summ.loc[reported, ["ess_bulk", "ess_tail"]].min().min(), rel=1e-12
    )
    # the posterior means are the abilities table's
    means = idata.posterior["alpha"].mean(("chain", "draw"))
    first = bt_fit.abilities.iloc[0]
    assert first["alpha_mean"] == pytest.approx(
        float(means.sel(group=f"{first['item']}/{first['attribute']}", agent=first["agent"]))
    )


def test_short_chains_warn_and_ess_is_never_negative():
    """2 chains x 30 draws: numpyro's ESS printed 'min ESS -12043' and no warning here."""
    df, _ = simulate(4, 12, seed=8)
    res = BradleyTerry(df, ties="drop", seed=3).fit(chains=2, warmup=30, draws=30)
    for col in ("ess_bulk", "ess_tail"):
        assert (res.abilities[col] >= 0).all() and np.isfinite(res.abilities[col]).all()
    assert res.min_ess >= 0 and res.min_ess < 400
    assert res.diagnostics()["n_ess_below_400"] > 0
    text = res.summary()
    assert "warning:" in text and "ESS < 400" in text
    assert "SSR median" in text and "misfitting (infit t > 2)" in text
    assert "min ESS bulk" in text and "-" not in text.split("min ESS bulk ")[1].split()[0]


def test_hierarchical_inference_data_and_diagnostics(az):
    df, _ = simulate_pooled({"T": 0.5, "B": 0.0, "G": -0.3}, n_items=5, n_per_item=15, seed=3)
    res = HierarchicalBradleyTerry(df, ties="drop", seed=1, agent_order=["T", "B", "G"]).fit(
        **QUICK
    )
    idata = res.to_inference_data()
    post = idata.posterior
    assert post["mu"].dims == ("chain", "draw", "attribute", "agent")
    assert list(post["agent"].values) == ["T", "B", "G"]
    assert post["alpha"].shape == (2, 100, len(res.design.keys), 3)
    assert post["sigma"].dims == ("chain", "draw", "attribute")
    rhat = az.rhat(idata, method="rank")
    np.testing.assert_allclose(res.sigma["rhat"], rhat["sigma"].values, rtol=1e-12)
    np.testing.assert_allclose(
        res.sigma["ess_tail"], az.ess(idata, method="tail")["sigma"].values, rtol=1e-12
    )
    d = res.differences.iloc[0]
    diff = post["mu"].sel(attribute=d["attribute"], agent=d["agent_a"]) - post["mu"].sel(
        attribute=d["attribute"], agent=d["agent_b"]
    )
    assert d["diff_mean"] == pytest.approx(float(diff.mean()))
    diff = diff.drop_vars([c for c in diff.coords if c not in ("chain", "draw")])
    diff = diff.to_dataset(name="d")
    assert d["rhat"] == pytest.approx(float(az.rhat(diff, method="rank")["d"]), rel=1e-12)
    assert d["ess_bulk"] == pytest.approx(float(az.ess(diff, method="bulk")["d"]), rel=1e-12)
    it = res.items.iloc[2]
    where = {"group": f"{it['attribute']}/{it['item']}", "agent": it["agent"]}
    assert it["ess_bulk"] == pytest.approx(
        float(az.ess(idata, method="bulk")["alpha"].sel(where)), rel=1e-12
    )
    assert "min ESS bulk" in res.summary()


def test_rater_inference_data_names_the_raters(az):
    df = simulate_raters(n_raters=5, n_items=6, seed=1)
    res = RaterModel(df, per="attribute", ties="drop", seed=2).fit(**QUICK)
    post = res.to_inference_data().posterior
    assert set(post["rater"].values) == set(res.raters["rater"])
    assert post["alpha0"].dims == ("chain", "draw", "group")
    g = res.groups.iloc[0]
    x = post["alpha0"].sel(group=f"{g['rater']}/{g['attribute']}")
    x = x.drop_vars([c for c in x.coords if c not in ("chain", "draw")]).to_dataset(name="a0")
    assert g["alpha0_rhat"] == pytest.approx(float(az.rhat(x, method="rank")["a0"]), rel=1e-12)


def test_fit_save_draws_writes_netcdf(cli, comparisons, tmp_path):  # noqa: F811
    out = tmp_path / "fit"
    res = cli("pairwise", "fit", comparisons, "--out", out, *SMALL, "--save-draws")
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    config = json.loads((out / "config.json").read_text())
    assert results["posterior"] == "posterior.nc" and config["params"]["save_draws"] is True
    groups, agents = results["n_groups"], pd.read_csv(out / "abilities.csv")["agent"].nunique()
    with xr.open_dataset(out / "posterior.nc", group="posterior") as post:
        assert post["alpha"].dims == ("chain", "draw", "group", "agent")
        assert post["alpha"].shape == (2, 150, groups, agents)
        assert post["alpha0"].shape == (2, 150, groups)
    # without the flag (and over the same folder) no draws are written, none left over
    res = cli("pairwise", "fit", comparisons, "--out", out, *SMALL, "--overwrite")
    assert res.code == 0, res.err
    assert not (out / "posterior.nc").exists()
    assert "posterior" not in json.loads((out / "results.json").read_text())


def test_each_group_is_listed_once_with_the_group_coordinates(tmp_path):
    # issue 39: adding the group columns as coordinates listed `posterior` twice (ArviZ 0.x)
    from edueval.pairwise._sampler import inference_data

    keys = pd.DataFrame({"item": ["i1", "i2"], "attribute": ["a", "a"]})
    rng = np.random.default_rng(0)
    idata = inference_data(
        {"alpha": rng.normal(size=(2, 5, 2, 3)), "alpha0": rng.normal(size=(2, 5, 2))},
        dims={"alpha": ["group", "agent"], "alpha0": ["group"]},
        coords={"group": ["i1/a", "i2/a"], "agent": ["x", "y", "z"]},
        group_coords=keys,
    )
    groups = list(idata.groups()) if callable(getattr(idata, "groups", None)) else []
    if groups:  # ArviZ 0.x; a DataTree (1.x) has its children by name, once each by design
        assert groups == ["posterior"]
    post = idata.posterior
    assert list(post["item"].values) == ["i1", "i2"]
    assert list(post["attribute"].values) == ["a", "a"]
