import textwrap

import pytest

from companion import config

CONFIG = textwrap.dedent(
    """
    default_profile: quick
    profiles: {smoke: {}, quick: {}, paper: {}}
    chapters:
      demo:
        seed:    {type: int, min: 0, default: 7}
        n_seeds: {type: int, min: 1, max: 100, default: {smoke: 2, quick: 10, paper: 50}}
        k:       {type: float, min: 0.0, default: 0.0}
        layer:   {type: str, choices: [zeroth, first], default: zeroth}
        data_dir: {type: str, nullable: true, default: null}
        flag:    {type: bool, default: false}
        layers:  {type: str, items: [zeroth, first, second], default: "zeroth,second"}
        ks:      {type: str, items: float, min: 0, choices: [paper], default: "0,0.01"}
    """
)


@pytest.fixture
def fake_repo(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_config.yml").write_text(CONFIG)
    monkeypatch.setenv("COMPANION_ROOT", str(tmp_path))
    monkeypatch.delenv("COMPANION_PROFILE", raising=False)
    return tmp_path


def test_defaults_follow_the_profile(fake_repo):
    assert config.resolve("demo").n_seeds == 10
    assert config.resolve("demo", profile="smoke").n_seeds == 2
    assert config.resolve("demo", profile="paper")["n_seeds"] == 50


def test_environment_variable_switches_profile_and_explicit_wins(fake_repo, monkeypatch):
    monkeypatch.setenv("COMPANION_PROFILE", "smoke")
    assert config.resolve("demo").profile == "smoke"
    assert config.resolve("demo", profile="paper").profile == "paper"


def test_none_means_default_and_overrides_are_recorded(fake_repo):
    s = config.resolve("demo", seed=None, n_seeds=3, k=1)
    assert s.seed == 7 and s.n_seeds == 3
    assert isinstance(s.k, float) and s.k == 1.0
    assert s.overrides == {"n_seeds": 3, "k": 1.0}


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"nope": 1}, "unknown parameter 'nope'; allowed: profile, seed, n_seeds"),
        ({"n_seeds": 0}, "allowed: int in [1, 100]"),
        ({"n_seeds": "3"}, "allowed: int in [1, 100]"),
        ({"n_seeds": True}, "allowed: int"),
        ({"layer": "third"}, "allowed: one of 'zeroth', 'first'"),
        ({"k": -0.1}, "allowed: float >= 0.0"),
    ],
)
def test_bad_values_give_one_clear_line(fake_repo, kwargs, needle):
    with pytest.raises(config.ConfigError) as err:
        config.resolve("demo", **kwargs)
    msg = str(err.value)
    assert needle in msg and "\n" not in msg


def test_unknown_chapter_and_profile(fake_repo):
    with pytest.raises(config.ConfigError, match="unknown chapter 'zzz'; allowed: demo"):
        config.resolve("zzz")
    with pytest.raises(config.ConfigError, match="allowed: smoke, quick, paper"):
        config.resolve("demo", profile="fast")


def test_command_line_strings_are_parsed(fake_repo):
    p = config.schema("demo")
    assert p["n_seeds"].parse("5", "demo") == 5
    assert p["k"].parse("0.005", "demo") == 0.005
    assert p["k"].parse("5e-3", "demo") == 0.005  # YAML 1.1 alone would read this as a string
    with pytest.raises(config.ConfigError, match="parameter 'k' got 'small'"):
        p["k"].parse("small", "demo")
    assert p["flag"].parse("true", "demo") is True
    assert p["data_dir"].parse("none", "demo") is None
    assert p["data_dir"].parse("/tmp/cifar", "demo") == "/tmp/cifar"
    with pytest.raises(config.ConfigError):
        p["n_seeds"].parse("five", "demo")


def test_real_config_is_valid():
    """Every chapter block of the repository's own _config.yml parses, for every profile."""
    for chapter in config.chapter_ids():
        for profile in config.PROFILES:
            config.resolve(chapter, profile=profile)


def test_comma_separated_lists_are_checked_item_by_item(fake_repo):
    p = config.schema("demo")
    assert config.resolve("demo", layers="first").layers == "first"
    assert p["ks"].parse("0,0.005", "demo") == "0,0.005"
    assert p["ks"].parse("0", "demo") == "0"
    assert p["ks"].parse("paper", "demo") == "paper"
    for bad, needle in [("zeroth,third", "names from 'zeroth', 'first', 'second'"), ("", "names from")]:
        with pytest.raises(config.ConfigError, match=needle):
            config.resolve("demo", layers=bad)
    for bad in ("0,-1", "0,x", "papers"):
        with pytest.raises(config.ConfigError, match="comma-separated float values >= 0, or one of 'paper'"):
            p["ks"].parse(bad, "demo")
