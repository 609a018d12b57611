"""`tether chat`: the interactive terminal front end.

Owns the chat experience built around the agent loop: line input (`input`), slash commands
(`commands`), `@path` mentions (`mentions`), live status and rendering (`status`), edit/write
diffs (`diff`) and the session driver (`app`). prompt_toolkit is imported only when a chat on a
terminal starts; without a terminal everything degrades to plain lines.
"""

__all__: list[str] = []
