"""tether.kernel: the plugin kernel (Context, plugins and services, events, config and boot).

Public and stable as a module path (CONTRACT §3); every name is re-exported from its module.
"""

from .boot import boot as boot
from .boot import resolve_plugin as resolve_plugin
from .config import PluginEntry as PluginEntry
from .config import TetherConfig as TetherConfig
from .config import default_config_paths as default_config_paths
from .config import load_config as load_config
from .config import tether_home as tether_home
from .context import Context as Context
from .errors import ConfigError as ConfigError
from .errors import InvalidPluginConfig as InvalidPluginConfig
from .errors import PluginError as PluginError
from .events import EventKey as EventKey
from .events import Listener as Listener
from .events import Next as Next
from .events import UnknownEventError as UnknownEventError
from .events import declare_event as declare_event
from .events import declare_namespace as declare_namespace
from .lifecycle import PluginHandle as PluginHandle
from .lifecycle import PluginState as PluginState
from .plugins import Service as Service

__all__ = [
    "ConfigError",
    "Context",
    "EventKey",
    "InvalidPluginConfig",
    "Listener",
    "Next",
    "PluginEntry",
    "PluginError",
    "PluginHandle",
    "PluginState",
    "Service",
    "TetherConfig",
    "UnknownEventError",
    "boot",
    "declare_event",
    "declare_namespace",
    "default_config_paths",
    "load_config",
    "resolve_plugin",
    "tether_home",
]
