"""Several endpoints of one judge (`--judge openai:MODEL@URL1,URL2,...`;
docs/scale.md#several-endpoints): which endpoint takes the next attempt, each endpoint's health, and when
a run gives up.

- Each endpoint has its own concurrency: at most `concurrency` attempts in flight on it.
- An attempt goes to the endpoint with the most free slots; never to the one that just failed the
  same call while another endpoint is up. Waiting attempts are served first come, first served.
- An endpoint that fails `drain_after` attempts in a row is drained: it takes nothing for
  `cooldown_s` seconds, so its calls go to the others. After the cool-down it takes one attempt
  at a time (a probe): an answer brings it back whole, a failure drains it again.
- The set is down, and the run stops, only when every endpoint is drained and each has already
  failed again after a cool-down since it last answered: none came back.

Pure bookkeeping over endpoint indexes (asyncio only to wait for a slot); the HTTP clients are the
caller's (judges/openai_compat.MultiEndpointJudge). `clock` is injectable for tests.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from typing import Callable


class EndpointsDown(Exception):
    """Every endpoint is drained and none came back after its cool-down: the run stops (the calls
    not made stay unmade, for the next run of the same command)."""


@dataclass
class Health:
    url: str                            # the public form (no credentials)
    in_use: int = 0                     # attempts in flight
    fails: int = 0                      # failed attempts in a row
    drains: int = 0                     # times drained since it last answered
    drained_until: float | None = None  # no attempts before this time
    probing: bool = False               # after a cool-down: one attempt at a time until it answers
    answered: int = 0
    failed: int = 0
    last_error: str | None = None

    @property
    def state(self) -> str:
        return "drained" if self.drained_until is not None else "probing" if self.probing else "up"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class EndpointSet:
    def __init__(self, urls: list[str], concurrency: int, drain_after: int = 3, cooldown_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic, log: Callable[[str], None] = _stderr):
        if len(urls) < 1 or concurrency < 1 or drain_after < 1 or cooldown_s < 0:
            raise ValueError("an endpoint set needs endpoints, concurrency >= 1, drain_after >= 1, cooldown_s >= 0")
        self.health = [Health(u) for u in urls]
        self.concurrency, self.drain_after, self.cooldown_s = concurrency, drain_after, cooldown_s
        self.clock, self.log = clock, log
        self._waiters: list[list] = []      # [future, avoid], first come first served

    # -- state --------------------------------------------------------------------------------
    def _refresh(self) -> float:
        """Ends the cool-downs that are over (those endpoints now take probes); returns now."""
        now = self.clock()
        for h in self.health:
            if h.drained_until is not None and now >= h.drained_until:
                h.drained_until = None
        return now

    def down(self) -> bool:
        self._refresh()
        return all(h.drained_until is not None and h.drains >= 2 for h in self.health)

    def usable(self, i: int) -> bool:
        """Endpoint i could take an attempt now, or once one of its own attempts ends."""
        self._refresh()
        return self.health[i].drained_until is None

    def elsewhere(self, i: int) -> bool:
        """Another endpoint than i is not drained: a failed attempt may go there at once."""
        self._refresh()
        return any(h.drained_until is None for j, h in enumerate(self.health) if j != i)

    def _pick(self, avoid: int | None) -> int | None:
        """The endpoint for the next attempt, or None (wait): never `avoid` (the endpoint that just
        failed this call) while another endpoint is up, even a busy one."""
        self._refresh()
        if avoid is not None and not self.elsewhere(avoid):
            avoid = None
        best, best_key = None, None
        for i, h in enumerate(self.health):
            limit = 1 if h.probing else self.concurrency
            if i == avoid or h.drained_until is not None or h.in_use >= limit:
                continue
            key = (h.in_use - limit, h.in_use, i)
            if best_key is None or key < best_key:
                best, best_key = i, key
        return best

    def _next_wake(self) -> float | None:
        now = self.clock()
        ends = [h.drained_until - now for h in self.health if h.drained_until is not None]
        return max(0.01, min(ends)) if ends else None

    def describe(self) -> str:
        parts = [f"{h.url} (answered {h.answered}, failed {h.failed}, {h.state}"
                 + (f"; last error: {h.last_error}" if h.last_error else "") + ")" for h in self.health]
        return f"all {len(self.health)} endpoints are down: " + "; ".join(parts)

    def counts(self) -> dict[str, dict]:
        return {h.url: {"answered": h.answered, "failed": h.failed, "state": h.state} for h in self.health}

    # -- slots --------------------------------------------------------------------------------
    def _dispatch(self) -> None:
        """Hands free slots to the waiting attempts in order, or EndpointsDown to all of them."""
        if self.down():
            error = EndpointsDown(self.describe())
            for fut, _ in self._waiters:
                if not fut.done():
                    fut.set_exception(error)
            self._waiters.clear()
            return
        for entry in list(self._waiters):
            fut, avoid = entry
            if fut.done():
                continue
            i = self._pick(avoid)
            if i is None:
                continue            # a later waiter only gets a slot the earlier ones cannot use
            self.health[i].in_use += 1
            self._waiters.remove(entry)
            fut.set_result(i)

    async def acquire(self, avoid: int | None = None) -> int:
        """An endpoint index with a slot taken for one attempt (give it back with release());
        EndpointsDown when the set is down."""
        if not self._waiters:
            if self.down():
                raise EndpointsDown(self.describe())
            i = self._pick(avoid)
            if i is not None:
                self.health[i].in_use += 1
                return i
        fut = asyncio.get_running_loop().create_future()
        entry = [fut, avoid]
        self._waiters.append(entry)
        try:
            while True:
                self._dispatch()
                if fut.done():
                    return fut.result()
                try:    # woken by a release, or when the next cool-down ends
                    return await asyncio.wait_for(asyncio.shield(fut), self._next_wake())
                except asyncio.TimeoutError:
                    continue
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                self.health[fut.result()].in_use -= 1     # handed a slot it will not use
                self._dispatch()
            raise
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    def release(self, i: int, outcome: str, error: str | None = None) -> None:
        """Gives back endpoint i's slot: `answered`, `refused` (the server answered with an error
        that is no fault of the endpoint, e.g. HTTP 400: it is up) or `failed` (it did not answer:
        transport error, timeout, 5xx, 429, a malformed body)."""
        h = self.health[i]
        h.in_use -= 1
        if outcome in ("answered", "refused"):
            if outcome == "answered":
                h.answered += 1
            if h.drained_until is not None or h.probing:
                self.log(f"endpoint {h.url}: answering again, back in the run")
            h.fails, h.drains, h.drained_until, h.probing = 0, 0, None, False
        elif outcome == "failed":
            h.failed += 1
            h.last_error = error
            if h.drained_until is None:        # failures of attempts begun before a drain do not extend it
                h.fails += 1
                if h.probing or h.fails >= self.drain_after:
                    why = ("its probe after the cool-down failed" if h.probing
                           else f"{h.fails} failed attempts in a row")
                    h.drains += 1
                    h.drained_until = self.clock() + self.cooldown_s
                    h.probing = True
                    self.log(f"endpoint {h.url}: drained for {self.cooldown_s:g} s, {why} (last: {error}); "
                             "its calls go to the other endpoints")
                    h.fails = 0
        else:
            raise ValueError(f"outcome: answered, refused or failed, not {outcome!r}")
        self._dispatch()
