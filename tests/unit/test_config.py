from __future__ import annotations

from pathlib import Path

import pytest

from croupier.config import ConfigError, KafkaSettings, LogSettings, RedisSettings, StackSettings


def test_defaults_work_on_a_laptop() -> None:
    s = StackSettings.from_env({})
    assert (s.host, s.kafka_port, s.kafka_controller_port, s.redis_port) == ("127.0.0.1", 19092, 19093, 16379)
    assert s.state_dir.name == ".croupier" and s.state_dir.is_absolute()
    assert s.kafka_bootstrap == "127.0.0.1:19092"
    assert KafkaSettings.from_env({}).bootstrap_servers == "127.0.0.1:19092"
    assert RedisSettings.from_env({}).url == "redis://127.0.0.1:16379/0"
    assert LogSettings.from_env({}) == LogSettings(level="info", format="json")


def test_env_overrides(tmp_path: Path) -> None:
    env = {
        "CROUPIER_STATE_DIR": str(tmp_path),
        "CROUPIER_KAFKA_PORT": "29092",
        "CROUPIER_KAFKA_CONTROLLER_PORT": "29093",
        "CROUPIER_REDIS_PORT": "26379",
        "CROUPIER_REDIS_PERSIST": "no",
        "CROUPIER_STACK_START_TIMEOUT": "12.5",
    }
    s = StackSettings.from_env(env)
    assert (s.state_dir, s.kafka_port, s.kafka_controller_port, s.redis_port) == (tmp_path, 29092, 29093, 26379)
    assert s.redis_persist is False and s.start_timeout == 12.5
    # Clients follow the stack's ports unless told otherwise.
    assert KafkaSettings.from_env(env).bootstrap_servers == "127.0.0.1:29092"
    assert RedisSettings.from_env(env).url == "redis://127.0.0.1:26379/0"
    assert KafkaSettings.from_env({**env, "CROUPIER_KAFKA_BOOTSTRAP": "a:1,b:2"}).bootstrap_servers == "a:1,b:2"
    # ... and its host: a stack moved to another loopback address is still found.
    moved = {**env, "CROUPIER_STACK_HOST": "127.0.0.2"}
    assert StackSettings.from_env(moved).host == "127.0.0.2"
    assert KafkaSettings.from_env(moved).bootstrap_servers == "127.0.0.2:29092"
    assert RedisSettings.from_env(moved).url == "redis://127.0.0.2:26379/0"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CROUPIER_KAFKA_PORT": "kafka"}, "CROUPIER_KAFKA_PORT='kafka' is not valid: expected an integer"),
        ({"CROUPIER_REDIS_PORT": "70000"}, "CROUPIER_REDIS_PORT='70000' is not valid"),
        ({"CROUPIER_REDIS_PERSIST": "maybe"}, "expected true or false"),
        ({"CROUPIER_STACK_START_TIMEOUT": "0"}, "greater than 0"),
        ({"CROUPIER_KAFKA_HEAP": "lots"}, "CROUPIER_KAFKA_HEAP='lots'"),
        ({"CROUPIER_REDIS_PORT": "19092"}, "the stack's ports must differ"),
    ],
)
def test_a_bad_value_names_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        StackSettings.from_env(env)


def test_bad_client_settings() -> None:
    with pytest.raises(ConfigError, match="CROUPIER_KAFKA_BOOTSTRAP"):
        KafkaSettings.from_env({"CROUPIER_KAFKA_BOOTSTRAP": "no port"})
    for bootstrap in ("a:99999", "a:1,b:65536", "a:0"):  # five digits were taken as a port
        with pytest.raises(ConfigError, match="CROUPIER_KAFKA_BOOTSTRAP.*1..65535"):
            KafkaSettings.from_env({"CROUPIER_KAFKA_BOOTSTRAP": bootstrap})
    assert KafkaSettings.from_env({"CROUPIER_KAFKA_BOOTSTRAP": "a:65535"}).bootstrap_servers == "a:65535"
    with pytest.raises(ConfigError, match="CROUPIER_REDIS_URL"):
        RedisSettings.from_env({"CROUPIER_REDIS_URL": "localhost:6379"})
    for url, problem in (("redis://a:99999/0", "port"), ("redis://a:0/0", "port"), ("redis://a:x/0", "port"),
                         ("redis://:6379/0", "no host"), ("redis://a:6379/zero", "database"), ("unix://", "socket")):
        with pytest.raises(ConfigError, match=f"CROUPIER_REDIS_URL.*{problem}"):
            RedisSettings.from_env({"CROUPIER_REDIS_URL": url})
    for url in ("redis://a:65535/15", "redis://a", "rediss://user:secret@a:6380/", "unix:///run/redis.sock"):
        assert RedisSettings.from_env({"CROUPIER_REDIS_URL": url}).url == url
    with pytest.raises(ConfigError, match="CROUPIER_LOG_LEVEL"):
        LogSettings.from_env({"CROUPIER_LOG_LEVEL": "loud"})


