"""Search capability: the `grep` and `glob` tools (plugin `search-tools`,
`tether.plugins.search.tools`). Modules:

    tools.py     definitions, config and the plugin
    args.py      model-facing parameters (Claude Code's Grep/Glob shape, no timeout)
    query.py     backend-neutral requests and the Python backend's file types
    ripgrep.py   `rg` command lines run through `ctx.shell`
    fallback.py  the pure-Python walker and matcher
    patterns.py  globs and `.gitignore` rules
    render.py    result texts
    errors.py    `SearchError` and its codes
"""

from .errors import SearchError as SearchError
from .query import GlobQuery as GlobQuery
from .query import GrepQuery as GrepQuery
from .tools import SearchToolsConfig as SearchToolsConfig

__all__ = ["GlobQuery", "GrepQuery", "SearchError", "SearchToolsConfig"]
