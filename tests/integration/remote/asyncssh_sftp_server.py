"""asyncssh's own SFTP server on 127.0.0.1: the fallback when OpenSSH's sshd cannot start.

Usage: ``python asyncssh_sftp_server.py PORT HOST_KEY AUTHORIZED_KEYS``; runs until killed.
"""

from __future__ import annotations

import asyncio
import sys

import asyncssh


async def main(port: int, host_key: str, authorized: str) -> None:
    await asyncssh.listen(
        "127.0.0.1",
        port,
        server_host_keys=[host_key],
        authorized_client_keys=authorized,
        sftp_factory=True,
        allow_scp=False,
    )
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
