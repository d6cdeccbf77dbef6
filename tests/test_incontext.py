"""Tests of mhanw.incontext: attention trained on in-context regression, its gradient, measurements and decisions."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from mhanw import incontext as ic
from mhanw.diversity import haar_expected_hdi
from mhanw.infra.estimates import Estimate
from mhanw.nw import nadaraya_watson_loop


def _gens(k, base=0):
    return [np.random.default_rng(base + i) for i in range(k)]


def _setup(arch, seeds=2, tasks=3, n=6, queries=4, family=None):
    family = family or ic.TaskFamily("gp", arch.d, sigma=0.1)
    params = ic.init_params(arch, _gens(seeds))
    batch = ic.draw_tasks(family, _gens(seeds, 100), tasks, n, queries)
    return params, batch


# --------------------------------------------------------------------------- the model is NW with a learned metric


def test_each_head_is_nadaraya_watson_with_the_learned_metric():
    arch = ic.Architecture(d=3, budget=4, heads=2)
    params, batch = _setup(arch, seeds=1, tasks=2)
    heads, weights = ic.head_outputs(arch, params, batch)
    A = ic.circuits(params)[0]  # (H, d, d)
    for h in range(arch.heads):
        for b in range(2):
            expected = nadaraya_watson_loop(
                batch.Xq[0, b], batch.X[0, b], batch.Y[0, b], lambda q, k, M=A[h]: math.exp(q @ M @ k)
            )
            np.testing.assert_allclose(heads[0, b, h], expected, rtol=1e-12, atol=1e-12)
    # the prediction is sum_h a_h m_h with a_h = W_V^h . W_O^h
    coef = np.einsum("shck,shk->sh", params["V0"], params["O0"])
    np.testing.assert_allclose(ic.predict(arch, params, batch), np.einsum("sh,sbht->sbt", coef, heads), rtol=1e-12)


def test_an_isotropic_circuit_on_the_sphere_is_the_gaussian_smoother():
    d, beta = 4, 0.7
    arch = ic.Architecture(d=d, budget=d, heads=1)
    params, batch = _setup(arch, seeds=1, tasks=2, family=ic.TaskFamily("gp", d, inputs="uniform-sphere"))
    c = math.sqrt(beta * math.sqrt(d))  # A = c^2 I / sqrt(d_k) = beta I
    params["Q0"][:] = c * np.eye(d)
    params["K0"][:] = c * np.eye(d)
    _, weights = ic.head_outputs(arch, params, batch)
    X, Xq = batch.X[0, 0], batch.Xq[0, 0]
    D2 = ((Xq[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    gauss = np.exp(-beta * D2 / 2)
    np.testing.assert_allclose(weights[0, 0, 0], gauss / gauss.sum(axis=1, keepdims=True), rtol=1e-10)
    np.testing.assert_allclose(ic.inverse_temperature(params)[0, 0], beta, rtol=1e-12)


# --------------------------------------------------------------------------- the gradient


@pytest.mark.parametrize(
    "shape",
    [
        dict(d=3, budget=4, heads=2),
        dict(d=4, budget=6, heads=3),
        dict(d=2, budget=4, heads=1),
        dict(d=3, budget=4, heads=2, tied=True),
        dict(d=3, budget=4, heads=2, mlp=5),
        dict(d=3, budget=4, heads=2, layers=2),
        dict(d=3, budget=6, heads=3, layers=2, mlp=4),
    ],
)
def test_gradient_matches_central_finite_differences(shape):
    rng = np.random.default_rng(len(str(shape)))
    arch = ic.Architecture(**shape)
    params, batch = _setup(
        arch, seeds=2, tasks=int(rng.integers(2, 4)), n=int(rng.integers(4, 8)), queries=int(rng.integers(2, 5))
    )
    for key in params:
        if key[:2] in ("b1", "W2"):  # start the MLP away from the identity so every path carries gradient
            params[key] = params[key] + 0.5 * rng.standard_normal(params[key].shape)
    penalty = 0.3 if arch.d_k < arch.d and arch.heads > 1 and not arch.tied else 0.0
    loss, grads = ic.loss_and_grad(arch, params, batch, penalty)
    assert loss.shape == (2,)
    eps = 1e-6
    for key, value in params.items():
        for _ in range(3):  # random directions, tied weights moved together
            v = rng.standard_normal(value.shape)
            if arch.tied and key[0] in "QKVO":
                v[:] = v[:, :1]
            plus = {k: p + eps * v if k == key else p for k, p in params.items()}
            minus = {k: p - eps * v if k == key else p for k, p in params.items()}
            numeric = (
                ic.loss_and_grad(arch, plus, batch, penalty, gradient=False)[0].sum()
                - ic.loss_and_grad(arch, minus, batch, penalty, gradient=False)[0].sum()
            ) / (2 * eps)
            shared = arch.tied and key[0] in "QKVO"  # one weight in every head: its gradient is in each copy
            analytic = float(np.sum((grads[key][:, :1] * v[:, :1]) if shared else grads[key] * v))
            assert analytic == pytest.approx(numeric, rel=1e-6, abs=1e-8), key


def test_single_precision_loss_agrees_with_double():
    arch = ic.Architecture(d=4, budget=8, heads=2)
    params, batch = _setup(arch, seeds=2, tasks=4, n=16, queries=4)
    double, g64 = ic._loss_grad(arch, params, batch, 0.0, True)
    single, g32 = ic._loss_grad(
        arch,
        {k: v.astype(np.float32) for k, v in params.items()},
        ic.TaskBatch(*(getattr(batch, f).astype(np.float32) for f in ("X", "Y", "Xq", "Yq", "Mq"))),
        0.0,
        True,
    )
    np.testing.assert_allclose(single, double, rtol=1e-5)
    for key in g64:
        assert g32[key].dtype == np.float32
        np.testing.assert_allclose(g32[key], g64[key], rtol=1e-3, atol=1e-5 * np.abs(g64[key]).max())


# --------------------------------------------------------------------------- training, streams, controls


FAMILY = ic.TaskFamily("gp", 4, sigma=0.1, lengthscale=1.5)


def test_training_lowers_the_test_error_and_is_reproducible():
    arch = ic.Architecture(d=4, budget=4, heads=2)
    run = ic.train([arch], FAMILY, 16, seed=3, seeds=3, steps=60, tasks=8, queries=4, lr=0.03, record_every=30)
    assert run.steps.tolist() == [0, 30, 60]
    test = ic.fresh_tasks(FAMILY, 3, 3, 32, 16, 4)
    before = ic.evaluate(arch, run.snapshots[0][0], test).mse
    after = ic.evaluate(arch, run.snapshots[0][-1], test).mse
    assert np.all(after < before)
    again = ic.train([arch], FAMILY, 16, seed=3, seeds=3, steps=60, tasks=8, queries=4, lr=0.03, record_every=30)
    for key in run.snapshots[0][-1]:
        np.testing.assert_array_equal(again.snapshots[0][-1][key], run.snapshots[0][-1][key])


def test_each_seed_is_its_own_stream_whatever_the_number_of_seeds():
    arch = ic.Architecture(d=4, budget=4, heads=2)
    kw = dict(steps=5, tasks=4, queries=4, lr=0.01, precision="double")
    two = ic.train([arch], FAMILY, 8, seed=5, seeds=2, **kw)
    one = ic.train([arch], FAMILY, 8, seed=5, seeds=1, **kw)
    for key, value in one.snapshots[0][-1].items():
        np.testing.assert_allclose(two.snapshots[0][-1][key][:1], value, rtol=1e-12, atol=1e-14)
    t2, t1 = ic.fresh_tasks(FAMILY, 5, 2, 3, 8, 2), ic.fresh_tasks(FAMILY, 5, 1, 3, 8, 2)
    np.testing.assert_array_equal(t2.Y[:1], t1.Y)


def test_configurations_of_one_shape_share_start_and_tasks():
    arch = ic.Architecture(d=4, budget=4, heads=2)
    run = ic.train(
        [arch, arch, ic.Architecture(4, 4, 2, tied=True)],
        FAMILY,
        8,
        seed=1,
        seeds=2,
        steps=4,
        tasks=4,
        queries=4,
        lr=0.01,
    )
    start = [s[0] for s in run.snapshots]
    np.testing.assert_array_equal(start[0]["K0"], start[1]["K0"])
    np.testing.assert_array_equal(start[2]["K0"][:, 1], start[0]["K0"][:, 0])  # tied heads copy head 0
    np.testing.assert_array_equal(run.snapshots[0][-1]["K0"], run.snapshots[1][-1]["K0"])  # same tasks, same path
    tied = run.snapshots[2][-1]
    for key in ("Q0", "K0", "V0", "O0"):
        np.testing.assert_array_equal(tied[key][:, 0], tied[key][:, 1])
    assert np.all(np.abs(ic.hdi_keys(tied)) < 1e-12)


def test_the_penalty_drives_heads_apart_and_the_null_family_does_not():
    d = 4
    arch = ic.Architecture(d=d, budget=2, heads=2)
    null = ic.TaskFamily("null", d, sigma=0.1)
    run = ic.train([arch, arch], null, 8, seed=0, seeds=6, steps=40, tasks=4, queries=4, lr=0.03, penalties=(0.0, 1.0))
    word, change = ic.trend(ic.hdi_keys(run.snapshots[1][0]), ic.hdi_keys(run.snapshots[1][-1]), 3.0)
    assert word == "positive" and change.mean > 0.1
    assert np.all(ic.hdi_keys(run.snapshots[1][-1]) > 0.95)


def test_random_heads_meet_their_haar_expectations():
    d, H, d_k = 6, 3, 2
    arch = ic.Architecture(d=d, budget=H * d_k, heads=H)
    params = ic.init_params(arch, _gens(400))
    keys = Estimate.from_samples(ic.hdi_keys(params))
    circ = Estimate.from_samples(ic.hdi_circuits(params))
    assert abs(keys.mean - haar_expected_hdi(d, d_k)) < 4 * keys.se
    assert abs(circ.mean - ic.circuit_haar_hdi(d)) < 4 * circ.se
    assert ic.circuit_haar_hdi(d) == pytest.approx(1 - 1 / d**2)


def test_evaluation_measures():
    arch = ic.Architecture(d=3, budget=4, heads=2)
    params, batch = _setup(arch, seeds=2, tasks=3, n=10, queries=4)
    ev = ic.evaluate(arch, params, batch)
    assert ev.mse.shape == ev.error_corr.shape == ev.neff_layer.shape == (2,)
    assert np.all((ev.neff >= 1 / 10 - 1e-12) & (ev.neff <= 1 + 1e-12))
    flat = {k: v.copy() for k, v in params.items()}
    flat["Q0"][:] = 0.0  # every weight 1/n: a global average, no locality
    ev0 = ic.evaluate(arch, flat, batch)
    np.testing.assert_allclose(ev0.neff, 1.0)
    np.testing.assert_allclose(ev0.distance_ratio, 1.0)
    tied = {k: v.copy() for k, v in params.items()}
    for key in ("Q0", "K0", "V0", "O0"):
        tied[key][:, 1] = tied[key][:, 0]
    np.testing.assert_allclose(ic.evaluate(arch, tied, batch).error_corr, 1.0)


# --------------------------------------------------------------------------- decisions on synthetic paths


def test_trend_flips_on_rising_falling_and_flat_paths():
    rng = np.random.default_rng(0)
    start = rng.normal(0.5, 0.05, 20)
    noise = rng.normal(0, 0.02, 20)
    assert ic.trend(start, start + 0.1 + noise, 3.0)[0] == "positive"
    assert ic.trend(start, start - 0.1 + noise, 3.0)[0] == "negative"
    assert ic.trend(start, start + noise, 3.0)[0] == "neither"
    assert ic.trend(np.zeros(5), np.full(5, 1e-16), 3.0)[0] == "neither"  # rounding is no move
    with pytest.raises(ValueError, match="end"):
        ic.trend(start, start[:3], 3.0)


def test_slope_reads_a_trend_across_sample_sizes():
    rng = np.random.default_rng(3)
    x = np.log2([16, 64, 256, 1024])
    falling = 0.5 - 0.05 * x[:, None] + rng.normal(0, 0.01, (4, 10))
    assert ic.direction(ic.slope(x, falling), 3.0) == "negative"
    assert ic.direction(ic.slope(x, -falling), 3.0) == "positive"
    assert ic.direction(ic.slope(x, rng.normal(0, 0.01, (4, 10))), 3.0) == "neither"
    with pytest.raises(ValueError, match="^x"):
        ic.slope(np.ones(4), falling)


def _surface(log2_star, rng, seeds=8, grid=(1, 2, 4, 8, 16, 32, 64), curvature=0.05, noise=0.01):
    x = np.log2(grid)
    common = rng.normal(0, 0.05, seeds)  # task difficulty shared by every head size (common random numbers)
    return 1.0 + curvature * (x[:, None] - log2_star) ** 2 + common[None, :] + rng.normal(0, noise, (len(grid), seeds))


def test_best_head_size_recovers_a_planted_optimum():
    rng = np.random.default_rng(1)
    grid = (1, 2, 4, 8, 16, 32, 64)
    for star in (2.6, 4.0, 3.3):
        est = ic.best_head_size(grid, _surface(math.log2(star), rng), n_boot=400, seed=2)
        assert abs(est.log2_best - math.log2(star)) < max(4 * est.se_log2, 0.05)
        assert est.interval[0] <= star <= est.interval[1]
        assert not est.censored
    edge = ic.best_head_size(grid, _surface(8.0, rng), n_boot=400, seed=2)  # optimum beyond the grid
    assert edge.censored and edge.best == 64


def _estimates(stars, rng, **kw):
    return [
        ic.best_head_size((1, 2, 4, 8, 16, 32, 64), _surface(math.log2(s), rng, **kw), n_boot=300, seed=i)
        for i, s in enumerate(stars)
    ]


def test_growth_flips_on_rising_and_falling_optima():
    rng = np.random.default_rng(4)
    n = np.array([16, 64, 256, 1024])
    up = ic.growth(n, _estimates([2.0, 3.5, 6.0, 11.0], rng))
    down = ic.growth(n, _estimates([11.0, 6.0, 3.5, 2.0], rng))
    flat = ic.growth(n, _estimates([5.0, 5.0, 5.0, 5.0], rng))
    assert ic.direction(up, 3.0) == "positive"
    assert ic.direction(down, 3.0) == "negative"
    assert ic.direction(flat, 3.0) == "neither"
    assert ic.growth(n, _estimates([256, 256, 256, 256], rng)) is None  # every optimum beyond the grid: censored


@pytest.mark.parametrize("planted", ["M1", "constant"])
def test_compare_laws_finds_the_planted_law(planted):
    rng = np.random.default_rng(7)
    n = np.array([1e1, 1e3, 1e6, 1e9, 1e12])
    stars = 2.0 ** (np.log2(ic.law_values(planted, n, 8)) - np.log2(ic.law_values(planted, n, 8)).mean() + 2.5)
    fits = ic.compare_laws(n, _estimates(stars, rng, noise=0.003), 8)
    assert min(fits, key=lambda k: fits[k].chi2) == planted
    assert ic.law_decision(fits, 0.01) == planted
    assert fits[planted].wins > 0.5
    assert ic.law_decision({}, 0.01) == "cannot tell"


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(seeds=0), "seeds"),
        (dict(steps=0), "steps"),
        (dict(tasks=0), "tasks"),
        (dict(queries=0), "queries"),
        (dict(n=1), "n"),
        (dict(lr=0.0), "lr"),
        (dict(lr=1e3), "lr"),
        (dict(lr=float("nan")), "lr"),
        (dict(record_every=0), "record_every"),
        (dict(precision="half"), "precision"),
        (dict(steps=10**7, n=4096, tasks=4), "steps"),
        (dict(tasks=4096, queries=4096), "tasks"),
        (dict(penalties=(-1.0,)), "penalties"),
        (dict(seed=-1), "seed"),
        (dict(steps=2.5), "steps"),
    ],
)
def test_training_sizes_are_checked(kwargs, name):
    args = dict(
        archs=[ic.Architecture(4, 4, 2)], family=FAMILY, n=8, seed=0, seeds=2, steps=2, tasks=2, queries=2, lr=0.01
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{name}"):
        ic.train(**args)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(d=0), "d"),
        (dict(budget=0), "budget"),
        (dict(heads=3), "heads"),
        (dict(heads=0), "heads"),
        (dict(layers=3), "layers"),
        (dict(mlp=-1), "mlp"),
        (dict(tied=1), "tied"),
    ],
)
def test_architecture_sizes_are_checked(kwargs, name):
    args = dict(d=4, budget=4, heads=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{name}"):
        ic.Architecture(**args)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(kind="tree"), "kind"),
        (dict(d=0), "d"),
        (dict(sigma=-1.0), "sigma"),
        (dict(lengthscale=0.0), "lengthscale"),
        (dict(anisotropy=0.5), "anisotropy"),
        (dict(features=0), "features"),
        (dict(inputs="cube"), "inputs"),
        (dict(kind="function", regression="bvc", d=2), "regression"),
    ],
)
def test_task_family_is_checked(kwargs, name):
    args = dict(kind="gp", d=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{name}"):
        ic.TaskFamily(**args)


def test_penalty_needs_small_heads_and_divergence_names_the_learning_rate(monkeypatch):
    with pytest.raises(ValueError, match="^penalties"):
        ic.train([ic.Architecture(4, 4, 1)], FAMILY, 8, 0, 2, 2, 2, 2, 0.01, penalties=(1.0,))

    real = ic._loss_grad

    def exploding(arch, params, tasks, lam, gradient):
        loss, grads = real(arch, params, tasks, lam, gradient)
        return loss * np.inf, None

    monkeypatch.setattr(ic, "_loss_grad", exploding)
    with pytest.raises(ValueError, match=r"^lr: training of .* diverged at step 1"):
        ic.train([ic.Architecture(4, 4, 2)], FAMILY, 8, 0, 2, 3, 2, 2, 0.01)


def test_task_families_draw_what_they_say():
    gp = ic.TaskFamily("gp", 3, sigma=0.0, features=2048)
    batch = ic.draw_tasks(gp, _gens(1), 400, 4, 1)
    assert np.var(batch.Y) == pytest.approx(1.0, rel=0.15)  # the GP's marginal variance, amplitude^2
    np.testing.assert_allclose(np.linalg.norm(batch.X, axis=-1), math.sqrt(3))  # the sphere of radius sqrt(d)
    null = ic.draw_tasks(ic.TaskFamily("null", 3, sigma=0.5), _gens(1), 4, 8, 2)
    assert np.all(null.Mq == 0)
    fn = ic.TaskFamily("function", 3, regression="iso_cos", rotate=True, inputs="gaussian")
    b = ic.draw_tasks(fn, _gens(1), 2, 5, 2)
    np.testing.assert_allclose(b.Mq, np.cos(1.5 * np.linalg.norm(b.Xq, axis=-1)))  # isotropic: rotation is invisible
    assert ic.TaskFamily("gp", 3).isotropic and not ic.TaskFamily("gp", 3, anisotropy=4.0).isotropic


def test_experiment_sizes_are_checked():
    with pytest.raises(ValueError, match=r"^sizes: missing"):
        ic.heads_apart({"d": 4}, 0)
    bad = dict(ic.QUICK["apart"], heads=1, budget=2)
    with pytest.raises(ValueError, match=r"^sizes"):
        ic.heads_apart(bad, 0)
    size = dict(ic.QUICK["size"], heads={16: (1, 2)})
    with pytest.raises(ValueError, match=r"^sizes\['heads'\]"):
        ic.head_size_sweep(size, 0)


def test_quick_and_paper_settings_meet_the_brief():
    for sizes in (ic.QUICK, ic.PAPER):
        assert set(sizes["apart"]) == set(ic.APART_KEYS) and set(sizes["size"]) == set(ic.SIZE_KEYS)
        assert min(sizes["size"]["budgets"]) <= 16 and max(sizes["size"]["budgets"]) >= 64
        n = sizes["size"]["n_values"]
        assert max(n) / min(n) >= 10
    assert ic.PAPER["apart"]["seeds"] >= 20 and ic.PAPER["size"]["seeds"] >= 5


@pytest.mark.slow
def test_quick_setting_runs_both_experiments():
    apart = ic.heads_apart(ic.QUICK["apart"], 0)
    for result in apart.values():
        assert ic.trend(result["penalised"]["hdi"][0], result["penalised"]["hdi"][-1], 3.0)[0] == "positive"
        assert ic.trend(result["tied"]["hdi"][0], result["tied"]["hdi"][-1], 3.0)[0] == "neither"
    sweep = ic.head_size_sweep(ic.QUICK["size"], 0)
    for D in ic.QUICK["size"]["budgets"]:
        assert sweep[D]["mse"].shape == (
            len(ic.QUICK["size"]["n_values"]),
            len(ic.QUICK["size"]["heads"][D]),
            ic.QUICK["size"]["seeds"],
        )


# --------------------------------------------------------------------------- every refusal names its argument


def _good_calls():
    """Good keyword arguments of every public function of the module (tiny sizes)."""
    arch = ic.Architecture(d=4, budget=4, heads=2)
    params, batch = _setup(arch, seeds=2, tasks=2, n=6, queries=2)
    est = _estimates([3.0, 4.0, 5.0], np.random.default_rng(0))
    n3 = [16.0, 64.0, 256.0]
    tiny_apart = dict(
        ic.QUICK["apart"],
        seeds=2,
        steps=2,
        record_every=1,
        n=8,
        test_tasks=2,
        tasks=2,
        families={"isotropic": ic.FAMILIES["isotropic"]},
        d=4,
        budget=4,
        heads=2,
    )
    tiny_size = dict(
        ic.QUICK["size"],
        d=4,
        budgets=(8,),
        heads={8: (1, 2, 4)},
        n_values=(8, 16),
        seeds=2,
        steps=2,
        tasks=2,
        test_tasks=2,
        n_boot=10,
    )
    return {
        "best_head_size": dict(d_k_values=[1, 2, 4], mse=np.ones((3, 4)) + np.arange(3)[:, None], n_boot=20, seed=0),
        "circuit_haar_hdi": dict(d=4),
        "circuits": dict(params=params, layer=0),
        "compare_laws": dict(n_values=n3, estimates=est, d=8),
        "direction": dict(estimate=Estimate(0.5, 0.1), n_se=3.0),
        "draw_tasks": dict(family=FAMILY, rngs=_gens(2), tasks=2, n=6, queries=2),
        "evaluate": dict(arch=arch, params=params, tasks=batch),
        "fresh_tasks": dict(family=FAMILY, seed=0, seeds=2, tasks=2, n=6, queries=2),
        "growth": dict(n_values=n3, estimates=est),
        "head_outputs": dict(arch=arch, params=params, tasks=batch),
        "head_size_sweep": dict(sizes=tiny_size, seed=0),
        "heads_apart": dict(sizes=tiny_apart, seed=0),
        "hdi_circuits": dict(params=params, layer=0),
        "hdi_keys": dict(params=params, layer=0),
        "init_params": dict(arch=arch, rngs=_gens(2)),
        "inverse_temperature": dict(params=params, layer=0),
        "law_decision": dict(fits=ic.compare_laws(n3, est, 8), alpha=0.05),
        "law_values": dict(law="M1", n_values=n3, d=8),
        "loss_and_grad": dict(arch=arch, params=params, tasks=batch, penalty=0.1, gradient=True),
        "predict": dict(arch=arch, params=params, tasks=batch),
        "slope": dict(x=[1.0, 2.0, 3.0], values=np.ones((3, 4))),
        "train": dict(
            archs=[arch],
            family=FAMILY,
            n=6,
            seed=0,
            seeds=2,
            steps=2,
            tasks=2,
            queries=2,
            lr=0.01,
            penalties=(0.0,),
            record_every=1,
            precision="single",
        ),
        "trend": dict(start=np.zeros(4), end=np.ones(4), n_se=3.0),
    }


GOOD_CALLS = _good_calls()
BAD = [float("nan"), -3, "bad", np.full((3, 3, 3, 3), 0.5), 10**30]


def test_the_blame_sweep_covers_every_public_function():
    import inspect

    functions = {n for n in ic.__all__ if inspect.isfunction(getattr(ic, n))}
    assert functions == set(GOOD_CALLS)


@pytest.mark.parametrize("name", sorted(GOOD_CALLS))
def test_every_refusal_names_the_argument_that_was_bad(name):
    f = getattr(ic, name)
    good = GOOD_CALLS[name]
    f(**good)
    wrong = []
    for arg in good:
        for bad in BAD:
            try:
                with np.errstate(all="ignore"):
                    f(**{**good, arg: bad})
            except ValueError as exc:
                head = str(exc).split(": ", 1)[0]
                blamed = [re.split(r"[\[.]", part.strip(), maxsplit=1)[0] for part in head.split(",")]
                if arg not in blamed or "\n" in str(exc):
                    wrong.append(f"{arg}={bad!r:.30}: {str(exc)[:160]}")
            except Exception as exc:  # noqa: BLE001 - any other exception is a finding
                wrong.append(f"{arg}={bad!r:.30}: raw {type(exc).__name__}: {str(exc)[:120]}")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


def test_a_task_batch_with_nan_or_mismatched_shapes_is_refused():
    arch = ic.Architecture(d=3, budget=4, heads=2)
    params, batch = _setup(arch, seeds=2, tasks=2, n=6, queries=2)
    Y = batch.Y.copy()
    Y[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^tasks\.Y"):
        ic.predict(arch, params, ic.TaskBatch(batch.X, Y, batch.Xq, batch.Yq, batch.Mq))
    with pytest.raises(ValueError, match=r"^tasks: expected 2 seeds"):
        ic.evaluate(arch, params, ic.TaskBatch(batch.X, batch.Y[:, :, :3], batch.Xq, batch.Yq, batch.Mq))
