"""Search capability: the `grep` and `glob` tools (plugin `search-tools`,
`tether.plugins.search.tools`). Modules:

    tools.py     definitions, config and the plugin
    args.py      model-facing parameters (Claude Code's Grep/Glob shape, no timeout)
    query.py     normalised requests
    ripgrep.py   finding `rg` (the bundled one first), its command lines, run through `ctx.shell`
    render.py    result texts
    errors.py    `SearchError` and its codes
"""

from ...core.lazy import lazy_names
from .errors import SearchError as SearchError
from .tools import SearchToolsConfig as SearchToolsConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .query import GlobQuery as GlobQuery
    from .query import GrepQuery as GrepQuery


__getattr__, __dir__ = lazy_names(globals(), {"GlobQuery": ".query", "GrepQuery": ".query"})
"""`GlobQuery` and `GrepQuery`, from `query.py`, imported at their first use: a mount makes
no query (issue 36)."""


__all__ = ["GlobQuery", "GrepQuery", "SearchError", "SearchToolsConfig"]