def test_settings_are_frozen() -> None:
    s = StackSettings.from_env({})
    with pytest.raises(AttributeError):
        s.kafka_port = 1  # type: ignore[misc]


def test_gc_settings_from_the_environment() -> None:
    from croupier.config import GcSettings

    assert GcSettings.from_env({}) == GcSettings(threshold=(20_000, 20, 20), freeze=True)
    assert GcSettings.from_env({"CROUPIER_GC_THRESHOLD": "700, 10, 10", "CROUPIER_GC_FREEZE": "no"}) == \
        GcSettings(threshold=(700, 10, 10), freeze=False)
    assert GcSettings.from_env({"CROUPIER_GC_THRESHOLD": "0"}).threshold == (0, 0, 0)
    for bad in ("700,10", "a,b,c", "-1,10,10", "99999999,1,1"):
        with pytest.raises(ConfigError, match="CROUPIER_GC_THRESHOLD"):
            GcSettings.from_env({"CROUPIER_GC_THRESHOLD": bad})


def test_tune_gc_sets_the_thresholds_and_freezes_what_start_up_made() -> None:
    import gc

    from croupier.config import GcSettings
    from croupier.runtime import tune_gc

    before, enabled = gc.get_threshold(), gc.isenabled()
    try:
        tune_gc(GcSettings(threshold=(12_345, 7, 3), freeze=True))
        assert gc.get_threshold() == (12_345, 7, 3) and gc.isenabled()
        assert gc.get_freeze_count() > 0
        tune_gc(GcSettings(threshold=(0, 0, 0), freeze=False))
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        (gc.enable if enabled else gc.disable)()


def test_a_service_with_a_bad_gc_setting_says_so_and_exits_2() -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "CROUPIER_GC_THRESHOLD": "lots"}
    out = subprocess.run([sys.executable, "-m", "croupier.cli.main", "serve", "projector"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "CROUPIER_GC_THRESHOLD='lots' is not valid" in out.stderr


def test_the_event_loop_is_uvloop_unless_told_otherwise() -> None:
    from croupier.config import event_loop

    assert event_loop({}) == "uvloop"
    assert event_loop({"CROUPIER_EVENT_LOOP": " AsyncIO "}) == "asyncio"
    with pytest.raises(ConfigError, match="CROUPIER_EVENT_LOOP='tokio' is not valid: expected uvloop or asyncio"):
        event_loop({"CROUPIER_EVENT_LOOP": "tokio"})


@pytest.mark.parametrize(("name", "module"), [("uvloop", "uvloop"), ("asyncio", "asyncio")])
def test_run_runs_the_main_coroutine_on_the_named_loop(name: str, module: str) -> None:
    import asyncio

    from croupier.runtime import run

    async def main() -> str:
        await asyncio.sleep(0)
        return type(asyncio.get_running_loop()).__module__

    assert run(main(), {"CROUPIER_EVENT_LOOP": name}).split(".")[0] == module


def test_run_with_a_bad_event_loop_starts_nothing() -> None:
    import warnings

    from croupier.runtime import run

    started = []

    async def main() -> None:
        started.append(True)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine was never awaited" would be a leak
        with pytest.raises(ConfigError, match="CROUPIER_EVENT_LOOP"):
            run(main(), {"CROUPIER_EVENT_LOOP": "twisted"})
    assert started == []


@pytest.mark.parametrize("argv", [["serve", "gateway"], ["loadtest", "--tables", "1", "--duration", "1"]])
def test_a_bad_event_loop_is_told_before_anything_starts(argv: list[str]) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "CROUPIER_EVENT_LOOP": "tokio"}
    out = subprocess.run([sys.executable, "-m", "croupier.cli.main", *argv], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "CROUPIER_EVENT_LOOP='tokio' is not valid: expected uvloop or asyncio" in out.stderr


def test_the_state_dir_is_the_checkouts_wherever_the_command_runs(tmp_path: Path, monkeypatch) -> None:
    """It was .croupier of the current directory: `croupier stack status` run elsewhere
    reported a running stack as stopped (and `stack up` there would start a second one)."""
    from croupier import config

    repo = Path(config.__file__).resolve().parents[2]
    assert (repo / "deploy" / "kafka").is_dir()  # a checkout, as the Kafka directory is found
    monkeypatch.chdir(tmp_path)
    s = StackSettings.from_env({})
    assert s.state_dir == repo / ".croupier"
    assert s.kafka_dir == repo / "deploy" / "kafka"
    # An explicit setting still wins, a relative one from the current directory as before.
    assert StackSettings.from_env({"CROUPIER_STATE_DIR": "here"}).state_dir == tmp_path / "here"
    assert StackSettings.from_env({"CROUPIER_STATE_DIR": str(tmp_path / "s")}).state_dir == tmp_path / "s"
