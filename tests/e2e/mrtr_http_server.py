"""The 2026-07-28 test server of mrtr_server.py, served over Streamable HTTP on 127.0.0.1.

Run as: python mrtr_http_server.py PORT   (endpoint http://127.0.0.1:PORT/mcp)
"""

from __future__ import annotations

import sys

from mrtr_server import app

if __name__ == "__main__":
    app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
