"""`tether sessions list|show|check|resume|repair`: the durable session logs under $TETHER_HOME.

`check` verifies every session file (header, seq contiguity, call/result balance, turn structure) —
one session's subagent sessions first, then the session — and exits 1 on any defect — an empty
file, a bad header, another format version and an unreadable file included — naming the command
that repairs it: `resume` repairs a log a crash or a full disk cut short (synthetic
`TOOL_OUTCOME_UNKNOWN` / `TOOL_NOT_STARTED` results) and continues the conversation (it repairs the
session's subagent sessions first, and a `task` call left open names the child session in its
result); `repair` salvages a damaged one (keeps the valid prefix, moves the rest to a side file
next to the log, closes the last turn) and prints what it moved. Every command first sweeps what
dead writers left behind (temp files of an unfinished creation).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated

import cyclopts

from ...agent.session import SessionError, SessionEvent, SessionStore
from ...core.visible import visible

__all__ = ["app", "check", "list_sessions", "repair", "resume", "show"]

app = cyclopts.App(name="sessions", help="List, inspect, verify and resume session logs.")

RootOpt = Annotated[
    Path | None,
    cyclopts.Parameter(name="--root", help="Sessions folder (default $TETHER_HOME/sessions)."),
]


def _when(ms: int | float) -> str:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


@app.command(name="list")
def list_sessions(*, root: RootOpt = None) -> int:
    """List sessions, newest first."""
    store = SessionStore(root)
    store.sweep()
    for summary in store.list_sessions():
        title = visible((summary.title or "").replace("\n", " ")[:60])
        print(f"{summary.id}  {_when(summary.modified_at)}  {title}")
    return 0


def _text_of(blocks: object) -> str:
    if not isinstance(blocks, list):
        return ""
    texts = [str(b.get("text")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return " ".join(texts).strip()


def _describe(event: SessionEvent) -> str | None:
    data = event.data
    match event.type:
        case "turn/start":
            return f"turn {data.get('turn')}"
        case "turn/end":
            return f"turn {data.get('turn')} ended: {json.dumps(data.get('reason'))}"
        case "user/message":
            return f"  user: {_text_of(data.get('content'))[:100]}"
        case "assistant/message":
            message = data.get("message")
            text = _text_of(message.get("content") if isinstance(message, dict) else None)
            return f"  assistant: {text[:100]}" if text else None
        case "tool/call":
            arguments = str(data.get("arguments"))[:60]
            return f"    call {data.get('call_id')} {data.get('name')} {arguments}"
        case "tool/result":
            error = data.get("error")
            status = error.get("code") if isinstance(error, dict) else "ok"
            message = data.get("message")
            source = message.get("source") if isinstance(message, dict) else None
            call_id = source.get("call_id") if isinstance(source, dict) else "?"
            return f"    result {call_id} {status}"
        case "tool/code-dispatch-start":
            arguments = json.dumps(data.get("arguments"), ensure_ascii=False)[:60]
            return f"      call {data.get('sub_call_id')} {data.get('name')} {arguments}"
        case "tool/code-dispatch":
            error = data.get("error")
            info = error.get("info") if isinstance(error, dict) else None
            status = info.get("code") if isinstance(info, dict) else "error" if error else "ok"
            return f"      result {data.get('sub_call_id')} {status}"
        case "subagent/spawned":
            mode = "background " if data.get("background") else ""
            return (
                f"    {mode}subagent {data.get('agent_type')} for {data.get('call_id')}:"
                f" session {data.get('session_id')}"
            )
        case "hook/result":
            return f"    hook {data.get('handler_id')} {data.get('decision')}"
        case "session/compaction":
            if "into_session" in data:
                return f"compacted into session {data.get('into_session')} ({data.get('trigger')})"
            return f"compacted from session {data.get('from_session')} ({data.get('trigger')})"
        case "approval/decided":
            answer = f"{data.get('outcome')} by {data.get('answered_by')}"
            return f"    approval {data.get('call_id')} {data.get('tool_name')} {answer}"
    return None


@app.command
def show(session_id: str, /, *, root: RootOpt = None) -> int:
    """Print a session's turns, messages, tool calls and outcomes."""
    store = SessionStore(root)
    try:
        loaded = store.load(session_id)
    except SessionError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    header = loaded.header
    print(f"session {loaded.id}  created {_when(header.created_at)}  cwd {header.cwd}")
    if header.parent_session is not None:
        print(
            f"subagent of session {header.parent_session}  (delegation depth"
            f" {header.delegation_depth})"
        )
    for event in loaded.events:
        line = _describe(event)
        if line is not None:
            print(visible(line))  # a logged call's arguments, written out as in a question
    for line in loaded.repair.describe():
        print(f"(load repaired in memory: {line})")
    return 0


_REMEDIES = {
    "resume": "run `tether sessions resume {id}` to repair an interrupted turn",
    "repair": "run `tether sessions repair {id}` to keep the valid part and move the rest to a"
    " side file",
}


@app.command
def check(session_id: str | None = None, /, *, root: RootOpt = None) -> int:
    """Verify one session (or all): exit 1 if any has a defect, naming the command that repairs
    it."""
    store = SessionStore(root)
    store.sweep()
    if session_id:
        try:
            checks = store.inspect_family(session_id)
        except SessionError as exc:
            print(f"{session_id}: {exc}")
            return 1
    else:
        checks = store.check_all()
    parents = {found.id: found.parent_session for found in checks}
    bad = 0
    for found in checks:
        if not found.defects:
            print(f"{found.id}: ok")
            continue
        bad += 1
        for defect in found.defects:
            print(f"{found.id}: {defect.code}: {defect.message}")
        if found.remedy == "resume" and found.parent_session in parents:
            top = _root(found.id, parents)
            print(
                f"run `tether sessions resume {top}` to repair an interrupted turn (it repairs"
                " its subagent sessions first)"
            )
        elif found.remedy is not None:
            print(_REMEDIES[found.remedy].format(id=found.id))
    return 1 if bad else 0


def _root(session_id: str, parents: dict[str, str | None]) -> str:
    """The top-most session among those checked that `session_id` descends from."""
    seen = {session_id}
    while (parent := parents.get(session_id)) is not None and parent in parents:
        if parent in seen:
            break
        seen.add(parent)
        session_id = parent
    return session_id


@app.command
def repair(session_id: str, /, *, root: RootOpt = None) -> int:
    """Salvage a damaged session: keep its valid prefix, move the damaged rest to a side file
    next to the log, close its last turn with synthetic results; print what was moved."""
    store = SessionStore(root)
    store.sweep()
    try:
        report = store.salvage(session_id)
    except SessionError as exc:
        sys.stderr.write(f"tether: {exc}\n")
        return 2
    lines = report.describe()
    if not lines:
        print(f"{session_id}: nothing to repair")
    for line in lines:
        print(f"{session_id}: {line}")
    return 0


@app.command
async def resume(
    session_id: str,
    /,
    *,
    config: Annotated[Path | None, cyclopts.Parameter(name="--config")] = None,
    model: Annotated[str | None, cyclopts.Parameter(name="--model")] = None,
    cwd: Annotated[Path | None, cyclopts.Parameter(name="--cwd")] = None,
) -> int:
    """Repair a session left open by a crash and continue it in `tether chat`."""
    from ..agent_flags import AgentFlags
    from .agent import chat  # the agent loop and its model client: only this command needs them

    return await chat(AgentFlags(config=config, model=model, cwd=cwd, resume=session_id))
