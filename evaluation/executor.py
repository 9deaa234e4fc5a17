"""Where evaluation tasks run: in this process (the default) or as Ray tasks.

A *task* is one unit of work (one LongAct episode, one house): a picklable payload handed to a
module-level function. The executor only runs tasks and reports how each ended; the driver (the
CLI command) decides what a result means and writes every file, so the report files and the
summary are the same whatever the executor.

- :class:`InProcessExecutor` runs the tasks one after another here (today's behaviour; needs
  nothing new). An exception in a task becomes a failed outcome, so the rest of the run finishes.
- :class:`RayExecutor` runs one Ray task per payload, on a local Ray runtime it starts
  (``workers``) or on an existing cluster (``address``). A worker process that dies (SIGKILL, out
  of memory) is retried once by Ray (``max_retries=1``); a second death, an exception in the task
  or a task past its timeout becomes a failed outcome naming the reason. Connecting never hangs:
  the address is probed with a socket first, and a first probe task checks that a worker can
  import the project.

Outcomes come back in completion order; the driver orders what it writes by ``index``.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]
# Ray's own settings for a quiet, loopback-only local runtime (no usage report, no dashboard).
_RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}


class ExecutorError(Exception):
    """The executor cannot run at all (Ray missing, cluster unreachable, workers cannot import
    the project). The message names the option or address at fault."""


@dataclass(frozen=True)
class Task:
    """One unit of work: ``index`` orders results, ``key`` names it in messages (episode id)."""

    index: int
    key: str
    payload: Any


@dataclass
class Outcome:
    """How one task ended: ``value`` on success, else ``error`` (one line naming the cause)."""

    task: Task
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


TaskFn = Callable[..., Any]  # fn(payload), or fn(payload, progress=callback) when progress is given
ProgressFactory = Callable[[Task], Any]


class Executor(Protocol):
    name: str
    slots: int

    def run(self, fn: TaskFn, tasks: Sequence[Task], progress: ProgressFactory | None = None) -> Iterator[Outcome]: ...

    def close(self) -> None: ...


def _describe(exc: BaseException) -> str:
    """One line: a Ray task error is described by the exception the task raised."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    return f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:500]


class InProcessExecutor:
    """Tasks one after another in this process. ``progress(task)`` may return a per-step
    callback handed to ``fn`` as ``progress=`` (the per-episode step line of ``eval longact``)."""

    name = "in-process"
    slots = 1

    def run(self, fn: TaskFn, tasks: Sequence[Task], progress: ProgressFactory | None = None) -> Iterator[Outcome]:
        for task in tasks:
            reporter = progress(task) if progress is not None else None
            try:
                value = fn(task.payload, progress=reporter) if reporter is not None else fn(task.payload)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # a crash in one episode must not lose the others
                yield Outcome(task, error=f"task raised {_describe(exc)}")
                continue
            finally:
                close = getattr(reporter, "close", None)
                if callable(close):
                    close()
            yield Outcome(task, value=value)

    def close(self) -> None:
        pass


def parse_address(address: str) -> tuple[str, int]:
    """``host:port`` (a ``ray://`` prefix is not supported: the driver must be on the cluster)."""
    text = address.strip()
    if "://" in text:
        raise ExecutorError(f"--ray-address {address!r}: give the head's GCS address as HOST:PORT "
                            "(e.g. 127.0.0.1:6379); ray:// client addresses are not supported")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ExecutorError(f"--ray-address {address!r}: expected HOST:PORT (e.g. 127.0.0.1:6379)")
    return host, int(port)


