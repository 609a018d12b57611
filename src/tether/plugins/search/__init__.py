"""Search capability: the `grep` and `glob` tools (plugin `search-tools`,
`tether.plugins.search.tools`). Modules:

    tools.py     definitions, config and the plugin
    args.py      model-facing parameters (Claude Code's Grep/Glob shape, no timeout)
    query.py     normalised requests
    ripgrep.py   finding `rg` (the bundled one first), its command lines, run through `ctx.shell`
    render.py    result texts
    errors.py    `SearchError` and its codes
"""

from .errors import SearchError as SearchError
from .query import GlobQuery as GlobQuery
from .query import GrepQuery as GrepQuery
from .tools import SearchToolsConfig as SearchToolsConfig

__all__ = ["GlobQuery", "GrepQuery", "SearchError", "SearchToolsConfig"]
