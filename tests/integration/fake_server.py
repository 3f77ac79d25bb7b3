"""A scripted stdio MCP server for the proxy tests (not a real peer: it lets a test put exact
bytes on the wire and record exact bytes received).

argv[1]: JSON list of steps; argv[2]: log file, every line received is appended verbatim.
Steps: {"until": METHOD} reads until a message with that method; {"until_response": ID} reads
until a response with that id; {"send": OBJ} writes OBJ as one line; {"raw": TEXT} writes TEXT
as one line; {"reply": RESULT} / {"reply_error": ERROR} answer the last message received (by its
id); {"pid": true} logs "pid N"; {"sleep": SECONDS}; {"exit": CODE} ends the process at once;
{"ignore_eof": true} makes it outlive its stdin; {"read_like_the_python_sdk": true} reads stdin
from then on as the official Python SDK's stdio server does (a text wrapper over the bytes, which
ends a line at a lone CR as well). After the script it logs input until EOF (or, with ignore_eof,
sleeps until killed).
"""
import io
import json
import os
import sys
import time

steps = json.load(open(sys.argv[1]))
log = open(sys.argv[2], "a", buffering=1)


last = None
ignore_eof = False


stdin = sys.stdin


def recv():
    global last
    line = stdin.readline()
    if not line:
        if ignore_eof:
            while True:
                time.sleep(60)
        sys.exit(0)
    log.write(line if line.endswith("\n") else line + "\n")
    try:
        last = json.loads(line)
        return last
    except ValueError:
        return None


def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


for step in steps:
    if "until" in step:
        while True:
            msg = recv()
            if isinstance(msg, dict) and msg.get("method") == step["until"]:
                break
    elif "until_response" in step:
        while True:
            msg = recv()
            if isinstance(msg, dict) and msg.get("id") == step["until_response"] and "method" not in msg:
                break
    elif "send" in step:
        send(json.dumps(step["send"], separators=(",", ":")))
    elif "raw" in step:
        send(step["raw"])
    elif "reply" in step:
        send(json.dumps({"jsonrpc": "2.0", "id": last["id"], "result": step["reply"]}, separators=(",", ":")))
    elif "reply_error" in step:
        send(json.dumps({"jsonrpc": "2.0", "id": last["id"], "error": step["reply_error"]}, separators=(",", ":")))
    elif "pid" in step:
        log.write("pid %d\n" % os.getpid())
    elif "ignore_eof" in step:
        ignore_eof = True
    elif "read_like_the_python_sdk" in step:
        # mcp's stdio_server: TextIOWrapper(sys.stdin.buffer, encoding="utf-8"), newline=None.
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
    elif "sleep" in step:
        time.sleep(step["sleep"])
    elif "exit" in step:
        sys.stdout.flush()
        os._exit(step["exit"])

while recv() is not None or True:
    pass
