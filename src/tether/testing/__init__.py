"""tether.testing."""

__all__: list[str] = []
