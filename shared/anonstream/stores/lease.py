"""Leader election by a lease with a fencing token: one refit instance fits and publishes, the others stand by.

A lease is held by one owner for ``ttl_s``; acquiring it hands out a **fencing token**, a number larger than any
handed out before. The leader renews the lease every ``renew_every_s`` (a third of the TTL by default); an instance
that dies or hangs stops renewing, the lease expires, and a standby acquires it with the next token. A write the
leader makes to a shared store carries its ``Fence``; the store refuses it (``StaleLeader``) unless that token is
still the latest one handed out and its lease is still held, so a leader that was paused past its lease (a long GC,
a stopped process, a network partition) cannot overwrite its successor's work when it wakes up.

``LeaderElection`` is the decision logic alone (when to acquire, renew, give up; whether this instance may act as
leader right now): it runs against any ``LeaseBackend`` and any clock, so it is tested without Redis. Besides the
store's verdict, it keeps a local bound: an instance stops acting as leader once ``ttl_s`` minus a safety margin has
passed since the start of its last successful acquire or renew, even if Redis cannot be asked; the lease cannot have
passed to another owner before then. ``InMemoryLease`` is the backend of the tests and of the in-process runner;
``stores/redis_lease.py`` the services' one (Redis or Redis Cluster).
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from abc import ABC, abstractmethod
from typing import Callable

from .base import Fence, StaleLeader, StoreUnavailable

__all__ = ["Fence", "InMemoryLease", "LeaderElection", "LeaseBackend", "StaleLeader"]

log = logging.getLogger(__name__)


class LeaseBackend(ABC):
    """One lease. ``owner`` is the caller's unique value (one per process and acquisition)."""

    @abstractmethod
    def try_acquire(self, owner: str, ttl_s: float) -> int | None:
        """Take the lease if nobody holds it: the new fencing token, or None when another owner holds it."""

    @abstractmethod
    def renew(self, owner: str, ttl_s: float) -> bool:
        """Reset the lease's time to live to ``ttl_s`` if ``owner`` still holds it; False if it does not."""

    @abstractmethod
    def release(self, owner: str) -> None:
        """Give the lease up if ``owner`` holds it (never someone else's)."""

    @abstractmethod
    def fence(self, owner: str, token: int) -> Fence:
        """The ``Fence`` a write of the holder of (``owner``, ``token``) carries."""


