"""Which cluster and credentials a Temporal command uses (`tether.temporal.cluster`): explicit
options over temporalio's environment configuration (variables over the profile file) over a
session's recorded cluster over the defaults; TLS when asked for, implied by an API key or any
TLS setting; secrets never in a `repr` or a description; failures in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("temporalio")

from temporalio.service import RPCError, RPCStatusCode

from tether.temporal.cluster import (
    Cluster,
    ClusterOptions,
    TlsSettings,
    connect_failure,
    resolve_cluster,
)

NO_FILE = {"TEMPORAL_CONFIG_FILE": "/nonexistent/temporal.toml"}


def test_without_any_setting_the_cluster_is_the_local_plaintext_default() -> None:
    cluster = resolve_cluster(environ=NO_FILE)
    assert cluster == Cluster(address="127.0.0.1:7233", namespace="default")


def test_environment_variables_name_the_cluster_and_an_api_key_implies_tls() -> None:
    env = {
        **NO_FILE,
        "TEMPORAL_ADDRESS": "ns.acct.tmprl.cloud:7233",
        "TEMPORAL_NAMESPACE": "ns.acct",
        "TEMPORAL_API_KEY": "key-from-env",
    }
    cluster = resolve_cluster(environ=env)
    assert (cluster.address, cluster.namespace, cluster.api_key) == (
        "ns.acct.tmprl.cloud:7233",
        "ns.acct",
        "key-from-env",
    )
    assert cluster.tls == TlsSettings()
    assert cluster.connect_kwargs()["tls"] is not False


def test_explicit_options_win_over_the_environment() -> None:
    env = {**NO_FILE, "TEMPORAL_ADDRESS": "env:7233", "TEMPORAL_NAMESPACE": "env-ns"}
    options = ClusterOptions(address="flag:7233", namespace="flag-ns", api_key="flag-key")
    cluster = resolve_cluster(options, environ=env)
    assert (cluster.address, cluster.namespace, cluster.api_key) == (
        "flag:7233",
        "flag-ns",
        "flag-key",
    )


def test_a_profile_of_the_configuration_file_is_used_and_variables_override_it(
    tmp_path: Path,
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    config = tmp_path / "temporal.toml"
    config.write_text(
        '[profile.prod]\naddress = "prod:7233"\nnamespace = "prod-ns"\n'
        f'[profile.prod.tls]\nserver_ca_cert_path = "{ca}"\nserver_name = "prod.internal"\n'
    )
    env = {
        "TEMPORAL_CONFIG_FILE": str(config),
        "TEMPORAL_PROFILE": "prod",
        "TEMPORAL_NAMESPACE": "override-ns",
    }
    cluster = resolve_cluster(environ=env)
    assert (cluster.address, cluster.namespace) == ("prod:7233", "override-ns")
    assert cluster.tls == TlsSettings(server_ca=ca, server_name="prod.internal")


def test_a_missing_profile_is_one_line_naming_the_file() -> None:
    with pytest.raises(ValueError, match=r"^Temporal client configuration \(/nonexistent"):
        resolve_cluster(ClusterOptions(profile="nope"), environ=NO_FILE)


def test_a_sessions_recorded_cluster_comes_after_the_environment() -> None:
    recorded = {"address": "recorded:7233", "namespace": "recorded-ns"}
    assert resolve_cluster(recorded=recorded, environ=NO_FILE).address == "recorded:7233"
    env = {**NO_FILE, "TEMPORAL_ADDRESS": "env:7233"}
    cluster = resolve_cluster(recorded=recorded, environ=env)
    assert (cluster.address, cluster.namespace) == ("env:7233", "recorded-ns")


def test_no_tls_turns_tls_off_even_with_an_api_key() -> None:
    options = ClusterOptions(api_key="k", tls=False)
    assert resolve_cluster(options, environ=NO_FILE).tls is None


def test_a_client_certificate_without_its_key_is_refused(tmp_path: Path) -> None:
    options = ClusterOptions(tls_cert=tmp_path / "client.pem")
    with pytest.raises(ValueError, match="needs both a client certificate and its key"):
        resolve_cluster(options, environ=NO_FILE)


def test_an_unreadable_certificate_is_named_when_connecting(tmp_path: Path) -> None:
    cluster = resolve_cluster(ClusterOptions(tls_ca=tmp_path / "missing.pem"), environ=NO_FILE)
    with pytest.raises(ValueError, match=r"cannot read the server CA \(--tls-ca\) .*missing\.pem"):
        cluster.connect_kwargs()


def test_secrets_never_appear_in_a_repr_or_a_description(tmp_path: Path) -> None:
    options = ClusterOptions(
        api_key="s3cr3t-api-key", tls_cert=tmp_path / "client.pem", tls_key=tmp_path / "c.key"
    )
    cluster = resolve_cluster(options, environ={**NO_FILE, "TEMPORAL_API_KEY": "env-secret"})
    shown = repr(cluster) + repr(options) + cluster.describe()
    assert "s3cr3t-api-key" not in shown
    assert "env-secret" not in shown
    assert cluster.describe() == "127.0.0.1:7233 (namespace default, mTLS, API key)"


def test_a_refused_api_key_is_one_line_that_names_the_setting() -> None:
    cluster = Cluster(address="a:1", api_key="k", tls=TlsSettings())
    raised = RuntimeError(
        "Failed client connect: `get_system_info` call error after connection: Status { code: "
        'Unauthenticated, message: "invalid API key", metadata: MetadataMap { headers: {} } }'
    )
    assert connect_failure(raised, cluster) == (
        "the Temporal cluster at a:1 (namespace default, TLS, API key) refused the connection: "
        "the API key was refused (check --api-key / TEMPORAL_API_KEY)"
    )


def test_a_denied_namespace_is_one_line_that_names_it() -> None:
    cluster = Cluster(address="a:1", namespace="other")
    raised = RPCError("namespace other not allowed", RPCStatusCode.PERMISSION_DENIED, b"")
    assert "denied access to namespace 'other'" in connect_failure(raised, cluster)


def test_a_transport_failure_never_shows_the_sdks_dump() -> None:
    raised = RuntimeError(
        "Failed client connect: Server connection error: tonic::transport::Error(Transport, "
        "ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }))"
    )
    line = connect_failure(raised, Cluster(address="a:1", tls=TlsSettings()))
    assert "tonic" not in line
    assert "certificate was not accepted (check --tls-ca" in line
