"""What every WorldMind node shares: parameter declaration from ``graph.NODE_PARAMS``, QoS from
the topic contract, JSON topics that survive bad input, a managed (lifecycle) life, and a run loop
with a clean shutdown.

Every node is a ROS 2 managed node (``rclpy.lifecycle.LifecycleNode``, the ROS 2 node
lifecycle), as Nav2's are, so a lifecycle manager (``nav2_lifecycle_manager``, ``ros2 lifecycle
set``) can bring the graph up in order and take a node down without killing it:
- construction declares the parameters only (state ``unconfigured``);
- ``configure`` reads the parameters as they are now and creates the node's publishers,
  subscriptions, timers, action servers and clients (the subclass's ``configure()``); a bad
  parameter fails the transition with one logged line and the node stays ``unconfigured``;
- ``activate`` lets callbacks through; while ``inactive`` every subscription and timer callback
  is dropped (counted in ``inactive_drops``) and action goals are rejected;
- ``cleanup`` closes the node's work (``close()``: save a map, stop a worker) and destroys what
  ``configure`` created, so a new ``configure`` starts fresh; ``shutdown`` closes it too.
With the ``autostart`` parameter (default true, as ``worldmind ros up`` and the launch files run
them) a node configures and activates itself at start and a setup error ends the process with one
line; ``autostart:=false`` leaves it ``unconfigured`` for a lifecycle manager.

Why a run loop of our own instead of ``rclpy.spin``: with rclpy's default signal handling,
Ctrl-C raises KeyboardInterrupt wherever the main thread happens to be (often deep inside a
callback or an executor), which prints a traceback and can leave the context alive. Here rclpy
is initialised without its signal handlers; SIGINT and SIGTERM only set a flag, the loop spins
in short slices, and on the flag (or when the node says it is done) the node's ``close()`` runs
(the loop spins a little longer, at most ``CLOSE_DRAIN_S``, while the node finishes what
``close()`` started: the planner's cancel of a goal not yet acknowledged), the executor shuts
down, the node is destroyed and the context is shut down, in that order. The process then
exits with the node's ``exit_code`` and no traceback.

Bad input on a JSON topic (``subscribe_json``) is logged as one error line naming the topic and
the field, counted in ``node.bad_messages``, and dropped: the node keeps running. An exception in
a callback is treated the same way, so one malformed message cannot kill a node.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Sequence

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rcl_interfaces.msg import ParameterDescriptor
from std_msgs.msg import String

from sim_bridge.ros import payloads
from sim_bridge.ros.topics import QOS, TOPICS, QosSpec, node_topic_names, resolve
from worldmind_ros.graph import NODE_PARAMS


def qos(spec: QosSpec | str) -> QoSProfile:
    """The rclpy profile of a contract QoS class (``"sensor"``, ``"reliable"``, ``"latched"``)."""
    s = QOS[spec] if isinstance(spec, str) else spec
    return QoSProfile(depth=s.depth, reliability=ReliabilityPolicy[s.reliability.upper()],
                      durability=DurabilityPolicy[s.durability.upper()], history=HistoryPolicy[s.history.upper()])


def topic_qos(key: str) -> QoSProfile:
    return qos(TOPICS[key].qos_spec)


def message_class(key: str) -> type:
    """The rclpy message class of a contract topic (``sensor_msgs.msg.Image`` ...)."""
    import importlib

    module, _, cls = TOPICS[key].ros_type.rpartition(".")
    return getattr(importlib.import_module(module), cls)


class PendingRequests:
    """Skill requests awaiting their result, by id; bounded (the oldest is dropped past
    ``limit``) so results that never come cannot grow a node's memory."""

    def __init__(self, limit: int = 100) -> None:
        self.limit = limit
        self._by_id: dict[str, dict[str, Any]] = {}

    def add(self, request: dict[str, Any]) -> None:
        self._by_id[request["id"]] = request
        if len(self._by_id) > self.limit:
            self._by_id.pop(next(iter(self._by_id)))

    def take(self, request_id: str) -> dict[str, Any] | None:
        return self._by_id.pop(request_id, None)


