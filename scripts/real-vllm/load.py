"""A closed-loop load on a vLLM server's /v1/completions that records every
request: the client's own account, held against the report in the tests.

Each user sends a request, waits for its last token, and sends the next;
the number of active users follows the scenario's phases. Prompts are token
ids (a shared prefix of a chosen length, then random ids), so their lengths
are exact. Some requests carry a client deadline (a time-out: the client
hangs up), some are malformed on purpose (4xx).

Usage: python load.py --base URL [--base URL ...] --model NAME --scenario FILE NAME --out FILE.jsonl

With several --base URLs the requests go round-robin over them (the next
request, whoever sends it, to the next server), as a round-robin load
balancer in front of independent servers would send them; each record names
its "base".

Output, one JSON object per line: first {"meta": {...}}, then per request
{"id", "user", "phase", "kind", "start_ms", "first_token_ms", "end_ms",
"status", "outcome", "finish_reason", "prompt_tokens", "completion_tokens",
"max_tokens", and "error" for a connection error}; times are Unix ms of this machine's clock; outcome is one of
ok, timeout, http_error, conn_error.
"""

import argparse
import asyncio
import json
import random
import time

import aiohttp

SEED = 20261203


def now_ms() -> int:
    return int(time.time() * 1000)


class Load:
    def __init__(self, bases: list[str], model: str, sc: dict, out, vocab: int):
        self.bases = [b.rstrip("/") for b in bases]
        self.model = model
        self.sc = sc
        self.out = out
        self.vocab = vocab
        self.target = 0
        self.phase = 0
        self.done = False
        self.next_id = 0
        rng = random.Random(SEED)
        self.prefix = [rng.randrange(4, vocab) for _ in range(sc.get("prefix_tokens", 0))]
        # Ids that end an answer: about 2 % of the vocabulary, so answers
        # stop on their own after ~50 tokens unless max_tokens comes first.
        self.stop_ids = sorted(rng.sample(range(4, vocab), max(1, vocab // 50)))

    def write(self, rec: dict) -> None:
        self.out.write(json.dumps(rec, sort_keys=True) + "\n")
        self.out.flush()

    def body(self, rng: random.Random, kind: str) -> tuple[dict | str, int]:
        lo, hi = self.sc.get("prompt_tokens", [64, 256])
        n = rng.randint(lo, hi)
        prompt = self.prefix[:n] + [rng.randrange(4, self.vocab) for _ in range(max(0, n - len(self.prefix)))]
        mix = self.sc.get("max_tokens", [[64, 1.0]])
        max_tokens = rng.choices([m for m, _ in mix], weights=[w for _, w in mix])[0]
        body = {
            "model": self.model,
            "prompt": prompt,
            # null in the scenario: the request sets none and the server
            # gives it max_model_len - prompt.
            "max_tokens": max_tokens,
            # Sampled, without a per-request seed: on the CPU build a seeded
            # request in a preempted or chunked step kills the engine
            # ("CPU Generator does not use offset", vLLM 0.32.0).
            "temperature": 1.0,
            "stream": True,
            "stream_options": {"include_usage": True},
            "stop_token_ids": self.stop_ids,
        }
        if max_tokens is None:
            body.pop("max_tokens")
        if kind == "long":
            # Runs past the client's deadline: the client hangs up.
            body["max_tokens"] = self.sc.get("long_tokens", 2000)
            body["ignore_eos"] = True
            body.pop("stop_token_ids")
            max_tokens = body["max_tokens"]
        elif kind == "bad":
            which = rng.randrange(3)
            if which == 0:
                body["max_tokens"] = -1  # 400
                max_tokens = -1
            elif which == 1:
                body["model"] = "no-such-model"  # 404
            else:
                return "{not json", max_tokens  # 400
        return body, max_tokens

    async def one(self, session: aiohttp.ClientSession, user: int, rng: random.Random) -> None:
        r = rng.random()
        kind = "normal"
        if r < self.sc.get("timeout_share", 0.0):
            kind = "long"
        elif r < self.sc.get("timeout_share", 0.0) + self.sc.get("bad_share", 0.0):
            kind = "bad"
        body, max_tokens = self.body(rng, kind)
        base = self.bases[self.next_id % len(self.bases)]
        rec = {
            "id": self.next_id,
            "base": base,
            "user": user,
            "phase": self.phase,
            "kind": kind,
            "start_ms": now_ms(),
            "first_token_ms": None,
            "end_ms": None,
            "status": None,
            "outcome": None,
            "finish_reason": None,
            "prompt_tokens": None,
            "completion_tokens": None,
            "max_tokens": max_tokens,
        }
        self.next_id += 1
        deadline = self.sc.get("timeout_s", 30.0) if kind == "long" else 600.0
        try:
            async with asyncio.timeout(deadline):
                kw = {"json": body} if isinstance(body, dict) else {
                    "data": body, "headers": {"Content-Type": "application/json"}}
                async with session.post(base + "/v1/completions", **kw) as resp:
                    rec["status"] = resp.status
                    if resp.status != 200:
                        await resp.read()
                        rec["outcome"] = "http_error"
                    else:
                        async for raw in resp.content:
                            line = raw.decode().strip()
                            if not line.startswith("data:"):
                                continue
                            data = line[5:].strip()
                            if data == "[DONE]":
                                break
                            chunk = json.loads(data)
                            for ch in chunk.get("choices") or []:
                                if rec["first_token_ms"] is None:
                                    rec["first_token_ms"] = now_ms()
                                if ch.get("finish_reason"):
                                    rec["finish_reason"] = ch["finish_reason"]
                            if chunk.get("usage"):
                                rec["prompt_tokens"] = chunk["usage"].get("prompt_tokens")
                                rec["completion_tokens"] = chunk["usage"].get("completion_tokens")
                        rec["outcome"] = "ok"
        except TimeoutError:
            rec["outcome"] = "timeout"
        except (aiohttp.ClientError, ConnectionError, OSError) as e:
            rec["outcome"] = "conn_error"
            rec["error"] = type(e).__name__
        rec["end_ms"] = now_ms()
        self.write(rec)
        if rec["outcome"] == "conn_error":
            await asyncio.sleep(0.5)  # the server is down (a restart): retry later

    async def user(self, session: aiohttp.ClientSession, user: int) -> None:
        rng = random.Random(SEED * 1000 + user)
        think = self.sc.get("think_s", 0.2)
        while not self.done:
            if user >= self.target:
                await asyncio.sleep(0.1)
                continue
            await self.one(session, user, rng)
            await asyncio.sleep(rng.uniform(0, 2 * think))

    async def run(self) -> None:
        phases = self.sc["phases"]
        users = max(u for _, u in phases)
        self.write({"meta": {"scenario": self.sc, "model": self.model, "start_ms": now_ms(),
                             "shared_prefix": len(self.prefix), "stop_token_ids": len(self.stop_ids)}})
        # A new connection per request: reusing a kept-alive connection races
        # with the server closing it, and the request would fail unsent.
        conn = aiohttp.TCPConnector(limit=0, force_close=True)
        async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=None)) as s:
            tasks = [asyncio.create_task(self.user(s, u)) for u in range(users)]
            for i, (secs, n) in enumerate(phases):
                self.phase = i
                self.target = n
                await asyncio.sleep(secs)
            self.target = 0
            self.done = True
            await asyncio.gather(*tasks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, action="append", help="repeat for round-robin over servers")
    ap.add_argument("--model", required=True)
    ap.add_argument("--scenario", nargs=2, required=True, metavar=("FILE", "NAME"))
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.scenario[0]) as f:
        sc = json.load(f)[a.scenario[1]]
    with open(a.out, "w") as out:
        asyncio.run(Load(a.base, a.model, sc, out, a.vocab).run())


if __name__ == "__main__":
    main()
