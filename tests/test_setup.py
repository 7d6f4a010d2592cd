"""`scribed setup` (issue 33, part 2): finds the agents' transcript folders in a home folder, writes a
config for a repository with them, registers `scribed mcp` with Claude Code, Copilot CLI and Codex
in their own files (merged, never overwriting), optionally the systemd user unit; a second run
changes nothing; what it cannot write safely it prints for the user to paste."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, tree_bytes

from scribed.core import setup, setup_find, setup_unit

SAMPLES = Path(__file__).parent / "samples"
CODEX_TOML = '# my codex settings\nmodel = "o3"  # keep\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--port", "0"]\n'
COPILOT_JSON = {
    "mcpServers": {
        "playwright": {"type": "local", "command": "npx", "args": ["@playwright/mcp"], "tools": ["*"]}
    }
}


def _machine(tmp_path: Path) -> tuple[Path, Path]:
    """A fake home with Claude Code, Copilot CLI and Codex transcripts (the samples) and their
    own settings, and a repository without .squad/."""
    home, repo = tmp_path / "home", tmp_path / "work" / "repo"
    repo.mkdir(parents=True)
    shutil.copytree(SAMPLES / "claude/-home-dev-api", home / ".claude/projects" / setup_find.dashed(repo))
    shutil.copytree(SAMPLES / "copilot", home / ".copilot/session-state")
    shutil.copytree(SAMPLES / "codex", home / ".codex/sessions")
    for f in (*(home / ".copilot").rglob("*.*"), *(home / ".codex").rglob("*.jsonl")):  # run in repo
        f.write_text(f.read_text().replace("/home/dev/repo", str(repo)).replace("/home/dev/svc", str(repo)))
    for f in (home / ".claude/projects").rglob("*.jsonl"):  # run in repo: the folder is named by it
        f.write_text(f.read_text().replace('"/home/dev/api"', json.dumps(str(repo))))
    (home / ".codex/config.toml").write_text(CODEX_TOML)
    (home / ".copilot/mcp-config.json").write_text(json.dumps(COPILOT_JSON, indent=4))
    return home, repo


def _setup(home: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {"CODEX_HOME": "/nonexistent", "COPILOT_HOME": "/nonexistent"}  # --home wins over these
    return run_cli("setup", "--root", str(repo), "--home", str(home), *args, env=env, cwd=repo.parent)


def _json(home: Path, repo: Path, *args: str) -> dict[str, Any]:
    p = _setup(home, repo, *args, "--json")
    assert p.returncode == 0, p.stderr.decode()
    data: dict[str, Any] = json.loads(p.stdout)
    return data


def _serve_args(args: list[str], repo: Path) -> None:
    """Claude Code's registration, in the repository's own .mcp.json: that repository's server."""
    assert args[-5:] == ["--config", str(repo / "scribed.toml"), "mcp", "--root", str(repo)], args


def _serves_any(args: list[str]) -> None:
    """Copilot's and Codex's, in files every repository shares: the root comes from the folder the
    agent starts the server in."""
    assert args[-1] == "mcp" and "--root" not in args and "--config" not in args, args


