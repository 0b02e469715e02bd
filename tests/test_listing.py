"""``audit list``: fast (nothing simulated, the engine not imported) and
without losing information.  The white-box column is derived from what the
algorithms declare and checked here against the scenario-based computation
it replaced (the engine's ``applicable_modes`` on every default attack's
pairs, pilots included); every attack's cheap ``applies`` against building
its pairs; every attack states its own needs; ``audit list ALGO`` says what
applies to one algorithm, built from ``audit run``'s flags."""
from __future__ import annotations

import subprocess
import sys

import pytest

from algorithms import REGISTRY, build
from attacks import ATTACKS
from attacks.base import refuse_losses
from audit.cli import listing
from audit.cli.common import STREAM_ATTACKS, check_attack_applies
from audit.cli.main import main


@pytest.fixture(scope="module")
def registered():
    return {name: build(name) for name in REGISTRY}


def scenario_based_modes(alg) -> list[str]:
    """The white-box column as ``audit list`` computed it before: every
    default attack's scenarios (event pilots included; ``patterns`` without
    its events), through the engine's ``applicable_modes``."""
    from audit.engine.evidence.whitebox import WHITE_MODES, applicable_modes
    found: list[str] = []
    for name in alg.default_attacks:
        attack = ATTACKS.get(name)
        try:
            if attack is None:
                scenarios = []
            elif name == "patterns":
                scenarios = attack.scenarios(alg, events=False)
            else:
                scenarios = attack.scenarios(alg)
        except ValueError:
            continue
        for sc in scenarios:
            found += [m for m in applicable_modes(sc) if m not in found]
    return [m for m in WHITE_MODES if m in found]


def test_the_engine_constants_listing_mirrors():
    from audit.engine.evidence.whitebox import WHITE_MODES
    from audit.engine import scenarios
    assert listing.WHITE_MODES == WHITE_MODES
    assert STREAM_ATTACKS == scenarios.STREAM_ATTACKS
    from audit.engine.evidence.whitebox import INTEGRAL_DECLARATIONS
    assert listing.INTEGRAL_KEYS == tuple(INTEGRAL_DECLARATIONS)


def test_derived_white_box_modes_equal_the_scenario_based_ones(registered):
    """For every registered algorithm (about 10 s: the old computation runs
    the pilots the listing no longer runs).  Also the default-attacks
    column against the engine's ``attack_names``."""
    from audit.engine.scenarios import attack_names
    seen = set()
    for name, alg in registered.items():
        derived = listing.white_box_modes(alg)
        assert derived == scenario_based_modes(alg), name
        assert listing.default_attack_names(alg) == attack_names(alg, None), name
        seen.update(derived)
    assert seen == set(listing.WHITE_MODES)   # every mode occurs: the check is not vacuous


def test_derived_modes_for_other_shapes():
    """Pairs the registered defaults do not cover: lemma51's group of k > 1
    rounds (no white-box mode), k = 1, and the canary's rebuilt conversion."""
    for alg, attack in [(build("private-exp3", epsilon=0.25), "lemma51"),   # k = 4
                        (build("exp3", horizon=200), "lemma51"),              # k = 1
                        (build("private-exp3"), "canary"), (build("exp3"), "g1"),
                        (build("private-ftpl"), "first-round")]:
        alg.default_attacks = (attack,)
        assert listing.white_box_modes(alg) == scenario_based_modes(alg), (alg.name, attack)
    assert listing.attack_modes(ATTACKS["lemma51"], build("private-exp3", epsilon=0.25)) == []
    assert listing.attack_modes(ATTACKS["lemma51"], build("exp3", horizon=200)) != []


def _applies_by_building(attack, alg) -> bool:
    """Whether ``attack`` applies, the slow way: its scenarios, pilots and
    all, then the algorithm's own check of every pair's losses."""
    if alg.learner.reads_first and attack.name not in STREAM_ATTACKS:
        return False
    try:
        if attack.name == "search":
            attack.applies(alg)      # its scenarios are a search of seconds
            return True
        kw = {"events": False} if attack.name == "patterns" else {}
        if attack.name == "optimised":     # the engine hands it the exact objective
            from audit.engine.models.objective import pair_objective
            attack.applies(alg)
            return pair_objective(alg) is not None
        for sc in attack.scenarios(alg, **kw):
            refuse_losses(attack.name, sc.algorithm, sc.losses_a, sc.losses_b)
    except ValueError:
        return False
    return True


def test_cheap_applies_agrees_with_building_the_pairs(registered):
    """``check_attack_applies`` runs no pilot; it must say what building the
    pairs says, for every registered algorithm and attack (about 10 s)."""
    disagree = []
    for name, alg in registered.items():
        for attack in ATTACKS.values():
            try:
                check_attack_applies(attack, alg)
                cheap = True
            except ValueError:
                cheap = False
            if cheap != _applies_by_building(attack, alg):
                disagree.append((attack.name, name, cheap))
    assert not disagree