class NodeSetupError(RuntimeError):
    """A node could not be configured at start (autostart): the message says why."""


_ENTITY_KINDS = ("publishers", "subscriptions", "timers", "clients", "services", "guards", "waitables")


class WorldMindNode(LifecycleNode):
    """Base class: typed parameters with descriptions, contract topic names, JSON helpers, and the
    lifecycle described in the module docstring.

    Subclasses set ``node_name``, create everything in ``configure()`` (never in ``__init__``),
    set ``done = True`` (and ``exit_code``) to end the process, and may override ``close()`` for
    work that must happen when the node is cleaned up or shut down (saving a map, ...)."""

    module = ""  # the NODE_PARAMS key
    node_name = ""
    executor_threads = 1  # > 1: a MultiThreadedExecutor (nodes whose action servers block while a skill runs)

    def __init__(self, node_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(node_name or self.node_name, **kwargs)
        self._declare(self.module)
        self.params = self._read_params()
        self._refresh_names()
        self.done = False
        self.exit_code = 0
        self.bad_messages = 0
        self.inactive_drops = 0
        self.active = False
        self.configured = False
        self.setup_error: str | None = None
        self._created: dict[str, list[Any]] = {}
        self._lock = threading.RLock()
        if self.params.get("autostart", True):
            if self.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                raise NodeSetupError(self.setup_error or "configure failed")
            self.trigger_activate()

    # -- lifecycle ----------------------------------------------------------------------------
    def configure(self) -> None:
        """Create the node's publishers, subscriptions, timers, servers (subclasses)."""

    def close(self) -> None:
        """Called once per configuration, on cleanup or shutdown (subclasses)."""

    def finishing_close(self) -> bool:
        """``close()`` started work that needs the executor a little longer (the planner: a goal
        whose acceptance is still on its way must be cancelled when it arrives); the run loop
        spins for it up to ``CLOSE_DRAIN_S`` after ``close()`` before it shuts rclpy down."""
        return False

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        before = self._entities()
        try:
            self.params = self._read_params()
            self._refresh_names()
            self.configure()
        except Exception as exc:  # noqa: BLE001 - one line, and the node stays unconfigured
            self.setup_error = f"{type(exc).__name__}: {exc}"
            self.get_logger().error(f"configure failed: {self.setup_error}")
            self._destroy_created(before)
            return TransitionCallbackReturn.FAILURE
        self._created = {k: [e for e in v if e not in before[k]] for k, v in self._entities().items()}
        self.configured, self.setup_error = True, None
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.release()
        self._destroy_created(None)
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.release()
        return TransitionCallbackReturn.SUCCESS

    def release(self) -> None:
        """``close()`` once for the current configuration (cleanup, shutdown, or the run loop's end)."""
        self.active = False
        if self.configured:
            self.configured = False
            self.close()

    @property
    def lifecycle_state(self) -> str:
        """``unconfigured`` | ``inactive`` | ``active`` | ``finalized`` (or a transition label)."""
        return str(self._state_machine.current_state[1])

    def _entities(self) -> dict[str, list[Any]]:
        return {kind: list(getattr(self, kind)) for kind in _ENTITY_KINDS}

    def _destroy_created(self, before: dict[str, list[Any]] | None) -> None:
        """Destroy what ``configure`` created (since ``before``, or as recorded after it)."""
        created = (self._created if before is None else
                   {k: [e for e in v if e not in before[k]] for k, v in self._entities().items()})
        destroy = {"publishers": self.destroy_publisher, "subscriptions": self.destroy_subscription,
                   "timers": self.destroy_timer, "clients": self.destroy_client, "services": self.destroy_service,
                   "guards": self.destroy_guard_condition}
        for kind, items in created.items():
            if kind != "waitables":
                for entity in items:
                    destroy[kind](entity)
        # What is left: action servers and clients (a publisher's or subscription's QoS event
        # handlers are waitables too, and went with it).
        for entity in created.get("waitables", []):
            if entity in list(self.waitables):
                self.remove_waitable(entity)
                getattr(entity, "destroy", lambda: None)()
        self._created = {}

    def _when_active(self, callback: Callable[..., Any], takes_message: bool) -> Callable[..., Any]:
        def drop() -> None:
            self.inactive_drops += 1

        if takes_message:
            def gated_message(msg: Any) -> Any:
                return callback(msg) if self.active else drop()

            return gated_message

        def gated() -> Any:
            return callback() if self.active else drop()

        return gated

    def create_subscription(self, msg_type: Any, topic: str, callback: Callable[[Any], None], qos_profile: Any,
                            **kwargs: Any) -> Any:
        return super().create_subscription(msg_type, topic, self._when_active(callback, True), qos_profile, **kwargs)

    def create_timer(self, timer_period_sec: float, callback: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        return super().create_timer(timer_period_sec, self._when_active(callback, False), *args, **kwargs)

    # -- parameters ---------------------------------------------------------------------------
    def _declare(self, module: str) -> None:
        for spec in NODE_PARAMS.get(module, ()):
            desc = ParameterDescriptor(description=spec.description)
            self.declare_parameter(spec.name, spec.default, desc)

    def _read_params(self) -> dict[str, Any]:
        """The declared parameters' values now (a lifecycle manager may set them before configure)."""
        return {spec.name: self.get_parameter(spec.name).value for spec in NODE_PARAMS.get(self.module, ())}

    def _refresh_names(self) -> None:
        # Relative names resolved in this node's namespace once (rcl applies remap rules to the
        # expanded name either way), so log lines and payload errors name the real topic.
        self.names = {k: self.full_name(v) for k, v in node_topic_names(str(self.params.get("topic_namespace", "")))
                      .items()}

    # -- topics -------------------------------------------------------------------------------
    def topic(self, key: str) -> str:
        return self.names[key]

    def full_name(self, topic: str) -> str:
        """The absolute name a (relative) topic resolves to in this node (for log lines)."""
        try:
            return self.resolve_topic_name(topic)
        except Exception:  # noqa: BLE001 - an invalid name is reported by create_* itself
            return topic

    def local_topic(self, name: str) -> str:
        """A node's own (non-contract) relative topic name, under ``topic_namespace`` when set."""
        ns = str(self.params.get("topic_namespace", ""))
        return self.full_name(resolve(name, ns) if ns.strip("/") else name)

    def publisher(self, key: str, name: str | None = None) -> Any:
        return self.create_publisher(message_class(key), name or self.topic(key), topic_qos(key))

    def subscription(self, key: str, callback: Callable[[Any], None], name: str | None = None) -> Any:
        topic = name or self.topic(key)
        return self.create_subscription(message_class(key), topic, self.guarded(topic, callback), topic_qos(key))

    def guarded(self, topic: str, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """``callback`` that logs (naming the topic) instead of raising: the node stays alive."""

        def run(msg: Any) -> None:
            try:
                callback(msg)
            except payloads.PayloadError as exc:
                self.bad_messages += 1
                self.get_logger().error(f"{exc} (message dropped)")
            except Exception as exc:  # noqa: BLE001 - a bad message must not kill the node
                self.bad_messages += 1
                self.get_logger().error(f"topic {topic}: {type(exc).__name__}: {exc} (message dropped)\n"
                                        + "".join(traceback.format_exception(exc)[-3:]).rstrip())

        return run

    def subscribe_json(self, key: str, callback: Callable[[dict[str, Any]], None], name: str | None = None) -> Any:
        """Subscribe to a std_msgs/String contract topic; ``callback`` gets the validated payload
        fields (``Payload.data``). Malformed JSON, a wrong schema or version or a missing field is
        logged with the topic and field and dropped."""
        topic = name or self.topic(key)
        kind = TOPICS[key].payload_kind

        def on_msg(msg: String) -> None:
            callback(payloads.decode(msg.data, topic, kind).data)

        return self.create_subscription(String, topic, self.guarded(topic, on_msg), topic_qos(key))

    def publish_json(self, publisher: Any, key: str, data: dict[str, Any]) -> None:
        publisher.publish(String(data=payloads.encode(TOPICS[key].payload_kind, data, publisher.topic_name)))


class _Stop:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: int | None = None

    def __call__(self, signum: int, _frame: Any) -> None:
        self.signal = signum
        self.event.set()


def run(factory: Callable[[], WorldMindNode], argv: Sequence[str] | None = None) -> int:
    """Initialise rclpy with ``argv`` (the ``--ros-args`` tail), build the node, spin until a
    signal or ``node.done``, shut everything down in order. Returns the exit status."""
    argv = list(sys.argv if argv is None else argv)
    stop = _Stop()
    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    context = rclpy.context.Context()
    rclpy.init(args=argv, context=context, signal_handler_options=SignalHandlerOptions.NO)
    node: WorldMindNode | None = None
    executor: SingleThreadedExecutor | None = None
    code = 0
    try:
        try:
            node = factory_with_context(factory, context)
        except NodeSetupError as exc:  # configure failed: one line, not a traceback
            print(f"worldmind_ros: cannot start node: {exc}", file=sys.stderr, flush=True)
            return 1
        except Exception as exc:  # noqa: BLE001 - a setup error is one line, not a traceback
            print(f"worldmind_ros: cannot start node: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            return 1
        executor = (MultiThreadedExecutor(num_threads=node.executor_threads, context=context)
                    if node.executor_threads > 1 else SingleThreadedExecutor(context=context))
        executor.add_node(node)
        try:
            while context.ok() and not stop.event.is_set() and not node.done:
                executor.spin_once(timeout_sec=0.05)
        except ExternalShutdownException:
            pass
        code = node.exit_code
        if stop.signal is not None:
            node.get_logger().info(f"{signal.Signals(stop.signal).name}: shutting down")
    finally:
        if node is not None:
            try:
                node.release()
                if executor is not None:
                    _drain(executor, node, context)
            except Exception as exc:  # noqa: BLE001
                print(f"worldmind_ros: {node.get_name()}: error while closing: {exc}", file=sys.stderr, flush=True)
                code = code or 1
            try:
                node.trigger_shutdown()  # -> finalized, for a lifecycle manager watching
            except Exception:  # noqa: BLE001 - already finalized, or mid-transition: nothing to add
                pass
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)
        if node is not None:
            node.destroy_node()
        if context.ok():
            rclpy.shutdown(context=context)
        for s, h in old.items():
            signal.signal(s, h)
    return code


CLOSE_DRAIN_S = 2.0


def _drain(executor: Any, node: WorldMindNode, context: Any) -> None:
    """Spin after ``close()`` while the node says it is finishing (bounded: a server that never
    answers must not hold the process)."""
    end = time.monotonic() + CLOSE_DRAIN_S
    while node.finishing_close() and context.ok() and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)


_CONTEXT: list[Any] = []


def factory_with_context(factory: Callable[[], WorldMindNode], context: Any) -> WorldMindNode:
    """Nodes take ``context=`` through ``**kwargs``; factories read it from here so node classes
    keep a no-argument constructor for tests that run them in-process."""
    _CONTEXT.append(context)
    try:
        return factory()
    finally:
        _CONTEXT.pop()


def current_context() -> Any:
    return _CONTEXT[-1] if _CONTEXT else None


def main_for(cls: type[WorldMindNode]) -> Callable[[Sequence[str] | None], None]:
    """A console-script ``main()`` for a node class."""

    def main(argv: Sequence[str] | None = None) -> None:
        code = run(lambda: cls(context=current_context()), argv)
        # The node is closed: a signal arriving while the interpreter winds down (a launcher
        # stopping the graph just as this node finished) must not turn a clean exit into -2.
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        sys.exit(code)

    return main
