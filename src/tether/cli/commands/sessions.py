"""`tether sessions list|show|check|resume`: the durable session logs under $TETHER_HOME.

`check` verifies seq contiguity, call/result balance and turn structure and exits 1 on any
defect (an open turn left by a crash included); `resume` repairs such a log (synthetic
`TOOL_OUTCOME_UNKNOWN` / `TOOL_NOT_STARTED` results) and continues the conversation.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated

import cyclopts

from ...agent.session import SessionError, SessionEvent, SessionStore
from .agent import chat

__all__ = ["app", "check", "list_sessions", "resume", "show"]

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
    for summary in store.list_sessions():
        title = (summary.title or "").replace("\n", " ")[:60]
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
    print(
        f"session {loaded.id}  created {_when(loaded.header.created_at)}  cwd {loaded.header.cwd}"
    )
    for event in loaded.events:
        line = _describe(event)
        if line is not None:
            print(line)
    for line in loaded.repair.describe():
        print(f"(load repaired in memory: {line})")
    return 0


@app.command
def check(session_id: str | None = None, /, *, root: RootOpt = None) -> int:
    """Verify one session (or all): exit 1 if any has a defect."""
    store = SessionStore(root)
    ids = [session_id] if session_id else [s.id for s in store.list_sessions()]
    bad = 0
    for sid in ids:
        try:
            defects = store.check(sid)
        except SessionError as exc:
            print(f"{sid}: {exc}")
            bad += 1
            continue
        if defects:
            bad += 1
            for defect in defects:
                print(f"{sid}: {defect.code}: {defect.message}")
        else:
            print(f"{sid}: ok")
    if bad and session_id:
        print(f"run `tether sessions resume {session_id}` to repair an interrupted turn")
    return 1 if bad else 0


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
    return await chat(config=config, model=model, cwd=cwd, resume=session_id)
