"""Saying that a command may have failed because of its sandbox (issue 24 §2).

Contract: a sandboxed command that failed and whose output reads like a refused write (EROFS,
EACCES, EPERM) or, without network access, a missing network, gets one note quoting that line
and saying what the sandbox allows; a success, a full-access command, or an unrelated failure
gets none.
"""

from __future__ import annotations

from tether.plugins.sandbox import SandboxPolicy, sandbox_denial

WORKSPACE_WRITE = SandboxPolicy()


def test_a_refused_write_is_quoted_with_what_the_sandbox_allows() -> None:
    note = sandbox_denial(
        WORKSPACE_WRITE,
        exit_code=1,
        output="touch: cannot touch '/root/x': Read-only file system\n",
        writable=("/w",),
    )

    assert note == (
        'this may have failed because of the sandbox (workspace-write): "touch: cannot touch '
        "'/root/x': Read-only file system\"; it may write only in /w and a private /tmp (not "
        ".git — a commit needs to run outside —, .claude, .mcp.json, tether.yml, .tether or the "
        "other protected paths: docs/sandbox.md), and has no network"
    )


def test_a_missing_network_counts_only_without_network_access() -> None:
    output = "curl: (6) Could not resolve host: example.com"

    assert sandbox_denial(WORKSPACE_WRITE, exit_code=6, output=output) is not None
    assert sandbox_denial(SandboxPolicy(network_access=True), exit_code=6, output=output) is None


def test_a_success_full_access_or_an_unrelated_failure_get_no_note() -> None:
    refused = "mkdir: cannot create directory 'x': Permission denied"

    assert sandbox_denial(WORKSPACE_WRITE, exit_code=0, output=refused) is None
    assert (
        sandbox_denial(SandboxPolicy.of("danger-full-access"), exit_code=1, output=refused) is None
    )
    assert sandbox_denial(WORKSPACE_WRITE, exit_code=1, output="assertion failed: 2 != 3") is None