def test_dry_run_prints_the_config_and_each_registration_and_writes_nothing(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    before = tree_bytes(tmp_path)
    p = _setup(home, repo, "--dry-run")
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert tree_bytes(tmp_path) == before and not (repo / ".squad").exists(), "a dry run writes nothing"
    printed = out.split(f"config {repo / 'scribed.toml'}:\n", 1)[1].split("\nMCP registration", 1)[0]
    cfg = tomllib.loads("\n".join(ln[2:] for ln in printed.splitlines()))
    assert cfg["root"] == "."
    assert [(s["kind"], s["path"], s.get("workspace")) for s in cfg["sources"]] == [
        ("claude", str(home / ".claude/projects" / setup_find.dashed(repo)), "."),
        ("copilot", str(home / ".copilot/session-state"), "."),
        ("codex", str(home / ".codex/sessions"), "."),
    ]
    assert printed.count(f'workspace = "."  # {setup_find.SCOPED}') == 3, printed  # claude's folder too
    assert out.count(f"({setup_find.ALL_REPOS})") == 2, "the found lines say it too"
    for tool, path in (
        ("Claude Code", repo / ".mcp.json"),
        ("Copilot CLI", home / ".copilot/mcp-config.json"),
        ("Codex", home / ".codex/config.toml"),
    ):
        assert f"MCP registration for {tool} in {path}:" in out
        assert f'would register MCP server "scribed" for {tool} in {path}' in out
    assert "[mcp_servers.scribed]" in out and "dry run: nothing written" in out
    data = _json(home, repo, "--dry-run")
    assert [(f["tool"], f["files"]) for f in data["found"]] == [
        ("Claude Code", 2),
        ("Copilot CLI", 1),
        ("Codex", 1),
    ]
    assert not [c for c in data["changes"] if c["applied"]]


def test_setup_writes_merges_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    p = _setup(home, repo)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    for line in (
        f"create {repo / '.squad'}/",
        f"write {repo / 'scribed.toml'} (Claude Code claude, Copilot CLI copilot, Codex codex)",
        f'register MCP server "scribed" for Claude Code in {repo / ".mcp.json"}',
        f'register MCP server "scribed" for Copilot CLI in {home / ".copilot/mcp-config.json"}',
        f'register MCP server "scribed" for Codex in {home / ".codex/config.toml"}',
    ):
        assert line in out, (line, out)
    assert (repo / ".squad").is_dir()
    claude = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["scribed"]
    assert claude["type"] == "stdio"
    _serve_args(claude["args"], repo)
    copilot = json.loads((home / ".copilot/mcp-config.json").read_text())["mcpServers"]
    assert copilot["playwright"] == COPILOT_JSON["mcpServers"]["playwright"], "other servers are kept"
    assert copilot["scribed"]["type"] == "local" and copilot["scribed"]["tools"] == ["*"]
    _serves_any(copilot["scribed"]["args"])
    codex_text = (home / ".codex/config.toml").read_text()
    assert codex_text.startswith(CODEX_TOML), "the user's file is kept byte for byte, comments included"
    codex = tomllib.loads(codex_text)
    assert codex["model"] == "o3" and codex["mcp_servers"]["docs"]["command"] == "docs-mcp"
    _serves_any(codex["mcp_servers"]["scribed"]["args"])
    assert codex["mcp_servers"]["scribed"]["command"] == claude["command"] == copilot["scribed"]["command"]

    written = tree_bytes(tmp_path)
    again = _setup(home, repo)
    assert again.returncode == 0 and "nothing to change" in again.stdout.decode(), again.stdout.decode()
    assert tree_bytes(tmp_path) == written, "the second run wrote nothing"

    # the config it wrote is one `scribed run` starts with, and compacts the samples run in this
    # repository, not another repository's session beside them
    theirs = next((home / ".codex/sessions").rglob("*.jsonl"))
    other = theirs.with_name(theirs.name.replace("1e2d3c4b5a69", "00000000beef"))
    other.write_text(theirs.read_text().replace(str(repo), "/srv/other-repo"))
    cfg = str(repo / "scribed.toml")
    chk = run_cli("--config", cfg, "check-config")
    assert chk.returncode == 0 and chk.stdout.startswith(b"config ok"), chk.stdout + chk.stderr
    run = run_cli("--config", cfg, "run-once", "--force", "--json")
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    ran = json.loads(run.stdout)
    assert ran["compacted"] >= 3 and ran["skips"] == {"other_repository": 1}, ran


def test_an_existing_config_gets_only_the_missing_sources(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    (repo / ".squad").mkdir()
    mine = (
        '# my config\nroot = "."\n\n[compress]\nbackend = "extractive"\n\n'
        f'[[sources]]\nkind = "codex"\npath = "{home / ".codex/sessions"}"\nagent = "worf"\n'
    )
    (repo / "scribed.toml").write_text(mine)
    out = _setup(home, repo, "--no-mcp").stdout.decode()
    assert f"add 2 [[sources]] to {repo / 'scribed.toml'} (Claude Code claude, Copilot CLI copilot)" in out
    text = (repo / "scribed.toml").read_text()
    assert text.startswith(mine)
    kinds = [(s["kind"], s.get("agent")) for s in tomllib.loads(text)["sources"]]
    assert kinds == [("codex", "worf"), ("claude", None), ("copilot", None)]
    assert not (repo / ".mcp.json").exists(), "--no-mcp"


@pytest.mark.parametrize(
    ("name", "codex", "copilot", "why"),
    [
        (
            "inline table",
            'mcp_servers = { docs = { command = "docs-mcp" } }\n',
            None,
            "its mcp_servers is an inline table (line 1)",
        ),
        ("not TOML", "model = \n", None, "cannot read it as TOML"),
        ("theirs", '[mcp_servers.scribed]\ncommand = "/opt/other/scribed"\nargs = []\n', None, "different"),
        ("JSONC", None, '{\n  // mine\n  "mcpServers": {}\n}\n', "not plain JSON"),
        ("their scribed", None, json.dumps({"mcpServers": {"scribed": {"command": "x"}}}), "different"),
    ],
)
def test_what_cannot_be_written_safely_is_printed_not_written(
    tmp_path: Path, name: str, codex: str | None, copilot: str | None, why: str
) -> None:
    home, repo = _machine(tmp_path)
    target = home / (".codex/config.toml" if codex is not None else ".copilot/mcp-config.json")
    target.write_text(codex if codex is not None else str(copilot))
    before = target.read_bytes()
    p = _setup(home, repo)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert target.read_bytes() == before, f"{name}: the file is left as it was"
    line = next(ln for ln in out.splitlines() if ln.startswith("not written:") and str(target) in ln)
    assert why in line and line.endswith("to do it by hand, put this there:"), line
    snippet = out.split(line + "\n", 1)[1]
    shape = "scribed = {" if name == "inline table" else "[mcp_servers.scribed]"
    assert (shape if codex is not None else '"scribed": {') in snippet
    assert (repo / ".mcp.json").exists(), "the other registrations are made"
    again = _setup(home, repo).stdout.decode()
    assert "not written:" in again and target.read_bytes() == before


def test_a_config_of_another_root_is_not_touched(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    other = tmp_path / "other.toml"
    other.write_text(f'root = "{tmp_path}"\n')
    p = run_cli("--config", str(other), "setup", "--root", str(repo), "--home", str(home), "--no-mcp")
    assert other.read_text() == f'root = "{tmp_path}"\n'
    assert f"it is the config of root {tmp_path}; pass --config PATH" in p.stdout.decode()


def test_claude_sessions_of_a_sub_folder_count_and_a_siblings_do_not(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    projects = home / ".claude/projects"
    for name, cwd in (("-api", repo / "api"), ("-other", Path(f"{repo}-other"))):
        folder = projects / (setup_find.dashed(repo) + name)
        folder.mkdir()
        rec = {
            "type": "user",
            "uuid": "u",
            "sessionId": "s",
            "cwd": str(cwd),
            "message": {"role": "user", "content": "x"},
        }
        (folder / "s.jsonl").write_text(json.dumps(rec) + "\n")
    found = [
        (f["path"], f["note"]) for f in _json(home, repo, "--dry-run")["found"] if f["tool"] == "Claude Code"
    ]
    assert found == [
        (str(projects / setup_find.dashed(repo)), ""),
        (str(projects / (setup_find.dashed(repo) + "-api")), "sessions started in api/"),
    ]


def test_systemd_unit_is_installed_once(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    name = setup_unit.unit_name(repo)
    assert re.fullmatch(r"scribed-[A-Za-z0-9_.-]+-[0-9a-f]{8}\.service", name), name
    unit = home / ".config/systemd/user" / name
    out = _setup(home, repo, "--systemd").stdout.decode()
    assert f"install the systemd user unit {unit}" in out
    short = name.removesuffix(".service")
    assert f"systemctl --user daemon-reload && systemctl --user enable --now {short}" in out
    text = unit.read_text()
    [exec_start] = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    assert exec_start.endswith(f" --config {repo / 'scribed.toml'} run")
    assert "RestartPreventExitStatus=78" in text
    tool = shutil.which("systemd-analyze")
    if tool:
        v = subprocess.run([tool, "verify", str(unit)], capture_output=True, text=True, timeout=60)
        assert not [ln for ln in (v.stdout + v.stderr).splitlines() if str(unit) in ln], v.stdout + v.stderr
    assert "nothing to change" in _setup(home, repo, "--systemd").stdout.decode()
    unit.write_text(text.replace("RestartSec=5", "RestartSec=9"))
    out = _setup(home, repo, "--systemd").stdout.decode()
    assert f"not written: systemd user unit {unit}: a different unit is installed there" in out
    assert "RestartSec=9" in unit.read_text()


def test_a_file_changed_after_the_plan_is_not_overwritten(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    homes = setup_find.Homes.of(home, {})
    p = setup.plan(repo, homes=homes, config_path=repo / "scribed.toml", command=["scribed"])
    target = home / ".copilot/mcp-config.json"
    target.write_text('{"mcpServers": {"new": {"command": "y"}}}')  # the tool wrote it meanwhile
    applied = {a.step.path: a for a in setup.apply(p)}
    assert not applied[target].ok and "changed since it was read" in applied[target].problem
    assert target.read_text() == '{"mcpServers": {"new": {"command": "y"}}}'
    assert applied[home / ".codex/config.toml"].ok and (repo / "scribed.toml").is_file()


def test_no_agents_and_a_missing_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    data = _json(tmp_path / "empty-home", repo, "--dry-run")
    assert data["found"] == [] and tomllib.loads(data["config"]["proposal"]) == {"root": "."}
    p = _setup(tmp_path / "empty-home", tmp_path / "nope")
    assert p.returncode == 2 and b"does not exist" in p.stderr


def test_docker_line_names_these_folders(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    out = _setup(home, repo, "--dry-run", "--docker").stdout.decode()
    [line] = [ln for ln in out.splitlines() if ln.startswith("docker")]
    assert f"SQUAD_ROOT={repo} " in line and f"CODEX_SESSIONS={home / '.codex/sessions'} " in line
    assert line.endswith("docker compose -f deploy/compose.yaml up -d --build")


def test_without_the_mcp_extra_it_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from click.testing import CliRunner

    from scribed.cli.main import main

    home, repo = _machine(tmp_path)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    res = CliRunner().invoke(main, ["setup", "--root", str(repo), "--home", str(home), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "pip install 'scribed-memory[mcp]'" in res.stdout
    res = CliRunner().invoke(
        main, ["setup", "--root", str(repo), "--home", str(home), "--dry-run", "--no-mcp"]
    )
    assert "scribed-memory[mcp]" not in res.stdout


def _printed(out: str, target: Path) -> tuple[str, str]:
    """The "not written" line about ``target`` and the one-line snippet printed under it."""
    line = next(ln for ln in out.splitlines() if ln.startswith("not written:") and str(target) in ln)
    snippet = out.split(line + "\n", 1)[1].split("\n", 1)[0]
    assert snippet.startswith("  "), snippet
    return line, snippet[2:]


@pytest.mark.parametrize(
    "inline",
    [
        'mcp_servers = { docs = { command = "docs-mcp", args = ["{x}", "#"] } }  # mine',
        "mcp_servers = {}",
        '  mcp_servers={docs={command="d"}}',
    ],
)
def test_an_inline_mcp_servers_table_gets_a_line_that_parses_once_pasted(tmp_path: Path, inline: str) -> None:
    """The snippet for a config.toml whose mcp_servers is an inline table: appending a table would
    declare it twice (tomllib: "Cannot declare ('mcp_servers', 'scribed') twice"), so setup prints
    the line that replaces the inline one, and pasting it gives a file with both servers."""
    home, repo = _machine(tmp_path)
    target = home / ".codex/config.toml"
    text = f'model = "o3"\n{inline}\n\n[profiles.fast]\nmodel = "mini"\n'
    target.write_text(text)
    out = _setup(home, repo).stdout.decode()
    line, snippet = _printed(out, target)
    assert "inline table (line 2)" in line and "replace line 2 with this one" in line, line
    assert target.read_text() == text, "not written"
    lines = text.splitlines()
    lines[1] = snippet
    pasted = tomllib.loads("\n".join(lines))
    old = tomllib.loads(text)
    assert pasted["mcp_servers"].keys() == {*old["mcp_servers"], "scribed"}
    assert pasted["profiles"] == old["profiles"] and pasted["model"] == "o3"
    _serves_any(pasted["mcp_servers"]["scribed"]["args"])


def test_a_second_repository_changes_nothing_in_the_shared_registrations(tmp_path: Path) -> None:
    home, repo = _machine(tmp_path)
    assert _setup(home, repo).returncode == 0
    shared = [home / ".copilot/mcp-config.json", home / ".codex/config.toml"]
    before = [p.read_bytes() for p in shared]
    second = tmp_path / "work" / "second"
    second.mkdir()
    p = _setup(home, second)
    out = p.stdout.decode()
    assert p.returncode == 0 and "not written" not in out, out
    assert [p.read_bytes() for p in shared] == before, "one registration serves both"
    assert f'register MCP server "scribed" for Claude Code in {second / ".mcp.json"}' in out
    assert "Copilot CLI in" not in out and "Codex in" not in out, out


def test_a_registration_an_older_setup_tied_to_one_repository_is_replaced(tmp_path: Path) -> None:
    """What setup wrote before (``--config C mcp --root R``) served only R; the files every
    repository shares get the registration that serves any, the user's other text kept."""
    home, repo = _machine(tmp_path)
    old = ["/opt/scribed", "--config", "/a/scribed.toml", "mcp", "--root", "/a"]
    copilot = {"mcpServers": {**COPILOT_JSON["mcpServers"], "scribed": {"type": "local", "command": old[0], "args": old[1:], "tools": ["*"]}}}  # fmt: skip
    (home / ".copilot/mcp-config.json").write_text(json.dumps(copilot))
    codex_text = CODEX_TOML + "\n# added by `scribed setup`: spawns read their memory through these tools\n"
    codex_text += setup.setup_mcp.toml_entry(old) + '\n[profiles.fast]\nmodel = "mini"\n'
    (home / ".codex/config.toml").write_text(codex_text)
    out = _setup(home, repo).stdout.decode()
    for tool, path in (("Copilot CLI", "mcp-config.json"), ("Codex", "config.toml")):
        assert f'replace MCP server "scribed" for {tool} in {home}' in out and path in out, out
        assert "it served only /a;" in out
    assert "not written" not in out, out
    got = json.loads((home / ".copilot/mcp-config.json").read_text())["mcpServers"]
    assert got["playwright"] == COPILOT_JSON["mcpServers"]["playwright"]
    _serves_any(got["scribed"]["args"])
    text = (home / ".codex/config.toml").read_text()
    assert text.startswith(CODEX_TOML) and text.endswith('[profiles.fast]\nmodel = "mini"\n'), text
    codex = tomllib.loads(text)
    _serves_any(codex["mcp_servers"]["scribed"]["args"])
    assert (
        codex["mcp_servers"]["docs"]["command"] == "docs-mcp" and codex["profiles"]["fast"]["model"] == "mini"
    )
    assert "nothing to change" in _setup(home, repo).stdout.decode()


def test_two_repositories_get_a_unit_each_and_an_earlier_unit_is_kept(tmp_path: Path) -> None:
    """A second repository's --systemd installs its own unit, the first one's untouched (a re-check
    found the second told to overwrite the first's daemon); the scribed.service an earlier setup
    installed for a repository still counts as its unit (no second daemon on one root)."""
    home, repo = _machine(tmp_path)
    other = tmp_path / "other" / repo.name  # the same folder name elsewhere: another unit
    other.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    _setup(home, repo, "--systemd")
    _setup(home, other, "--systemd")
    units = sorted((home / ".config/systemd/user").glob("scribed*.service"))
    assert len(units) == 2, units
    for u, r in zip(units, sorted([repo, other], key=setup_unit.unit_name), strict=True):
        assert u.name == setup_unit.unit_name(r)
        assert f"--config {r / 'scribed.toml'} run" in u.read_text()
    legacy_home = tmp_path / "legacy"
    shutil.copytree(home, legacy_home, symlinks=True)
    for u in (legacy_home / ".config/systemd/user").glob("scribed*.service"):
        u.unlink()
    folder = legacy_home / ".config/systemd/user"
    (folder / "scribed.service").write_text(setup_unit.unit_text(["scribed"], repo / "scribed.toml"))
    p = setup.plan(
        repo,
        homes=setup_find.Homes.of(legacy_home, {}),
        config_path=repo / "scribed.toml",
        command=["scribed"],
        systemd=True,
    )
    assert p.unit == folder / "scribed.service"
    assert not [s for s in p.steps if "systemd" in s.what], p.steps


def _repl_note(tmp_path: Path, files: dict[str, str]) -> str:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".squad/sessions").mkdir(parents=True)
    for name, text in files.items():
        (repo / ".squad/sessions" / name).write_text(text)
    found = [f for f in _json(home, repo, "--dry-run")["found"] if f["kind"] == "squad-repl"]
    assert len(found) == 1, found
    note: str = found[0]["note"]
    assert ('kind = "markdown"' in found[0]["suggest"]) == ("markdown" in note), found
    return note


def test_a_squad_sessions_folder_of_markdown_logs_is_said_with_the_source_that_reads_them(
    tmp_path: Path,
) -> None:
    """Finding s22: a Squad repository whose .squad/sessions/ holds a markdown session log, no
    Squad REPL session (*.json): setup says the log is not read, and which source would read it."""
    note = _repl_note(tmp_path, {"2026-03-01-cli-rag.md": "# Session\n\n**User:** move the cache\n"})
    assert "2026-03-01-cli-rag.md" in note and "not read" in note and "markdown source" in note, note


def test_a_squad_sessions_folder_of_other_files_is_said_without_a_markdown_offer(tmp_path: Path) -> None:
    note = _repl_note(tmp_path, {"a.log": "x\n", "b.log": "y\n"})
    assert note.startswith("it holds 2 other files (a.log, for one)") and "markdown" not in note, note


@pytest.mark.parametrize("files", [{}, {"s1.json": '{"messages": []}'}])
def test_an_empty_or_repl_only_sessions_folder_gets_no_note(tmp_path: Path, files: dict[str, str]) -> None:
    assert _repl_note(tmp_path, files) == ""


def test_setups_config_for_aider_and_specstory_passes_strict(tmp_path: Path) -> None:
    """Finding s20: the Aider source (the repository, one file) and the SpecStory one (a folder
    inside it) list no file in common: no overlap warning, so setup's own config passes --strict."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".specstory/history").mkdir(parents=True)
    (repo / ".aider.chat.history.md").write_text(
        "# aider chat started at 2026-03-01 10:00:00\n\n#### fix it\n"
    )
    (repo / ".specstory/history/2026-03-01_10-00Z-fix.md").write_text("_**User**_\n\nfix it\n")
    assert _setup(home, repo, "--no-mcp").returncode == 0
    chk = run_cli("--config", str(repo / "scribed.toml"), "check-config", "--strict")
    assert chk.returncode == 0, chk.stderr.decode()


def test_a_config_and_a_codex_toml_with_a_bom_are_extended_keeping_it(tmp_path: Path) -> None:
    """Finding s21: a config Notepad saved (UTF-8 with a BOM) was "not a valid config" to setup,
    and a Codex config.toml so saved "cannot be read as TOML"; both are read, and keep their BOM."""
    home, repo = _machine(tmp_path)
    bom = b"\xef\xbb\xbf"
    (repo / "scribed.toml").write_bytes(bom + b'root = "."\n')
    (home / ".codex/config.toml").write_bytes(bom + CODEX_TOML.encode())
    p = _setup(home, repo)
    assert p.returncode == 0, p.stdout.decode() + p.stderr.decode()
    config = (repo / "scribed.toml").read_bytes()
    assert config.startswith(bom + b'root = "."\n') and b'kind = "codex"' in config, config
    codex = (home / ".codex/config.toml").read_bytes()
    assert codex.startswith(bom + CODEX_TOML.encode()) and b"[mcp_servers.scribed]" in codex
    chk = run_cli("--config", str(repo / "scribed.toml"), "check-config")
    assert chk.returncode == 0, chk.stderr.decode()


def test_setups_suggestion_for_markdown_logs_fed_back_passes_strict(tmp_path: Path) -> None:
    """Finding s21: the printed suggestion for a .squad/sessions/ of markdown logs, put in place of
    the squad-repl source as it says, is a config `check-config --strict` accepts, and the source
    lists the logs (a source beside the squad-repl one would overlap it, which --strict refuses)."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    (repo / ".squad/sessions").mkdir(parents=True)
    (repo / ".squad/sessions/2026-03-01-cache.md").write_text(
        "# Session 2026-03-01\n\n**User:** move the cache to Redis\n\n**Assistant:** Moved it in cache.py.\n"
    )
    p = _setup(home, repo, "--no-mcp")
    out = p.stdout.decode()
    assert p.returncode == 0, out + p.stderr.decode()
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if "use this source in place of the squad-repl one:" in ln)
    suggestion = []
    for ln in lines[at + 1 :]:
        if not ln.startswith("  "):
            break
        suggestion.append(ln[2:])
    written = (repo / "scribed.toml").read_text()
    repl = '[[sources]]\nkind = "squad-repl"\npath = ".squad/sessions"\n'
    assert repl in written and "#   [[sources]]" in written, written  # the config says it too
    (repo / "scribed.toml").write_text(written.replace(repl, "\n".join(suggestion) + "\n"))
    chk = run_cli("--config", str(repo / "scribed.toml"), "check-config", "--strict")
    assert chk.returncode == 0, chk.stderr.decode()
    assert f"source: markdown {repo}/.squad/sessions agent=squad (1 file)" in chk.stdout.decode()
    run = run_cli("--config", str(repo / "scribed.toml"), "run-once", "--force", "--json")
    assert run.returncode == 0 and json.loads(run.stdout)["compacted"] == 1, run.stderr.decode()
