"""tether.agent."""

__all__: list[str] = []