def probe_address(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast and clearly when nothing listens at the cluster address (ray.init would retry
    for a long while first)."""
    host, port = parse_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise ExecutorError(f"--ray-address {address}: no Ray head answers there ({exc.strerror or exc}); "
                            "start one with `ray start --head --node-ip-address=HOST --port=PORT`") from None


def _probe_import() -> str:
    """Run on a worker: the project must import there (same code as the driver)."""
    import evaluation.runner

    return str(Path(evaluation.runner.__file__).resolve().parents[1])


class RayExecutor:
    """One Ray task per payload on a local runtime (``workers`` CPUs) or a cluster (``address``).

    ``task_timeout_s`` bounds each task (cancelled and recorded failed past it); at most
    ``slots`` tasks are in flight, so the order of submission follows the task order."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None, *,
                 task_timeout_s: float | None = None, connect_timeout_s: float = 120.0,
                 import_check: bool = True) -> None:
        if workers is not None and workers < 1:
            raise ExecutorError(f"--workers must be at least 1, got {workers}")
        try:
            import ray
        except ImportError:
            raise ExecutorError("--workers/--ray-address need Ray: pip install 'worldmind[ray]' "
                                "(ray==2.60.0)") from None
        self._ray = ray
        self.task_timeout_s = task_timeout_s
        for key, value in _RAY_ENV.items():
            os.environ.setdefault(key, value)
        # Workers started by this runtime import the project from the driver's checkout.
        pythonpath = os.pathsep.join(dict.fromkeys([str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]))
        runtime_env = {"env_vars": {"PYTHONPATH": pythonpath, **_RAY_ENV}}
        if address is not None:
            probe_address(address)
            init_kwargs: dict[str, Any] = {"address": address}
        else:
            init_kwargs = {"num_cpus": workers or 1, "include_dashboard": False, "_node_ip_address": "127.0.0.1"}
        started = time.monotonic()
        try:
            ray.init(runtime_env=runtime_env, log_to_driver=False, configure_logging=False,
                     ignore_reinit_error=True, **init_kwargs)
        except Exception as exc:  # ConnectionError, RuntimeError, ...
            where = f"--ray-address {address}" if address else f"--workers {workers}"
            raise ExecutorError(f"{where}: Ray did not start: {_describe(exc)}") from None
        cpus = int(ray.cluster_resources().get("CPU", 0))
        self.slots = max(1, min(workers, cpus) if workers else cpus)
        if import_check:
            probe = ray.remote(num_cpus=1, max_retries=0)(_probe_import)
            from ray.exceptions import GetTimeoutError

            try:
                ray.get(probe.remote(), timeout=max(1.0, connect_timeout_s - (time.monotonic() - started)))
            except GetTimeoutError:
                # no answer is not an import failure (that fails fast): a worker that has not
                # started yet on a busy machine, or a cluster with no free CPU
                self.close()
                raise ExecutorError(f"Ray workers did not answer within {connect_timeout_s:.0f} s of starting (a "
                                    "busy machine, or a cluster with no free CPU); nothing was run") from None
            except Exception as exc:
                self.close()
                raise ExecutorError(f"Ray workers cannot import the project ({REPO_ROOT}): {_describe(exc)}; "
                                    "install worldmind on every node or start the cluster with PYTHONPATH "
                                    "pointing at the checkout") from None

    def run(self, fn: TaskFn, tasks: Sequence[Task], progress: ProgressFactory | None = None) -> Iterator[Outcome]:
        ray = self._ray
        from ray.exceptions import GetTimeoutError, RayTaskError, TaskCancelledError, WorkerCrashedError

        remote = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(fn)
        queue = list(tasks)
        pending: dict[Any, tuple[Task, float]] = {}
        while queue or pending:
            while queue and len(pending) < self.slots:
                task = queue.pop(0)
                pending[remote.remote(task.payload)] = (task, time.monotonic())
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                task, _started = pending.pop(ref)
                try:
                    yield Outcome(task, value=ray.get(ref, timeout=60))
                except WorkerCrashedError as exc:
                    yield Outcome(task, error=f"worker died twice (retried once): {_describe(exc)}")
                except RayTaskError as exc:
                    yield Outcome(task, error=f"task raised {_describe(exc)}")
                except (TaskCancelledError, GetTimeoutError) as exc:
                    yield Outcome(task, error=f"task lost: {_describe(exc)}")
                except Exception as exc:  # OutOfMemoryError, ObjectLostError, NodeDiedError, ...
                    yield Outcome(task, error=f"task failed: {_describe(exc)}")
            if self.task_timeout_s is not None:
                now = time.monotonic()
                for ref, (task, started) in list(pending.items()):
                    if now - started > self.task_timeout_s:
                        del pending[ref]
                        try:
                            ray.cancel(ref, force=True)
                        except Exception:  # already finished or gone: nothing left to stop
                            pass
                        yield Outcome(task, error=f"timed out after {self.task_timeout_s:g} s (task cancelled)")

    def close(self) -> None:
        try:
            self._ray.shutdown()
        except Exception:  # shutting down a half-started runtime must not hide the first error
            print(f"warning: ray.shutdown failed: {traceback.format_exc(limit=1)}", file=sys.stderr)


def make_executor(workers: int | None = None, address: str | None = None,
                  task_timeout_s: float | None = None) -> Executor:
    """In-process unless ``workers`` or ``address`` asks for Ray."""
    if workers is None and address is None:
        return InProcessExecutor()
    return RayExecutor(workers, address, task_timeout_s=task_timeout_s)
