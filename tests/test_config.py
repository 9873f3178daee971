"""One settings object: every HEAD_EXPLORER_* variable the code reads is a field of `Config`, read from the
environment when it changes, refused in one line when it cannot be read, listed by `head-explorer config`
and in the table of docs/configuration.md."""
import json
import re
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.runtime.config import NAMES, Config, ConfigError, env_config

ROOT = Path(__file__).resolve().parent.parent


def test_every_variable_the_code_names_is_a_setting():
    named = set()
    for path in [*(ROOT / "explorer").rglob("*.py"), ROOT / "app.py", *(ROOT / "pages").glob("*.py")]:
        named |= set(re.findall(r"HEAD_EXPLORER_[A-Z_]+[A-Z]", path.read_text()))
    assert named <= set(NAMES), f"read outside Config: {sorted(named - set(NAMES))}"


def test_no_module_but_config_reads_them_from_the_environment():
    readers = [p.relative_to(ROOT) for p in (ROOT / "explorer").rglob("*.py")
               if re.search(r"(environ\.get\(|getenv\(|environ\[)\s*(['\"]HEAD_EXPLORER|[A-Z_]+_ENV\b)", p.read_text())]
    assert readers == [], readers


def test_the_configuration_page_lists_every_setting_with_its_default():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, value, _ in Config().rows():
        row = next((line for line in page.splitlines() if line.startswith(f"| `{name}`")), None)
        assert row is not None, f"{name} is missing from docs/configuration.md's table"
        assert f"`{value}`" in row or (not value and "unset" in row), row


def test_a_change_is_seen_at_once(monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_BATCH_MB", "7")
    assert env_config().batch_mb == 7
    monkeypatch.setenv("HEAD_EXPLORER_BATCH_MB", "9")
    assert env_config().batch_mb == 9
    monkeypatch.setenv("HEAD_EXPLORER_BATCH_MB", " ")  # empty: the default
    assert env_config().batch_mb == Config.batch_mb == 256


@pytest.mark.parametrize("name, value", [("HEAD_EXPLORER_QUEUE", "0"), ("HEAD_EXPLORER_TRAIN_MB", "3 GB"),
                                         ("HEAD_EXPLORER_JOB_NICE", "-1"), ("HEAD_EXPLORER_REPORT_S", "1.5")])
def test_a_value_out_of_range_is_one_translated_line(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        env_config()
    for lang in ("en", "vi"):
        line = err.value.message(lang)
        assert "\n" not in line and name in line and f'"{value}"' in line
    assert err.value.message("vi") != str(err.value)


def test_nice_zero_is_a_value(monkeypatch):
    monkeypatch.setenv("HEAD_EXPLORER_JOB_NICE", "0")  # leave jobs at the server's priority
    assert env_config().job_nice == 0


def test_the_config_command_prints_every_setting(monkeypatch, capsys):
    monkeypatch.setenv("HEAD_EXPLORER_ANALYSES_MB", "123")
    assert main(["config", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert list(shown) == list(NAMES) and shown["HEAD_EXPLORER_ANALYSES_MB"] == "123"
    assert main(["config"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(NAMES)
    monkeypatch.setenv("HEAD_EXPLORER_ANALYSES_MB", "lots")
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HEAD_EXPLORER_ANALYSES_MB" in err
