"""The `tether` subcommands, one module each."""

__all__: list[str] = []
