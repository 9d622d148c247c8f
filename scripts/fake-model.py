#!/usr/bin/env python3
"""A fake model endpoint for scripts/real-agents: lets Codex CLI complete an
MCP tool call with no network and no API key.

It speaks just enough of the OpenAI Responses API (POST /v1/responses,
answered as server-sent events) for one scripted turn:

  1. a request carrying no tool output is answered with a function call to
     the tool whose name ends in "list_terminals" (Codex names MCP tools
     itself; the name is taken from the request's `tools`);
  2. a request carrying the call's output is answered with a final message
     quoting that output.

Bound to 127.0.0.1 only; exits after --lifetime seconds whatever happens.
Writes the port it listens on to --port-file and one line per request to
--log (and stderr).

usage: fake-model.py --port-file FILE --log FILE [--lifetime SECONDS]
"""
import argparse
import http.server
import json
import os
import sys
import threading

TOOL_SUFFIX = "list_terminals"

args = None
log_lock = threading.Lock()


def log(line):
    line = line.replace("\n", "\\n")
    with log_lock:
        print(line, file=sys.stderr, flush=True)
        if args.log:
            with open(args.log, "a") as f:
                f.write(line + "\n")


def tool_entries(tools):
    """Yields (name, namespace) for every function tool, namespaced or not."""
    for t in tools or []:
        if t.get("type") == "function":
            yield t.get("name", ""), None
        elif t.get("type") == "namespace":
            for sub in t.get("tools") or []:
                yield sub.get("name", ""), t.get("name")


def output_text(output):
    """The text of a function_call_output's output (a string or content items)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(i.get("text", "") for i in output if isinstance(i, dict))
    return json.dumps(output)


def summary(result):
    """Quotes the terminals of a list_terminals result, or its start."""
    try:
        terminals = json.loads(result[result.index("{"):])["terminals"]
        return "; ".join(f'{t.get("id")} "{t.get("title")}" in {t.get("directory")}'
                         for t in terminals) or "no terminals"
    except (ValueError, KeyError, TypeError):
        return result[:200]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counter = 0

    def log_message(self, fmt, *a):  # the default goes to stderr unformatted
        pass

    def do_GET(self):
        log(f"GET {self.path} -> 404")
        self.reply(404, "application/json", b'{"error":{"message":"not here"}}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            log(f"POST {self.path}: not JSON ({len(body)} bytes) -> 400")
            return self.reply(400, "application/json", b'{"error":{"message":"bad json"}}')
        if not self.path.rstrip("/").endswith("/responses"):
            log(f"POST {self.path} -> 404")
            return self.reply(404, "application/json", b'{"error":{"message":"not here"}}')
        Handler.counter += 1
        n = Handler.counter
        tools = list(tool_entries(req.get("tools")))
        names = [f"{ns}/{name}" if ns else name for name, ns in tools]
        log(f"request {n}: POST {self.path} model={req.get('model')} stream={req.get('stream')} "
            f"tools={len(names)} {[x for x in names if TOOL_SUFFIX in x or 'mcp' in x]}")

        outputs = [i for i in req.get("input") or []
                   if isinstance(i, dict) and i.get("type") == "function_call_output"]
        rid = f"resp_{n}"
        if outputs:
            result = output_text(outputs[-1].get("output"))
            log(f"request {n}: tool result received: {result}")
            text = f"Phantom's list_terminals answered: {summary(result)}"
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
            log(f"request {n}: answering with the final message")
        else:
            match = [(name, ns) for name, ns in tools if name.endswith(TOOL_SUFFIX)]
            if not match:
                log(f"request {n}: no tool ending in {TOOL_SUFFIX!r} offered; all tools: {names}")
                item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                        "content": [{"type": "output_text", "annotations": [],
                                     "text": f"no {TOOL_SUFFIX} tool was offered"}]}
            else:
                name, ns = match[0]
                item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                        "name": name, "arguments": "{}"}
                if ns:
                    item["namespace"] = ns
                log(f"request {n}: answering with a call to {ns + '/' if ns else ''}{name}")
        self.stream(rid, item)

    def stream(self, rid, item):
        usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 2}
        events = [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {"id": rid, "status": "completed", "output": [item], "usage": usage}},
        ]
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.reply(200, "text/event-stream", data)

    def reply(self, code, ctype, data):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log")
    p.add_argument("--lifetime", type=float, default=300)
    args = p.parse_args()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    # Bounded in time, whatever the client does.
    timer = threading.Timer(args.lifetime, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.rename(tmp, args.port_file)
    log(f"listening on 127.0.0.1:{srv.server_address[1]} for {args.lifetime:g} s")
    srv.serve_forever()


if __name__ == "__main__":
    main()