class InMemoryLease(LeaseBackend):
    """A lease in one process (tests, the in-process runner); ``clock`` in seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._lock = threading.Lock()
        self._owner: str | None = None
        self._expires = 0.0
        self._token = 0

    def _held(self) -> str | None:
        return self._owner if self._owner is not None and self.clock() < self._expires else None

    def try_acquire(self, owner: str, ttl_s: float) -> int | None:
        with self._lock:
            if self._held() is not None:
                return None
            self._token += 1
            self._owner, self._expires = owner, self.clock() + ttl_s
            return self._token

    def renew(self, owner: str, ttl_s: float) -> bool:
        with self._lock:
            if self._held() != owner:
                return False
            self._expires = self.clock() + ttl_s
            return True

    def release(self, owner: str) -> None:
        with self._lock:
            if self._held() == owner:
                self._owner = None

    def holds(self, fence: Fence) -> bool:
        """The fencing check: ``fence`` is the latest token and its lease is held."""
        with self._lock:
            return fence.token == self._token and self._held() == fence.owner

    def fence(self, owner: str, token: int) -> Fence:
        return Fence(owner, token, verify=self.holds)


class LeaderElection:
    """Whether this instance leads, decided by ``step()`` (call it often: every ``renew_every_s`` or more).

    Standby: try to acquire every ``retry_s``. Leader: renew every ``renew_every_s``; a renew refused (the lease
    is another owner's, or gone) ends leadership at once; a renew that cannot reach the store keeps leadership only
    until the local bound (``valid_until``) passes. ``fence()`` is the leader's ``Fence`` while the local bound
    holds, else None: a caller about to write asks for it just before writing."""

    def __init__(self, backend: LeaseBackend, ttl_s: float, renew_every_s: float | None = None,
                 retry_s: float | None = None, margin_s: float | None = None, name: str = "leader",
                 clock: Callable[[], float] = time.monotonic):
        if ttl_s <= 0:
            raise ValueError("the lease TTL must be positive")
        self.backend = backend
        self.ttl_s = ttl_s
        self.renew_every_s = ttl_s / 3 if renew_every_s is None else renew_every_s
        self.retry_s = self.renew_every_s if retry_s is None else retry_s
        # clock drift between hosts and the time a reply spends in flight: stop 10 % (at least 0.1 s) early
        self.margin_s = max(0.1, 0.1 * ttl_s) if margin_s is None else margin_s
        if self.renew_every_s >= ttl_s - self.margin_s:
            raise ValueError("renew_every_s must leave time to renew before the lease expires")
        self.name = name
        self.clock = clock
        self.owner = uuid.uuid4().hex
        # (fencing token or None, local bound): one attribute, replaced whole, so that readers need no lock
        self._held: tuple[int | None, float] = (None, float("-inf"))
        self._next_attempt = float("-inf")
        self.acquired = 0  # times this instance became leader
        self.lost = 0  # times it stopped being leader other than by release()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.RLock()

    @property
    def token(self) -> int | None:
        return self._held[0]

    @property
    def valid_until(self) -> float:
        return self._held[1]

    @property
    def is_leader(self) -> bool:
        """Never waits for the store (metrics read it from the event loop)."""
        token, valid_until = self._held
        return token is not None and self.clock() < valid_until

    def fence(self) -> Fence | None:
        owner, (token, valid_until) = self.owner, self._held
        if token is None or self.clock() >= valid_until:
            return None
        return self.backend.fence(owner, token)

    def _lose(self, why: str) -> None:
        log.warning("%s: leadership lost (token %s): %s", self.name, self.token, why)
        self._held = (None, float("-inf"))
        self.lost += 1
        self.owner = uuid.uuid4().hex  # a later acquisition is a new lease value

    def step(self) -> bool:
        """Acquire, renew or wait, as due now; returns whether this instance leads."""
        with self._lock:
            now = self.clock()
            if self.token is not None and now >= self.valid_until:
                self._lose("lease not renewed in time")
            if now < self._next_attempt:
                return self.is_leader
            started = now
            try:
                if self.token is None:
                    token = self.backend.try_acquire(self.owner, self.ttl_s)
                    if token is not None:
                        self._held = (token, started + self.ttl_s - self.margin_s)
                        self.acquired += 1
                        log.info("%s: leader with fencing token %d", self.name, token)
                    self._next_attempt = started + (self.renew_every_s if token is not None else self.retry_s)
                else:
                    if self.backend.renew(self.owner, self.ttl_s):
                        self._held = (self.token, started + self.ttl_s - self.margin_s)
                    else:
                        self._lose("the lease is no longer ours")
                    self._next_attempt = started + (self.renew_every_s if self.token is not None else self.retry_s)
            except StoreUnavailable as exc:
                log.warning("%s: lease store unavailable (%s)", self.name, exc)
                self._next_attempt = started + min(1.0, self.renew_every_s)
            return self.is_leader

    def release(self) -> None:
        """Give the lease up (shutdown): a standby takes over at its next attempt, without waiting for the TTL."""
        with self._lock:
            if self.token is None:
                return
            try:
                self.backend.release(self.owner)
            except StoreUnavailable as exc:
                log.warning("%s: lease not released (%s); it expires in at most %.0f s", self.name, exc, self.ttl_s)
            log.info("%s: released leadership (token %d)", self.name, self.token)
            self._held = (None, float("-inf"))
            self.owner = uuid.uuid4().hex

    def start(self, every_s: float | None = None) -> None:
        """Run ``step()`` in a daemon thread (so that a long fit does not delay the renewals) until ``stop()``."""
        if self._thread is not None:
            return
        every = min(self.renew_every_s, self.retry_s) / 2 if every_s is None else every_s

        def run() -> None:
            while not self._stop.is_set():
                try:
                    self.step()
                except Exception:  # noqa: BLE001 - the thread must go on; the local bound ends leadership
                    log.exception("%s: election step failed", self.name)
                self._stop.wait(every)

        self._thread = threading.Thread(target=run, name=f"{self.name}-election", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and release the lease."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.release()
