"""Which Temporal cluster a tether process talks to, and with which credentials: one builder
for every client and worker (`tether run|chat --temporal`, `tether worker`, `tether temporal
…`, and library code through `tether.temporal.connection.connected`).

Owns `ClusterOptions` (what a caller says explicitly: flags or arguments), `Cluster` (the
resolved settings; the API key and key material never appear in its `repr` or in `describe()`),
`resolve_cluster(options, recorded=...)` and `connect_failure(exc, cluster)`, which turns
what the SDK raises when it cannot connect into one line that says what to check.

Each setting comes from the first of:

    1. the explicit option (`--address`, `--namespace`, `--api-key`, `--tls`/`--no-tls`,
       `--tls-ca`, `--tls-cert`, `--tls-key`, `--tls-server-name`, `--profile`)
    2. temporalio's environment configuration, as every Temporal tool reads it: the variables
       `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS`,
       `TEMPORAL_TLS_SERVER_CA_CERT_PATH|DATA`, `TEMPORAL_TLS_CLIENT_CERT_PATH|DATA`,
       `TEMPORAL_TLS_CLIENT_KEY_PATH|DATA`, `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_GRPC_META_*`
       over the profile `TEMPORAL_PROFILE` (default `default`) of the TOML file
       `TEMPORAL_CONFIG_FILE` (default `~/.config/temporalio/temporal.toml`)
    3. what a session's log recorded (`temporal.json`: address and namespace, never secrets)
    4. `127.0.0.1:7233`, namespace `default`, plaintext

TLS is on when asked for (`--tls`, `TEMPORAL_TLS=true`), when any TLS file or server name is
given, or with an API key (Temporal Cloud takes API keys over TLS only); `--no-tls` (or
`TEMPORAL_TLS=false`) turns it off. Does not own the payload store or the SDK runtime
(`connection.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from temporalio.service import TLSConfig

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_NAMESPACE",
    "Cluster",
    "ClusterOptions",
    "TlsSettings",
    "connect_failure",
    "is_transient",
    "resolve_cluster",
]

DEFAULT_ADDRESS: Final = "127.0.0.1:7233"
DEFAULT_NAMESPACE: Final = "default"

Source = Path | bytes
"""A certificate or key: a file, or its PEM bytes (from a `…_DATA` variable or a profile)."""


@dataclass(frozen=True)
class ClusterOptions:
    """What the caller set explicitly; None leaves a setting to the environment configuration."""

    address: str | None = None
    namespace: str | None = None
    api_key: str | None = field(default=None, repr=False)
    tls: bool | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_server_name: str | None = None
    profile: str | None = None


@dataclass(frozen=True)
class TlsSettings:
    """TLS to the frontend: the server's CA (None: the system's roots), the client certificate
    and key for mTLS (both or neither), and the name the server's certificate must carry."""

    server_ca: Source | None = field(default=None, repr=False)
    client_cert: Source | None = field(default=None, repr=False)
    client_key: Source | None = field(default=None, repr=False)
    server_name: str | None = None

    def config(self) -> TLSConfig:
        """The SDK's `TLSConfig`; raises ValueError naming a file that cannot be read."""
        from temporalio.service import TLSConfig

        return TLSConfig(
            server_root_ca_cert=_read(self.server_ca, "the server CA (--tls-ca)"),
            client_cert=_read(self.client_cert, "the client certificate (--tls-cert)"),
            client_private_key=_read(self.client_key, "the client key (--tls-key)"),
            domain=self.server_name,
        )


