"""The observation policy is per owner: what one agent's session read does not authorise
another's edit; calls without an agent share one anonymous owner."""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.core.signals import AbortController
from tether.tools import ToolExecutionInput, ToolFailure, ToolSuccess

from .conftest import Harness, field_of


@dataclass(eq=False)
class Session:
    header: object = None


@dataclass(eq=False)
class Agent:
    session: Session = field(default_factory=Session)


async def run(fs: Harness, name: str, agent: object, **arguments: object) -> object:
    return await fs.ctx.tools.execute(
        ToolExecutionInput(
            call_id="c",
            name=name,
            arguments=arguments,
            signal=AbortController().signal,
            agent=agent,
        )
    )


async def test_a_read_by_one_agent_does_not_authorise_another_agents_edit(fs: Harness) -> None:
    (fs.root / "a.txt").write_text("alpha\n")
    reader, editor = Agent(), Agent()
    assert isinstance(await run(fs, "read", reader, file_path="a.txt"), ToolSuccess)
    refused = await run(fs, "edit", editor, file_path="a.txt", old_string="alpha", new_string="b")
    assert isinstance(refused, ToolFailure)
    assert refused.code == "FS_NOT_OBSERVED"
    allowed = await run(fs, "edit", reader, file_path="a.txt", old_string="alpha", new_string="b")
    assert isinstance(allowed, ToolSuccess)


async def test_relative_paths_follow_the_agents_session_cwd(fs: Harness) -> None:
    (fs.root / "pkg").mkdir()
    (fs.root / "pkg" / "m.txt").write_text("m\n")

    @dataclass
    class Header:
        cwd: str

    agent = Agent(Session(Header(str(fs.root / "pkg"))))
    result = await run(fs, "read", agent, file_path="m.txt")
    assert isinstance(result, ToolSuccess)
    assert field_of(result, "path") == str(fs.root / "pkg" / "m.txt")
