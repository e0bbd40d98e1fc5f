"""The ``zeromq`` writer: the stream protocol over ZeroMQ, to one ZMQ_PAIR client (§4.3).

The writer binds ``uri`` (``tcp://HOST:PORT``, ``HOST`` ``*`` for every interface,
``PORT`` ``*`` for any; or ``ipc://PATH``); a client connects its own PAIR socket. One
ZeroMQ message is one frame (no length prefix). The writer speaks ZMTP itself
(:mod:`replicator.writers.zmtp`) over the listener the network writer uses
(:mod:`replicator.writers.listener`), so both follow the same rules: one client, a new
connection replaces one that has not started replication, a client that is streaming
turns others away (libzmq reconnects them by itself, so they get in once the slot is
free), idle and half-sent peers are dropped, TCP keepalive notices a vanished one, and
a client that leaves stops the stream at once.

Why not a libzmq PAIR socket, as OpenLogReplicator binds: libzmq attaches the first
peer and detaches every later one from the socket, but keeps that peer's connection
open with nowhere to put its messages; its input stops at the first one. Such
connections never close (their ends pile up in CLOSE-WAIT and, counted as peers, locked
real clients out), and with ZMQ_HEARTBEAT_IVL set -- which a writer needs to notice a
vanished peer -- the next error on one (the peer closing) leaves a pending heartbeat
timer that writes to it: libzmq aborts the process (``Assertion failed: !_io_error
(src/stream_engine_base.cpp:310)``, issue 31), typically a few seconds after a second
client connected while another streamed.

With ``auth-token`` (an extension) the ZMTP mechanism is PLAIN: a client must send the
token as its PLAIN password (``replicator client zeromq --token``; with pyzmq,
``plain_username`` anything, ``plain_password`` the token); others are closed during the
handshake (WARN 60103), before they can send a request. PLAIN does not encrypt: beyond
loopback use a tunnel or VPN as well. Without a token the mechanism is NULL, which is
what OpenLogReplicator's StreamClient speaks.
"""

from __future__ import annotations

from replicator.config.writer import ZeroMQWriterConfig, zeromq_endpoint
from replicator.writers.listener import Endpoint, Listener
from replicator.writers.stream_writer import StreamWriter
from replicator.writers.transport import Transport
from replicator.writers.zmtp import ZmtpServer

HANDSHAKE_S = 5.0  # ZMTP handshake, and then START/CONTINUE, within this (capped by client_timeout_s)


class ZeroMQWriter(StreamWriter):
    """``type: zeromq``: serves one ZMQ_PAIR client at ``uri``."""

    type_name = "zeromq"

    def make_transport(self) -> Transport:
        """A listener speaking ZMTP at the configured endpoint."""
        config: ZeroMQWriterConfig = self.config
        scheme, host, port = zeromq_endpoint(config.uri)
        if scheme == "ipc":
            endpoint = Endpoint(path=host, scheme="ipc://")
        else:
            endpoint = Endpoint("0.0.0.0" if host == "*" else host, "0" if port == "*" else port, scheme="tcp://")
        token = config.auth_token.encode() if config.auth_token else None
        return Listener(
            endpoint,
            self,
            lambda: ZmtpServer(token),
            label="ZeroMQ writer",
            client_timeout_s=self.client_timeout_s,
            handshake_s=HANDSHAKE_S,
            authenticated=token is not None,
        )
