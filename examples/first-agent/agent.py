"""Your first A2A agent: the agent contract in Python's standard library.

Caddy (the a2a module) POSTs one JSON object per turn of a task and relays
what this answers, an NDJSON event stream, to A2A clients as it arrives.
"""
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def describe(part):
    """One part of a message as text: text as is, data as JSON, a file by name."""
    if "text" in part:
        return part["text"]
    if "data" in part:
        return json.dumps(part["data"], separators=(",", ":"))
    file = part.get("file", {})
    return f"[file {file.get('name', 'unnamed')}, {file.get('mimeType', 'no type')}]"


class Agent(BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        said = " ".join(describe(p) for p in request["message"]["parts"])
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        if said.startswith("count"):
            # A slow task, to watch, resubscribe to or cancel: "count 10".
            words = said.split()
            last = int(words[1]) if len(words) > 1 and words[1].isdigit() else 10
            self.send({"status": "working", "message": "counting"})
            for n in range(1, last + 1):
                self.send({"text": f"{n} "})
                time.sleep(0.5)
        elif request.get("history"):
            # A later turn of a task that asked for input: the answer.
            self.send({"text": f"Nice to meet you, {said}."})
        elif said.lower() in ("hi", "hello"):
            # Ends this turn waiting: the caller continues the task (taskId).
            self.send({"status": "input-required", "message": "Hello! What is your name?"})
        else:
            self.send({"status": "working", "message": "thinking"})
            for i, word in enumerate(f"You said: {said}".split(" ")):
                self.send({"text": word if i == 0 else " " + word})

    def send(self, event):
        # One JSON object per line, written at once: the module relays it.
        self.wfile.write(json.dumps(event).encode() + b"\n")
        self.wfile.flush()


port = int(os.environ.get("FIRST_AGENT_PORT", "9000"))
ThreadingHTTPServer(("127.0.0.1", port), Agent).serve_forever()
