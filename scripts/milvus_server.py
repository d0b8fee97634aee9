"""Serve one Milvus Lite file to several processes over gRPC (MILVUS_URI=http://HOST:PORT).

Milvus Lite opens its file in one process only; the app, init_index.py --update-law and the eval CLI then need
a server. milvus-lite 2.5.1 has no ``server`` command (3.x does), but its engine listens on a TCP address when
given one; this runs it in the foreground until SIGTERM / Ctrl-C::

    python scripts/milvus_server.py --db data/milvus-server/milvus.db --port 19530

For production, run a real Milvus (docs/milvus.md). The default host is 127.0.0.1: Lite has no authentication.
"""
from __future__ import annotations

import argparse
import signal
import sys
import warnings
from pathlib import Path


def start(db: Path, host: str, port: int):
    """A started milvus_lite Server on host:port, or None (the file is held by another process, a bad name …)."""
    with warnings.catch_warnings():  # milvus-lite 2.5.1 imports pkg_resources, which warns on import
        warnings.simplefilter("ignore", UserWarning)
        from milvus_lite.server import Server

    db.parent.mkdir(parents=True, exist_ok=True)
    server = Server(str(db), f"{host}:{port}")
    return server if server.init() and server.start() else None


def stop(server) -> None:
    """SIGTERM the engine first: in TCP mode it does not watch the lock that Server.stop() releases."""
    proc = getattr(server, "_p", None)
    if proc is not None and proc.poll() is None:
        proc.terminate()
    server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, required=True, help="the Milvus Lite file (created if missing)")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default %(default)s; Lite has no auth)")
    p.add_argument("--port", type=int, default=19530)
    args = p.parse_args(argv)
    server = start(args.db, args.host, args.port)
    if server is None:
        print(f"error: could not serve {args.db} on {args.host}:{args.port} (another process has the file open, "
              "or the port is taken)", file=sys.stderr)
        return 1
    print(f"serving {args.db} at http://{args.host}:{args.port} (Ctrl-C to stop)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server._p.wait()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        stop(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