@dataclass(frozen=True)
class Cluster:
    """Where to connect and how: the resolved settings of the module note."""

    address: str = DEFAULT_ADDRESS
    namespace: str = DEFAULT_NAMESPACE
    api_key: str | None = field(default=None, repr=False)
    tls: TlsSettings | None = None
    rpc_metadata: Mapping[str, str] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        """`ADDRESS (namespace N[, TLS][, mTLS][, API key])`: never a secret."""
        parts = [f"namespace {self.namespace}"]
        if self.tls is not None:
            parts.append("mTLS" if self.tls.client_cert is not None else "TLS")
        if self.api_key:
            parts.append("API key")
        return f"{self.address} ({', '.join(parts)})"

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of `Client.connect` besides the address (raises ValueError for a
        certificate or key that cannot be read)."""
        kwargs: dict[str, Any] = {"namespace": self.namespace, "tls": False}
        if self.tls is not None:
            kwargs["tls"] = self.tls.config()
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if self.rpc_metadata:
            kwargs["rpc_metadata"] = dict(self.rpc_metadata)
        return kwargs


def resolve_cluster(
    options: ClusterOptions = ClusterOptions(),
    *,
    recorded: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Cluster:
    """The cluster of the module note's order of precedence.

    Raises ValueError (one line) for a profile or configuration file that cannot be read, or a
    client certificate without its key (or the other way round).
    """
    from temporalio.envconfig import ClientConfigProfile, ClientConfigTLS

    env = dict(os.environ if environ is None else environ)
    try:
        profile = ClientConfigProfile.load(profile=options.profile, override_env_vars=env)
    except Exception as exc:  # the bridge's ConfigError, a TOML error: one line
        where = env.get("TEMPORAL_CONFIG_FILE") or "~/.config/temporalio/temporal.toml"
        raise ValueError(f"Temporal client configuration ({where}): {exc}") from None
    recorded = recorded or {}
    address = options.address or profile.address or recorded.get("address") or DEFAULT_ADDRESS
    namespace = (
        options.namespace or profile.namespace or recorded.get("namespace") or DEFAULT_NAMESPACE
    )
    api_key = options.api_key or profile.api_key or None
    base = profile.tls or ClientConfigTLS()
    tls = TlsSettings(
        server_ca=options.tls_ca or _source(base.server_root_ca_cert),
        client_cert=options.tls_cert or _source(base.client_cert),
        client_key=options.tls_key or _source(base.client_private_key),
        server_name=options.tls_server_name or base.server_name,
    )
    if (tls.client_cert is None) != (tls.client_key is None):
        raise ValueError(
            "mTLS needs both a client certificate and its key: give --tls-cert and --tls-key "
            "(or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"
        )
    configured = tls != TlsSettings() or (profile.tls is not None and base.disabled is False)
    if options.tls is not None:
        wanted = options.tls
    elif base.disabled is True:
        wanted = False
    else:
        wanted = configured or api_key is not None
    return Cluster(
        address=address,
        namespace=namespace,
        api_key=api_key,
        tls=tls if wanted else None,
        rpc_metadata=dict(profile.grpc_meta),
    )


def _source(value: object) -> Source | None:
    if isinstance(value, Path):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    return None


def _read(source: Source | None, what: str) -> bytes | None:
    if source is None or isinstance(source, bytes):
        return source
    try:
        return source.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {what} {source}: {exc.strerror or exc}") from None


_REFUSED: Final = re.compile(r"ConnectionRefused|Connection refused|os error 111", re.I)
_STATUS: Final = re.compile(r'Status \{ code: (\w+), message: "((?:[^"\\]|\\.)*)"')
_CERTIFICATE: Final = re.compile(r"certificate|UnknownIssuer|NotValidForName|BadCertificate", re.I)
_HANDSHAKE: Final = re.compile(
    r"handshake|tls|alert|InvalidContentType|CorruptMessage|unexpected EOF", re.I
)


def is_transient(exc: BaseException) -> bool:
    """A connection refused: a server that is still starting (worth a short retry); a TLS or
    credential failure never is."""
    return isinstance(exc, RuntimeError) and bool(_REFUSED.search(str(exc)))


def connect_failure(exc: BaseException, cluster: Cluster) -> str:
    """One line for a failed connection: what failed and what to check (never the SDK's
    transport dump, never a secret)."""
    from temporalio.service import RPCError, RPCStatusCode

    where = cluster.describe()
    status: str | None = None
    message = ""
    if isinstance(exc, RPCError):
        status, message = exc.status.name, exc.message
    elif match := _STATUS.search(str(exc)):  # an RPC refused right after connecting
        status, message = _status_name(match.group(1)), match.group(2)
    if status in ("UNKNOWN", "UNAVAILABLE", "CANCELLED"):  # a transport failure after the TLS
        status = None  # handshake (TLS 1.3 checks a client certificate then): classified below
    if status is not None:
        if status == RPCStatusCode.UNAUTHENTICATED.name:
            hint = (
                "the API key was refused (check --api-key / TEMPORAL_API_KEY)"
                if cluster.api_key
                else "it needs credentials: an API key (--api-key / TEMPORAL_API_KEY) or a "
                "client certificate (--tls-cert and --tls-key)"
            )
            return f"the Temporal cluster at {where} refused the connection: {hint}"
        if status == RPCStatusCode.PERMISSION_DENIED.name:
            return (
                f"the Temporal cluster at {where} denied access to namespace "
                f"{cluster.namespace!r}: {message} (check --namespace and the credentials)"
            )
        return f"the Temporal cluster at {where} answered {status}: {message}"
    text = str(exc)
    if _REFUSED.search(text):
        hint = "nothing accepts connections there (is the server running? is the address right?)"
    elif _CERTIFICATE.search(text):
        hint = (
            "its TLS certificate was not accepted (check --tls-ca, and --tls-server-name when "
            "the certificate names another host)"
        )
    elif _HANDSHAKE.search(text) or cluster.tls is not None:
        hint = (
            "the TLS handshake failed (a client certificate missing or refused? --tls-cert and "
            "--tls-key; or a plaintext server: --no-tls)"
        )
    else:
        hint = "the connection failed (a TLS server? try --tls)"
    return f"cannot connect to Temporal at {where}: {hint}"


def _status_name(code: str) -> str:
    """`Unauthenticated` (tonic's spelling) as `UNAUTHENTICATED` (the SDK's `RPCStatusCode`)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", code).upper()
