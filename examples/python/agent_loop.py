#!/usr/bin/env python3
"""A tool loop in Python, standard library only, through promptctx's POST /v1/request.

Every model call is built by the promptctx service: the program keeps the conversation in
promptctx's neutral message model, sends it whole on every turn (the request is stateless:
what the library needs from the previous request is derived from the conversation), and
sends the `body` it gets back to the Anthropic Messages API as is.

    python3 agent_loop.py --promptctx http://127.0.0.1:8787 --anthropic https://api.anthropic.com

Prints one JSON line per model call: {"messages": [...], "body": {...}} (what was sent).
"""
import argparse
import json
import os
import urllib.request

SYSTEM = {
    "segments": [
        {"name": "rules", "content": "You are a careful coding agent. Read before you edit.", "cacheTier": "static"},
        {"name": "task", "content": "Task: find where the build id is set.", "cacheTier": "dynamic"},
    ]
}
TOOLS = [
    {
        "name": "read_file",
        "description": "Reads a file of the repository.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


def post(url, body, headers=None):
    data = json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method="POST")
    req.add_header("content-type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    with urllib.request.urlopen(req) as res:
        return json.loads(res.read().decode("utf-8"))


def read_file(path):
    # A stand-in tool: deterministic contents, so a run can be replayed.
    return "\n".join(f"{path}:{i}: build_id = {i * 7}" for i in range(1, 40))


def run(promptctx, anthropic, model, ask, max_turns):
    messages = [{"id": "u1", "role": "user", "content": [{"type": "text", "text": ask}]}]
    for turn in range(max_turns):
        planned = post(f"{promptctx}/v1/request", {
            "provider": "anthropic",
            "model": model,
            "messages": messages,
            "system": SYSTEM,
            "tools": TOOLS,
            # Only the body and the budget are read here: a smaller answer.
            "include": ["budget"],
        })
        body = planned["body"]
        print(json.dumps({"messages": messages, "body": body}, ensure_ascii=False), flush=True)
        reply = post(
            f"{anthropic}/v1/messages",
            {"model": model, "max_tokens": planned["budget"]["responseReserve"], **body},
            {"x-api-key": os.environ.get("ANTHROPIC_API_KEY", "test"), "anthropic-version": "2023-06-01"},
        )
        # The reply in the neutral model: text and tool calls.
        parts = []
        for block in reply["content"]:
            if block["type"] == "text":
                parts.append({"type": "text", "text": block["text"]})
            elif block["type"] == "tool_use":
                parts.append({"type": "tool_call", "callId": block["id"], "name": block["name"], "input": block["input"]})
        messages.append({"id": f"a{turn}", "role": "assistant", "content": parts})
        calls = [p for p in parts if p["type"] == "tool_call"]
        if reply.get("stop_reason") != "tool_use" or not calls:
            return messages
        results = [
            {"type": "tool_result", "callId": c["callId"], "output": read_file(c["input"].get("path", ""))}
            for c in calls
        ]
        messages.append({"id": f"t{turn}", "role": "tool", "content": results})
    return messages


if __name__ == "__main__":
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--promptctx", default="http://127.0.0.1:8787")
    args.add_argument("--anthropic", default="https://api.anthropic.com")
    args.add_argument("--model", default="claude-sonnet-4-6")
    args.add_argument("--ask", default="Where is the build id set?")
    args.add_argument("--max-turns", type=int, default=8)
    a = args.parse_args()
    run(a.promptctx.rstrip("/"), a.anthropic.rstrip("/"), a.model, a.ask, a.max_turns)
