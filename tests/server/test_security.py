"""Bearer-token auth, TLS and mTLS against the real server (certificates made here)."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from server.pb.source_tracer.v1 import tracer_pb2 as pb
from server.pb.source_tracer.v1 import tracer_pb2_grpc
from tests.server.conftest import EN_RECORDS, EN_REPORT, InProcessServer, base_config, records_pb

TOKEN = "t0ken-for-tests"


@pytest.fixture(scope="module")
def auth_server():
    srv = InProcessServer(base_config(auth_token=TOKEN))
    yield srv
    srv.close()


def _request() -> pb.TraceRequest:
    return pb.TraceRequest(report=EN_REPORT, records=records_pb(EN_RECORDS))


def test_no_token_is_unauthenticated(auth_server) -> None:
    stub = auth_server.stub()
    with pytest.raises(grpc.RpcError) as err:
        stub.Trace(_request())
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as err:
        list(stub.TraceStream(iter([_request()])))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_refused_call_carries_its_request_id_and_is_logged(auth_server, monkeypatch) -> None:
    from server import interceptors

    logged: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(interceptors, "log", lambda event, level, **fields: logged.append((event, fields)))
    with pytest.raises(grpc.RpcError) as err:
        auth_server.stub().Trace(_request(), metadata=(("x-request-id", "job-9"),))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert ("x-request-id", "job-9") in err.value.trailing_metadata()
    assert logged == [("auth refused", {"request_id": "job-9", "method": "Trace", "code": "UNAUTHENTICATED"})]
    with pytest.raises(grpc.RpcError) as err:
        list(auth_server.stub().TraceStream(iter([_request()])))
    generated = dict(err.value.trailing_metadata())["x-request-id"]
    assert len(generated) == 32 and logged[-1][1]["request_id"] == generated


def test_wrong_token_is_unauthenticated(auth_server) -> None:
    for value in ("Bearer nope", TOKEN, f"bearer {TOKEN}x", "Basic abc", f"Basic {TOKEN}", f"Bearer{TOKEN}"):
        with pytest.raises(grpc.RpcError) as err:
            auth_server.stub().Trace(_request(), metadata=(("authorization", value),))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_right_token_works(auth_server) -> None:
    md = (("authorization", f"Bearer {TOKEN}"),)
    resp = auth_server.stub().Trace(_request(), metadata=md)
    assert resp.citations
    items = list(auth_server.stub().TraceStream(iter([pb.TraceRequest(id="x", report="Hi.")]), metadata=md))
    assert [i.id for i in items] == ["x"]


def test_the_scheme_is_case_insensitive(auth_server) -> None:
    """RFC 7235: "bearer" and "BEARER" name the scheme as "Bearer" does (clients differ)."""
    for scheme in ("bearer", "BEARER", "Bearer"):
        resp = auth_server.stub().Trace(_request(), metadata=(("authorization", f"{scheme} {TOKEN}"),))
        assert resp.citations


def test_health_and_reflection_need_no_token(auth_server) -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    health = health_pb2_grpc.HealthStub(auth_server.channel())
    assert health.Check(health_pb2.HealthCheckRequest()).status == health_pb2.HealthCheckResponse.SERVING
    refl = reflection_pb2_grpc.ServerReflectionStub(auth_server.channel())
    out = list(refl.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
    assert out[0].list_services_response.service


# ---- TLS / mTLS --------------------------------------------------------------------------------


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert(subject: str, key, issuer_cert, issuer_key, *, ca: bool = False, server: bool = False):
    now = dt.datetime.now(dt.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_cert.subject if issuer_cert is not None else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(issuer_key if issuer_key is not None else key, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("pki")
    ca_key = _key()
    ca = _cert("test-ca", ca_key, None, None, ca=True)
    srv_key = _key()
    srv = _cert("localhost", srv_key, ca, ca_key, server=True)
    cli_key = _key()
    cli = _cert("client", cli_key, ca, ca_key)
    other_key = _key()
    other_ca = _cert("other-ca", other_key, None, None, ca=True)
    rogue_key = _key()
    rogue = _cert("rogue", rogue_key, other_ca, other_key)
    files = {
        "ca": ca.public_bytes(serialization.Encoding.PEM),
        "cert": srv.public_bytes(serialization.Encoding.PEM),
        "key": _pem_key(srv_key),
        "client_cert": cli.public_bytes(serialization.Encoding.PEM),
        "client_key": _pem_key(cli_key),
        "rogue_cert": rogue.public_bytes(serialization.Encoding.PEM),
        "rogue_key": _pem_key(rogue_key),
    }
    out = {}
    for name, data in files.items():
        (d / f"{name}.pem").write_bytes(data)
        out[name] = d / f"{name}.pem"
    return out


def _secure_stub(srv: InProcessServer, pki, cert: str | None = None, key: str | None = None):
    creds = grpc.ssl_channel_credentials(
        root_certificates=pki["ca"].read_bytes(),
        private_key=pki[key].read_bytes() if key else None,
        certificate_chain=pki[cert].read_bytes() if cert else None,
    )
    options = (("grpc.ssl_target_name_override", "localhost"),)
    channel = grpc.secure_channel(srv.address, creds, options=options)
    return tracer_pb2_grpc.SourceTracerStub(channel)


def test_tls(pki) -> None:
    srv = InProcessServer(base_config(tls_cert=str(pki["cert"]), tls_key=str(pki["key"])))
    try:
        assert _secure_stub(srv, pki).Trace(_request(), timeout=30).citations
        with pytest.raises(grpc.RpcError) as err:  # plaintext client cannot talk to a TLS server
            srv.stub().Trace(_request(), timeout=5)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.close()


def test_mtls(pki) -> None:
    srv = InProcessServer(
        base_config(tls_cert=str(pki["cert"]), tls_key=str(pki["key"]), tls_ca=str(pki["ca"])))
    try:
        ok = _secure_stub(srv, pki, "client_cert", "client_key")
        assert ok.Trace(_request(), timeout=30).citations
        for cert, key in ((None, None), ("rogue_cert", "rogue_key")):
            with pytest.raises(grpc.RpcError) as err:
                _secure_stub(srv, pki, cert, key).Trace(_request(), timeout=5)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.close()


def test_token_from_environment_in_a_served_process() -> None:
    from tests.server.conftest import SubprocessServer

    srv = SubprocessServer(env={"SOURCE_TRACER_AUTH_TOKEN": TOKEN})
    try:
        assert next(e for e in srv.logs if e.get("event") == "serving")["auth"] is True
        channel = grpc.insecure_channel(srv.address)
        stub = tracer_pb2_grpc.SourceTracerStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            stub.Trace(_request(), timeout=30)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        resp = stub.Trace(_request(), timeout=30, metadata=(("authorization", f"Bearer {TOKEN}"),))
        assert resp.citations
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        srv.close()


def test_grpcurl_with_and_without_token(auth_server) -> None:
    import json
    import subprocess
    import sys

    grpcurl = str(Path(sys.executable).parent / "grpcurl")
    body = json.dumps({"report": EN_REPORT, "records": EN_RECORDS})
    method = "source_tracer.v1.SourceTracer/Trace"

    def call(*headers: str) -> subprocess.CompletedProcess[str]:
        cmd = [grpcurl, "-plaintext", *headers, "-d", "@", auth_server.address, method]
        return subprocess.run(cmd, input=body, capture_output=True, text=True, timeout=60)

    denied = call()
    assert denied.returncode != 0 and "Unauthenticated" in denied.stderr
    ok = call("-H", f"authorization: Bearer {TOKEN}")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["citations"]
    listed = subprocess.run([grpcurl, "-plaintext", auth_server.address, "list"],
                            capture_output=True, text=True, timeout=60)
    assert "source_tracer.v1.SourceTracer" in listed.stdout  # reflection needs no token


def test_mtls_in_a_served_process(pki) -> None:
    from tests.server.conftest import SubprocessServer

    srv = SubprocessServer("--tls-cert", str(pki["cert"]), "--tls-key", str(pki["key"]),
                           "--tls-ca", str(pki["ca"]))
    try:
        serving = next(e for e in srv.logs if e.get("event") == "serving")
        assert serving["tls"] is True and serving["mtls"] is True
        assert _secure_stub(srv, pki, "client_cert", "client_key").Trace(_request(), timeout=30).citations
        with pytest.raises(grpc.RpcError) as err:
            _secure_stub(srv, pki).Trace(_request(), timeout=5)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.close()