def test_an_attack_whose_pairs_the_algorithm_refuses_does_not_apply(capsys):
    """PRIVATEBANDIT's loss rows are functions: an attack for learners with
    one loss per arm is refused before anything runs (it used to be listed
    as applying and to fail inside the simulation)."""
    assert main(["run", "pfb-laplace", "--attack", "first-round", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--attack first-round: attack first-round: pfb-laplace refuses its losses: " in err
    assert "(T, n + 2" in err


def test_listing_imports_no_engine_and_no_heavy_library():
    """What keeps ``audit list`` under a second: it simulates nothing and
    loads neither the engine nor scipy.stats, sklearn, matplotlib, dask or
    dp_accounting (checked in a fresh interpreter, for each form)."""
    heavy = ("audit.engine", "scipy.stats", "sklearn", "matplotlib", "dask", "dp_accounting",
             "algorithms.simulate")
    for argv in (["list"], ["list", "--attacks"], ["list", "svt1"], ["list", "private-exp3"]):
        code = ("import contextlib, io, sys\n"
                "from audit.cli.main import main\n"
                "with contextlib.redirect_stdout(io.StringIO()):\n"
                f"    assert main({argv!r}) == 0\n"
                f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        loaded = eval(r.stdout.strip().splitlines()[-1])
        # attacks import algorithms.simulate for their pilots; nothing may run them
        assert [m for m in loaded if m != "algorithms.simulate"] == [], (argv, loaded)


def test_known_gaussian_sigma_is_dp_accountings():
    from dp_accounting import get_sigma_gaussian
    from algorithms.projection_free.catalog import KNOWN_UNIT_SIGMA
    for (eps, delta), sigma in KNOWN_UNIT_SIGMA.items():
        assert float(get_sigma_gaussian(eps, delta)) == sigma


def test_every_attack_says_what_it_needs(capsys):
    assert main(["list", "--attacks"]) == 0
    out = capsys.readouterr().out
    text = " ".join(out.split())
    for name, attack in ATTACKS.items():
        assert attack.needs and "\n" not in attack.needs, name
        assert f"needs: {' '.join(attack.needs.split())} applies to:" in text, name
    # tbe-full-row's need is its own, not another algorithm's refusal
    assert "(code, a_1..a_4, b)" not in text
    assert len({a.needs for a in ATTACKS.values()}) >= len(ATTACKS) - 2


def _section(out: str, head: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index(head) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("    ")),
               len(lines))
    return lines[start:end]


def test_list_one_registered_name(capsys):
    assert main(["list", "private-exp3", "--epsilon", "0.5", "--horizon", "500"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("private-exp3  (T = 500, K = 2)\n")
    assert "  claim: ε = 0.5, scope actions — Asi, Raman & Talwar" in out
    assert "neighbours: one-round" in out
    assert "  default attacks: canary, first-round, batch-edge, search\n" in out
    assert "  white-box modes with them: pld\n" in out
    rows = {ln.split()[0]: ln.split()[1:] for ln in
            _section(out, "  attacks that apply (--attack NAME):")}
    assert rows["canary"] == ["default", "white-box:", "pld"]
    assert rows["search"] == ["default", "white-box:", "pld"]   # its pairs get it too
    assert "as-tree-level" not in rows and "patterns" not in rows
    assert f"      needs: {ATTACKS['patterns'].needs[:40]}" in out


def test_list_one_user_factory_with_build_flags(capsys):
    assert main(["list", "tests.user_algos:named_params", "--arms", "3", "--horizon", "50",
                 "--param", "tau=2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("broken  (T = 50, K = 3, from tests.user_algos:named_params)")
    assert "  default attacks: first-round, search\n" in out
    assert "    g1\n      needs: a learner with K = 2 arms" in out
    assert "      here: attack g1 needs K = 2 arms; broken has K = 3" in out
    assert main(["list", "tests.user_algos:named_params", "--param", "tau=0"]) == 2
    assert "tau must be an integer >= 1" in capsys.readouterr().err


def test_list_one_stream_mechanism_and_a_default_that_does_not_apply(capsys):
    assert main(["list", "svt1"]) == 0
    out = capsys.readouterr().out
    assert "    patterns   default  white-box: integral" in out
    assert "    optimised  default  white-box: integral" in out
    assert "attacks for learners do not apply: svt1 is a mechanism over a stream" in out
    assert main(["list", "exp3", "--arms", "3"]) == 0
    out = capsys.readouterr().out
    assert "    g1  (a default attack: 'audit run' without --attack refuses to run)" in out


@pytest.mark.parametrize("argv,words", [
    (["list", "svt1", "--attacks"], "--attacks lists every attack"),
    (["list", "--horizon", "5"], "--horizon builds the algorithm named by ALGO"),
    (["list", "svt7"], "unknown algorithm 'svt7'; did you mean svt1, svt2, svt3?"),
])
def test_list_usage_errors(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
