"""tether.plugins."""

__all__: list[str] = []
