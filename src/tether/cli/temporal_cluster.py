"""The cluster options every Temporal command shares (`tether worker`, `tether run|chat
--temporal`, `tether temporal …`): `--address`, `--namespace`, `--profile`, `--api-key`, `--tls`
/ `--no-tls`, `--tls-ca`, `--tls-cert`, `--tls-key`, `--tls-server-name`.

Owns only their spelling and help; what they mean and how they combine with temporalio's
environment configuration is `tether.temporal.cluster` (imported when a command runs, so
`tether --help` does not need temporalio).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import cyclopts

if TYPE_CHECKING:
    from ..temporal.cluster import Cluster

__all__ = ["ClusterFlags"]


@cyclopts.Parameter(name="*")
@dataclass(frozen=True)
class ClusterFlags:
    """Where the Temporal frontend is and how to authenticate (each falls back to temporalio's
    environment configuration: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
    TEMPORAL_TLS_*, and the TEMPORAL_PROFILE of its TOML file)."""

    address: Annotated[
        str | None,
        cyclopts.Parameter(
            name="--address",
            help="The Temporal frontend, HOST:PORT (default $TEMPORAL_ADDRESS, the profile's, "
            "a session's recorded one, else 127.0.0.1:7233).",
        ),
    ] = None
    namespace: Annotated[
        str | None,
        cyclopts.Parameter(
            name="--namespace", help="The namespace (default $TEMPORAL_NAMESPACE, else default)."
        ),
    ] = None
    profile: Annotated[
        str | None,
        cyclopts.Parameter(
            name="--profile",
            help="A profile of temporalio's client configuration file (default "
            "$TEMPORAL_PROFILE, else default).",
        ),
    ] = None
    api_key: Annotated[
        str | None,
        cyclopts.Parameter(
            name="--api-key",
            help="An API key (Temporal Cloud); prefer $TEMPORAL_API_KEY, which other users "
            "cannot read in the process list. Implies TLS.",
        ),
    ] = None
    tls: Annotated[
        bool | None,
        cyclopts.Parameter(
            name="--tls",
            negative="--no-tls",
            help="TLS to the frontend (on by default with an API key or any TLS option).",
        ),
    ] = None
    tls_ca: Annotated[
        Path | None,
        cyclopts.Parameter(
            name="--tls-ca", help="PEM file of the CA that signed the server's certificate."
        ),
    ] = None
    tls_cert: Annotated[
        Path | None,
        cyclopts.Parameter(name="--tls-cert", help="PEM client certificate, for mTLS."),
    ] = None
    tls_key: Annotated[
        Path | None,
        cyclopts.Parameter(name="--tls-key", help="PEM key of --tls-cert."),
    ] = None
    tls_server_name: Annotated[
        str | None,
        cyclopts.Parameter(
            name="--tls-server-name", help="The name the server's certificate must carry."
        ),
    ] = None

    def resolve(
        self, *, address: str | None = None, recorded: Mapping[str, str] | None = None
    ) -> Cluster:
        """The cluster these flags name (`address` overrides `--address`: the value of
        `--temporal`). Raises ValueError for a configuration that cannot be read."""
        from ..temporal.cluster import ClusterOptions, resolve_cluster

        options = ClusterOptions(
            address=address or self.address,
            namespace=self.namespace,
            api_key=self.api_key,
            tls=self.tls,
            tls_ca=self.tls_ca,
            tls_cert=self.tls_cert,
            tls_key=self.tls_key,
            tls_server_name=self.tls_server_name,
            profile=self.profile,
        )
        return resolve_cluster(options, recorded=recorded)
