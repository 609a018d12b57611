"""A Claude Agent SDK application, unchanged but for `cli_path`: it runs on tether and any
OpenAI-compatible model (set OPENAI_BASE_URL/OPENAI_MODEL, or DEEPSEEK_API_KEY, ...).

    python docs/examples/agent_sdk_app.py "$(command -v tether)" "list the files here"
"""

from __future__ import annotations

import sys

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    ToolUseBlock,
    query,
)


async def main(cli_path: str, prompt: str) -> None:
    options = ClaudeAgentOptions(
        cli_path=cli_path,  # the one change: tether instead of Claude Code
        allowed_tools=["Bash(ls:*)", "Read"],
        max_turns=5,
    )
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(f"assistant: {block.text}")
                elif isinstance(block, ToolUseBlock):
                    print(f"tool: {block.name} {block.input}")
        elif isinstance(message, ResultMessage):
            print(f"result: {message.subtype} after {message.num_turns} model requests")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
