"""Config files, name resolution and boot (CONTRACT §3).

Contract: `tether.yml` (project) and `$TETHER_HOME/config.yml` (user) hold `plugins:` entries
`{id?, name, config?, disabled?}`. Files layer in order, user first: an entry whose id (default:
its name) is already known replaces it in place. A name resolves as an entry point in group
`tether.plugins`, else as `pkg.mod` or `pkg.mod:attr`. `boot` mounts builtins then config
entries (a config id replaces a builtin's), skips disabled ones, and fails with ONE line naming
the file, the entry and the field, after disposing whatever it mounted.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from tether.kernel import (
    ConfigError,
    Context,
    PluginEntry,
    TetherConfig,
    boot,
    default_config_paths,
    load_config,
    resolve_plugin,
    tether_home,
)

from . import sample_plugins

SAMPLES = "tests.kernel.sample_plugins"


def write(directory: Path, text: str, name: str = "tether.yml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config([path])
    return str(caught.value)


# -- loading and layering --------------------------------------------------------------------------


def test_a_file_lists_its_entries_with_ids_defaulting_to_names(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "plugins:\n"
        "  - name: web\n"
        "    config: {fetch_timeout_ms: 1000}\n"
        "  - id: policy\n"
        "    name: tool-call-timeout-policy\n"
        "    disabled: true\n",
    )
    web, policy = load_config([path]).plugins
    assert (web.key, web.name, web.config, web.disabled) == (
        "web",
        "web",
        {"fetch_timeout_ms": 1000},
        False,
    )
    assert (policy.key, policy.name, policy.disabled) == (
        "policy",
        "tool-call-timeout-policy",
        True,
    )
    assert policy.origin == f"{path}: plugins[1]"


def test_missing_files_are_skipped_and_empty_ones_have_no_plugins(tmp_path: Path) -> None:
    empty = write(tmp_path, "")
    only_key = write(tmp_path, "plugins:\n", name="config.yml")
    assert load_config([tmp_path / "absent.yml", empty, only_key]) == TetherConfig(())


def test_the_project_file_replaces_a_user_entry_in_place(tmp_path: Path) -> None:
    user = write(
        tmp_path,
        "plugins:\n  - name: a\n  - {id: web, name: web, config: {fetch_timeout_ms: 1}}\n"
        "  - name: c\n",
        name="config.yml",
    )
    project = write(tmp_path, "plugins:\n  - {id: web, name: web, disabled: true}\n  - name: d\n")
    entries = load_config([user, project]).plugins
    assert [(entry.key, entry.disabled) for entry in entries] == [
        ("a", False),
        ("web", True),
        ("c", False),
        ("d", False),
    ]
    assert entries[1].config == {}
    assert entries[1].origin == f"{project}: plugins[0]"


def test_a_yaml_syntax_error_names_the_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  - name: web\n    config: {}\n  oops: here\n")
    assert config_error(path) == (
        f"{path}: line 4, column 3: YAML syntax error: expected <block end>, but found '?'"
    )


def test_a_top_level_that_is_not_a_mapping_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "- name: web\n")
    assert config_error(path) == (
        f'{path}: the top level must be a mapping with a "plugins" list, got a list'
    )


def test_an_unknown_top_level_key_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "plugin:\n  - name: web\n")
    assert config_error(path) == (
        f'{path}: unexpected top-level key "plugin" (allowed: plugins, sandbox)'
    )


def test_each_files_sandbox_is_carried_with_the_file_it_came_from(tmp_path: Path) -> None:
    (tmp_path / "user").mkdir()
    user = write(tmp_path / "user", "sandbox: {writable_roots: [~/.cache]}\n", "config.yml")
    project = write(tmp_path, "sandbox: read-only\nplugins: []\n")

    config = load_config([user, project])

    assert config.sandbox == (
        (str(user), {"writable_roots": ["~/.cache"]}),
        (str(project), "read-only"),
    )


def test_plugins_that_is_not_a_list_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  web: {}\n")
    assert config_error(path) == f"{path}: plugins: must be a list of plugin entries, got a mapping"


def test_a_list_nested_5000_deep_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert config_error(path) == (
        f"{path}: line 1, column 103: nested more than 100 levels deep; simplify the file"
    )


def test_a_mapping_nested_5000_deep_is_one_line_naming_the_file(tmp_path: Path) -> None:
    text = "".join("  " * level + "k:\n" for level in range(5000)) + "  " * 5000 + "x: 1\n"
    path = write(tmp_path, text)
    assert config_error(path) == (
        f"{path}: line 101, column 201: nested more than 100 levels deep; simplify the file"
    )


def test_a_flow_mapping_nested_5000_deep_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")
    assert config_error(path) == (
        f"{path}: line 1, column 400: nested more than 100 levels deep; simplify the file"
    )


def test_aliases_count_as_the_nodes_they_name(tmp_path: Path) -> None:
    lines = ["plugins:", "  - {name: a, config: {x: &a0 [[[1]]]}}"]
    lines += [f"  - {{name: a{i}, config: {{x: &a{i} [[[*a{i - 1}]]]}}}}" for i in range(1, 40)]
    path = write(tmp_path, "\n".join(lines) + "\n")
    assert config_error(path) == (
        f"{path}: line 34, column 37: nested more than 100 levels deep; simplify the file"
    )


def test_an_alias_bomb_is_one_line_naming_the_file(tmp_path: Path) -> None:
    lines = ["plugins:", "  - {name: a, config: {x: &a0 [lol]}}"]
    aliases = [", ".join([f"*a{i - 1}"] * 10) for i in range(1, 10)]
    lines += [f"  - {{name: a{i}, config: {{x: &a{i} [{aliases[i - 1]}]}}}}" for i in range(1, 10)]
    path = write(tmp_path, "\n".join(lines) + "\n")
    assert config_error(path) == (
        f"{path}: line 7, column 48: holds more than 100000 values (aliases expanded); simplify"
        " the file"
    )


def test_an_entry_that_is_not_a_mapping_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  - web\n")
    assert config_error(path) == (
        f'{path}: plugins[0]: must be a mapping with at least a "name", got the string "web"'
    )


def test_an_unexpected_key_lists_the_allowed_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  - name: a\n  - id: x\n    name: b\n    confg: {}\n")
    assert config_error(path) == (
        f'{path}: plugins[1] (id "x"): unexpected key "confg" (allowed: id, name, config, disabled)'
    )


def test_an_entry_without_a_name_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  - config: {}\n")
    assert config_error(path) == f'{path}: plugins[0]: missing required key "name"'


def test_a_field_of_the_wrong_type_names_the_field_and_the_value(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  - name: web\n    disabled: maybe\n")
    assert config_error(path) == (
        f'{path}: plugins[0] (id "web"): disabled: Input should be a valid boolean, got "maybe"'
    )


def test_a_duplicate_id_names_its_first_use(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "plugins:\n  - name: a\n  - name: web\n  - name: b\n  - {id: web, name: other}\n",
    )
    assert (
        config_error(path) == f'{path}: plugins[3]: duplicate id "web" (first used at plugins[1])'
    )


def test_tether_home_defaults_to_dot_tether_and_follows_the_environment(tmp_path: Path) -> None:
    assert tether_home({}) == Path.home() / ".tether"
    assert tether_home({"TETHER_HOME": str(tmp_path)}) == tmp_path
    assert default_config_paths(Path("proj"), {"TETHER_HOME": str(tmp_path)}) == [
        tmp_path / "config.yml",
        Path("proj") / "tether.yml",
    ]


# -- resolving names -------------------------------------------------------------------------------


def test_a_dotted_module_path_resolves_to_the_module() -> None:
    assert resolve_plugin(SAMPLES) is sample_plugins


def test_a_module_attribute_path_resolves_to_the_attribute() -> None:
    assert resolve_plugin(f"{SAMPLES}:Web") is sample_plugins.Web
    assert resolve_plugin(f"{SAMPLES}:Nested.Deeper") is sample_plugins.Nested.Deeper


def test_an_entry_point_is_resolved_before_module_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    entry_point = importlib.metadata.EntryPoint(
        name="web", value=f"{SAMPLES}:Web", group="tether.plugins"
    )
    groups: list[str] = []

    def entry_points(*, group: str) -> importlib.metadata.EntryPoints:
        groups.append(group)
        return importlib.metadata.EntryPoints([entry_point])

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    assert resolve_plugin("web") is sample_plugins.Web
    assert groups == ["tether.plugins"]


def test_an_unknown_name_is_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_plugin("nope")
    assert str(caught.value) == (
        'unknown plugin "nope" (not an entry point in group "tether.plugins" nor an importable'
        " module)"
    )


def test_a_missing_attribute_names_the_module() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_plugin(f"{SAMPLES}:Missing")
    assert str(caught.value) == (
        f'plugin "{SAMPLES}:Missing": module "{SAMPLES}" has no attribute "Missing"'
    )


def test_a_module_that_fails_to_import_is_not_called_unknown() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_plugin("tests.kernel.sample_bad_import")
    assert str(caught.value) == (
        'plugin "tests.kernel.sample_bad_import": importing "tests.kernel.sample_bad_import"'
        " failed: ModuleNotFoundError: No module named 'tether_kernel_tests_missing_dependency'"
    )


# -- boot ------------------------------------------------------------------------------------------


async def test_boot_mounts_builtins_then_config_entries_skipping_disabled(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"plugins:\n  - name: {SAMPLES}:Web\n  - name: {SAMPLES}\n    disabled: true\n"
        f"  - name: {SAMPLES}:Nested.Deeper\n",
    )
    ctx = Context()
    builtins = [PluginEntry(name="tools", plugin=sample_plugins.Tools)]
    handles = await boot(ctx, load_config([path]), builtins=builtins)
    assert [handle.name for handle in handles] == ["tools", "web", "deeper"]
    assert all(handle.applied for handle in handles)
    assert ctx.get("sample") is None
    assert ctx.web == sample_plugins.Web.Config()


async def test_a_config_entry_replaces_the_builtin_with_the_same_id(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"plugins:\n  - id: web\n    name: {SAMPLES}:Web\n    config: {{fetch_timeout_ms: 5}}\n",
    )
    ctx = Context()
    builtins = [
        PluginEntry(name="a", plugin=sample_plugins),
        PluginEntry(id="web", name="web", plugin=sample_plugins.Web),
        PluginEntry(name="tools", plugin=sample_plugins.Tools),
    ]
    handles = await boot(ctx, load_config([path]), builtins=builtins)
    assert [handle.name for handle in handles] == ["sample", "web", "tools"]
    assert ctx.web.fetch_timeout_ms == 5


async def test_a_plugin_waiting_for_a_later_entry_is_applied_by_boot(tmp_path: Path) -> None:
    path = write(
        tmp_path, f"plugins:\n  - name: {SAMPLES}:TimeoutPolicy\n  - name: {SAMPLES}:Tools\n"
    )
    ctx = Context()
    policy, _ = await boot(ctx, load_config([path]))
    assert policy.applied
    assert len(ctx.listeners("tools/execute")) == 1


async def test_boot_names_the_entry_of_an_unknown_plugin(tmp_path: Path) -> None:
    path = write(tmp_path, "plugins:\n  - name: nope\n")
    with pytest.raises(ConfigError) as caught:
        await boot(Context(), load_config([path]))
    assert str(caught.value) == (
        f'{path}: plugins[0] (id "nope"): unknown plugin "nope" (not an entry point in group'
        ' "tether.plugins" nor an importable module)'
    )


async def test_boot_names_the_field_of_an_invalid_plugin_config(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"plugins:\n  - name: {SAMPLES}\n  - name: {SAMPLES}:Tools\n"
        f"  - id: web\n    name: {SAMPLES}:Web\n    config: {{fetch_timeout_ms: soon}}\n",
    )
    ctx = Context()
    with pytest.raises(ConfigError) as caught:
        await boot(ctx, load_config([path]))
    assert str(caught.value) == (
        f'{path}: plugins[2] (id "web"): config.fetch_timeout_ms: Input should be a valid'
        ' integer, got "soon"'
    )
    assert ctx.get("sample") is None  # checked before anything was mounted


async def test_boot_names_an_unknown_config_key(tmp_path: Path) -> None:
    path = write(tmp_path, f"plugins:\n  - name: {SAMPLES}:Web\n    config: {{fetch: 1}}\n")
    with pytest.raises(ConfigError) as caught:
        await boot(Context(), load_config([path]))
    assert str(caught.value) == (
        f'{path}: plugins[0] (id "{SAMPLES}:Web"): config.fetch: Extra inputs are not permitted,'
        " got 1"
    )


async def test_boot_names_a_service_nobody_provides_and_disposes_what_it_mounted(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, f"plugins:\n  - name: {SAMPLES}\n  - name: {SAMPLES}:TimeoutPolicy\n")
    ctx = Context()
    with pytest.raises(ConfigError) as caught:
        await boot(ctx, load_config([path]))
    assert str(caught.value) == (
        'plugin "tool-call-timeout-policy" needs service "tools", which no configured plugin'
        " provides"
    )
    assert ctx.get("sample") is None
    assert ctx.pending() == []


async def test_boot_names_a_plugin_whose_apply_failed_and_disposes_the_rest(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, f"plugins:\n  - name: {SAMPLES}\n  - name: {SAMPLES}:Broken\n")
    ctx = Context()
    with pytest.raises(ConfigError) as caught:
        await boot(ctx, load_config([path]))
    assert str(caught.value) == (
        f'{path}: plugins[1] (id "{SAMPLES}:Broken"): plugin "{SAMPLES}:Broken" failed to apply:'
        " RuntimeError: cannot start"
    )
    assert ctx.get("sample") is None
    assert ctx.get("half-done") is None


async def test_a_duplicate_builtin_id_is_refused() -> None:
    builtins = [PluginEntry(name="tools", plugin=sample_plugins.Tools)] * 2
    with pytest.raises(ConfigError) as caught:
        await boot(Context(), TetherConfig(), builtins=builtins)
    assert str(caught.value) == 'builtins[1]: duplicate id "tools" among the builtin plugins'
