"""Connecting to a cluster that is not a plaintext dev server: a TLS endpoint with a private CA,
one that requires a client certificate (mTLS), one that requires an API key — fronts on
127.0.0.1 before the test dev server (`tls_front.py`). Every command takes the same options
(flags, or temporalio's environment configuration); each wrong or missing credential is one
clear line on stderr and a non-zero exit, and a secret is never printed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("temporalio")

import trustme

from tether.testing.scripted_model import text_reply

from .conftest import TETHER, Cluster
from .tls_front import TlsFront, write_ca, write_client_credentials

pytestmark = pytest.mark.slow

API_KEY = "tk-7f3a-secret-api-key"


class Fronts:
    def __init__(self, cluster: Cluster, root: Path) -> None:
        self.ca, self.client_ca, self.other_ca = trustme.CA(), trustme.CA(), trustme.CA()
        self.ca_pem = write_ca(self.ca, root / "ca.pem")
        self.other_ca_pem = write_ca(self.other_ca, root / "other-ca.pem")
        self.cert, self.key = write_client_credentials(self.client_ca, root)
        port = cluster.server.port
        self.tls = TlsFront(port, self.ca)
        self.mtls = TlsFront(port, self.ca, client_ca=self.client_ca)
        self.keyed = TlsFront(port, self.ca, api_key=API_KEY)
        self.named = TlsFront(port, self.ca, names=("temporal.test",))

    def client_flags(self) -> tuple[str, ...]:
        return (
            "--tls-ca",
            str(self.ca_pem),
            "--tls-cert",
            str(self.cert),
            "--tls-key",
            str(self.key),
        )

    def close(self) -> None:
        for front in (self.tls, self.mtls, self.keyed, self.named):
            front.close()


@pytest.fixture(scope="module")
def fronts(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fronts]:
    made = Fronts(cluster, tmp_path_factory.mktemp("tls"))
    try:
        yield made
    finally:
        made.close()


def sessions(
    cluster: Cluster, cwd: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TETHER), "temporal", "sessions", "--json", *args],
        cwd=cwd,
        env=cluster.env(cwd, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "tonic" not in lines[0]
    assert "Traceback" not in lines[0]
    return lines[0]


def test_a_tls_endpoint_with_a_private_ca_is_reached_with_tls_ca(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    done = sessions(
        cluster, tmp_path, "--address", fronts.tls.address, "--tls-ca", str(fronts.ca_pem)
    )
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)


def test_a_server_certificate_of_an_unknown_ca_is_one_line_naming_tls_ca(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    ca = str(fronts.other_ca_pem)
    done = sessions(cluster, tmp_path, "--address", fronts.tls.address, "--tls-ca", ca)
    assert done.returncode == 1
    assert "its TLS certificate was not accepted (check --tls-ca" in one_line(done.stderr)


def test_a_certificate_for_another_name_is_accepted_with_tls_server_name(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    base = ("--address", fronts.named.address, "--tls-ca", str(fronts.ca_pem))
    refused = sessions(cluster, tmp_path, *base)
    assert refused.returncode == 1
    assert "--tls-server-name" in one_line(refused.stderr)
    named = sessions(cluster, tmp_path, *base, "--tls-server-name", "temporal.test")
    assert named.returncode == 0, named.stderr


def test_mtls_connects_with_the_client_certificate_and_key(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    done = sessions(cluster, tmp_path, "--address", fronts.mtls.address, *fronts.client_flags())
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)


def test_mtls_without_a_client_certificate_is_one_line_naming_tls_cert(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    ca = str(fronts.ca_pem)
    done = sessions(cluster, tmp_path, "--address", fronts.mtls.address, "--tls-ca", ca)
    assert done.returncode == 1
    assert "TLS handshake failed (a client certificate missing or refused? --tls-cert" in one_line(
        done.stderr
    )


def test_mtls_settings_come_from_temporalios_environment_variables(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    done = sessions(
        cluster,
        tmp_path,
        TEMPORAL_ADDRESS=fronts.mtls.address,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH=str(fronts.ca_pem),
        TEMPORAL_TLS_CLIENT_CERT_PATH=str(fronts.cert),
        TEMPORAL_TLS_CLIENT_KEY_PATH=str(fronts.key),
    )
    assert done.returncode == 0, done.stderr


def test_an_api_key_from_the_environment_is_accepted(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    args = ("--address", fronts.keyed.address, "--tls-ca", str(fronts.ca_pem))
    done = sessions(cluster, tmp_path, *args, TEMPORAL_API_KEY=API_KEY)
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)
    assert API_KEY not in done.stderr + done.stdout


def test_a_wrong_api_key_is_one_line_and_never_printed(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    args = ("--address", fronts.keyed.address, "--tls-ca", str(fronts.ca_pem))
    done = sessions(cluster, tmp_path, *args, "--api-key", "wrong-key-1234")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.endswith("the API key was refused (check --api-key / TEMPORAL_API_KEY)")
    assert "wrong-key-1234" not in done.stderr + done.stdout


def test_a_missing_api_key_is_one_line_saying_credentials_are_needed(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    args = ("--address", fronts.keyed.address, "--tls-ca", str(fronts.ca_pem))
    done = sessions(cluster, tmp_path, *args)
    assert done.returncode == 1
    assert "it needs credentials: an API key (--api-key / TEMPORAL_API_KEY)" in one_line(
        done.stderr
    )


def test_a_turn_runs_end_to_end_through_mtls_for_both_worker_and_client(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    worker = cluster.spawn_worker(
        "mtls", tmp_path / "ws", "mtls", address=fronts.mtls.address, args=fronts.client_flags()
    )
    try:
        cluster.model.push(text_reply("Over mTLS."))
        done = cluster.tether(
            tmp_path,
            "run",
            "--temporal",
            fronts.mtls.address,
            *fronts.client_flags(),
            "--task-queue",
            "mtls",
            "hello",
        )
        assert (done.returncode, done.stdout) == (0, "Over mTLS.\n"), done.stderr
    finally:
        worker.stop()


def test_a_turn_runs_end_to_end_with_an_api_key_from_the_environment(
    cluster: Cluster, fronts: Fronts, tmp_path: Path
) -> None:
    env = {"TEMPORAL_API_KEY": API_KEY, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(fronts.ca_pem)}
    worker = cluster.spawn_worker(
        "keyed", tmp_path / "ws", "keyed", address=fronts.keyed.address, env=env
    )
    try:
        cluster.model.push(text_reply("With a key."))
        done = subprocess.run(
            [
                str(TETHER),
                "run",
                "--temporal",
                fronts.keyed.address,
                "--task-queue",
                "keyed",
                "hello",
            ],
            cwd=tmp_path,
            env=cluster.env(tmp_path, **env),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stdout) == (0, "With a key.\n"), done.stderr
        assert API_KEY not in done.stderr + worker.log.read_text()
    finally:
        worker.stop()


def test_a_connection_failure_still_gives_a_json_script_its_result_record(
    cluster: Cluster, tmp_path: Path
) -> None:
    args = ("run", "--temporal", "127.0.0.1:1", "--output-format", "json", "hello")
    done = cluster.tether(tmp_path, *args)
    assert done.returncode == 1
    record = json.loads(done.stdout)
    assert (record["type"], record["is_error"]) == ("result", True)
    assert record["tether"]["outcome"]["error"]["code"] == "TEMPORAL_UNREACHABLE"
    assert "nothing accepts connections there" in record["errors"][0]
