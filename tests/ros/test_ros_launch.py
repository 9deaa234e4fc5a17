"""launch/*.launch.py as CONTRACT TESTS (launch and launch_ros are not installable here).

The launch files are executed against stand-ins of launch/launch_ros that are not lenient: the
parameter values of every Node go through a re-statement of launch_ros's own rules
(``launch_ros/utilities/normalize_parameters.py`` and ``evaluate_parameters.py``, Jazzy):

- a ``str`` value is ``yaml.dump``-ed and read back (so plain strings, '' included, stay strings);
- a ``Substitution`` value, or a list mixing substitutions and strings, is performed to text and
  read with ``yaml.safe_load``; the result must be bool/int/float/str/bytes or a uniform list,
  else TypeError ("Allowed value types are ...") -- this is what turns an empty argument into None
  and fails the launch;
- bool/int/float stay as they are.

Then the evaluated value must have the type the node declares (rclpy refuses a typed parameter
of another type), for the defaults and for hostile argument values ('', '0', 'true', 'null').
A negative control checks the stand-in really fails on what real launch_ros fails on.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import yaml

from conftest import REPO
from worldmind_ros import graph as g


# ---- stand-ins of launch / launch_ros -----------------------------------------------------------

class Substitution:
    def perform(self, ctx: dict[str, str]) -> str:
        raise NotImplementedError


class TextSubstitution(Substitution):
    def __init__(self, *, text: str) -> None:
        self.text = text

    def perform(self, ctx):
        return self.text


class LaunchConfiguration(Substitution):
    def __init__(self, name: str, default: Any = None) -> None:
        self.name = name

    def perform(self, ctx):
        if self.name not in ctx:
            raise KeyError(f"launch configuration '{self.name}' does not exist")  # launch's SubstitutionFailure
        return ctx[self.name]

    def __repr__(self):
        return f"LC({self.name})"


class EnvironmentVariable(Substitution):
    def __init__(self, name: str, *, default_value: str = "") -> None:
        self.name, self.default_value = name, default_value

    def perform(self, ctx):
        return os.environ.get(self.name, self.default_value)


class NotEqualsSubstitution(Substitution):
    """launch's: 'true' unless the two sides are equal (as booleans when both read as one, as
    floats when both do, else as text)."""

    def __init__(self, left: Any, right: Any) -> None:
        self.left, self.right = left, right

    def perform(self, ctx):
        a, b = (_perform(ctx, [v]) for v in (self.left, self.right))
        bools = ("true", "false", "1", "0")
        if a.lower() in bools and b.lower() in bools:
            equal = (a.lower() in ("true", "1")) == (b.lower() in ("true", "1"))
        else:
            try:
                equal = float(a) == float(b)
            except ValueError:
                equal = a == b
        return str(not equal).lower()


def condition_holds(condition, ctx) -> bool:
    """launch's IfCondition: the substitution performed must read as a boolean."""
    text = _perform(ctx, [condition.args[0]]).strip().lower()
    assert text in ("true", "false", "1", "0"), f"IfCondition of {text!r}: launch raises"
    return text in ("true", "1")


class _Rec:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _perform(ctx, value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Substitution):
        return value.perform(ctx)
    return "".join(_perform(ctx, v) for v in value)


def _allowed_sequence(seq) -> bool:
    return bool(seq) and type(seq[0]) in (bool, int, float, str) and all(isinstance(i, type(seq[0])) for i in seq)


def evaluate_parameter_value(ctx: dict[str, str], value: Any) -> Any:
    """One value of a parameter dict through launch_ros's normalize + evaluate (see module docstring)."""
    if isinstance(value, str):
        value = [TextSubstitution(text=yaml.dump(value))]
    elif isinstance(value, Substitution):
        value = [value]
    elif isinstance(value, (bool, int, float, bytes)):
        return value
    elif isinstance(value, Sequence) and any(isinstance(v, Substitution) for v in value):
        if not all(isinstance(v, (str, Substitution)) for v in value):
            raise TypeError("mixed list")
        value = list(value)
    else:
        raise TypeError(f"Unexpected type for parameter value {value!r}")
    loaded = yaml.safe_load(_perform(ctx, value))
    if type(loaded) in (bool, int, float, str, bytes):
        return loaded
    if isinstance(loaded, Sequence) and _allowed_sequence(loaded):
        return tuple(loaded)
    raise TypeError("Allowed value types are bytes, bool, int, float, str, Sequence[bool], Sequence[int], "
                    f"Sequence[float], Sequence[str]. Got {type(loaded)}.")


def _modules() -> dict[str, types.ModuleType]:
    mods = {}

    def mod(name, **attrs):
        m = types.ModuleType(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        mods[name] = m

    def cls(name):
        return type(name, (_Rec,), {})

    mod("launch", LaunchDescription=cls("LaunchDescription"))
    mod("launch.actions", DeclareLaunchArgument=cls("DeclareLaunchArgument"), EmitEvent=cls("EmitEvent"),
        RegisterEventHandler=cls("RegisterEventHandler"), SetEnvironmentVariable=cls("SetEnvironmentVariable"))
    mod("launch.conditions", IfCondition=cls("IfCondition"))
    mod("launch.event_handlers", OnProcessExit=cls("OnProcessExit"))
    mod("launch.events", Shutdown=cls("Shutdown"))
    mod("launch.substitutions", LaunchConfiguration=LaunchConfiguration, TextSubstitution=TextSubstitution,
        EnvironmentVariable=EnvironmentVariable, NotEqualsSubstitution=NotEqualsSubstitution)
    mod("launch_ros")
    mod("launch_ros.actions", Node=cls("Node"))
    return mods


def load(mode: str, monkeypatch) -> list[Any]:
    for name, m in _modules().items():
        monkeypatch.setitem(sys.modules, name, m)
    monkeypatch.delitem(sys.modules, "worldmind_ros.launch_helpers", raising=False)
    path = REPO / "launch" / f"{mode}.launch.py"
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns["generate_launch_description"]().args[0]


def of(actions, kind):
    return [a for a in actions if type(a).__name__ == kind]


def launch_context(actions, overrides: Mapping[str, str] = ()) -> dict[str, str]:
    """What `ros2 launch FILE a:=b` gives the substitutions: declared defaults, then the command line."""
    ctx = {a.args[0]: a.kwargs["default_value"] for a in of(actions, "DeclareLaunchArgument")}
    unknown = set(dict(overrides)) - set(ctx)
    assert not unknown, f"not declared: {unknown}"
    ctx.update(overrides)
    return ctx


def evaluated_params(node, ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in node.kwargs["parameters"]:
        if isinstance(entry, Mapping):
            out.update({k: evaluate_parameter_value(ctx, v) for k, v in entry.items()})
        else:  # a parameter file path
            assert _perform(ctx, [entry]).endswith(".yaml")
    return out


def _declared(node_spec_name: str) -> dict[str, Any]:
    specs = {n.name: n for graph in g.GRAPHS.values() for n in graph.nodes} | {g.EXAMPLE_ROBOT.name: g.EXAMPLE_ROBOT}
    return g.param_defaults(specs[node_spec_name].module) | {"use_sim_time": False}


def check_types(actions, ctx) -> None:
    for node in of(actions, "Node"):
        declared = _declared(node.kwargs["name"])
        for name, value in evaluated_params(node, ctx).items():
            assert name in declared, f"{node.kwargs['name']}: undeclared parameter {name}"
            assert type(value) is type(declared[name]), \
                f"{node.kwargs['name']}.{name} = {value!r}: a {type(declared[name]).__name__} parameter"


# ---- tests -----------------------------------------------------------------------------------------

def test_the_stand_in_applies_launch_ros_rules():
    """Negative control: what fails under real launch_ros fails here."""
    ctx = {"episode": "", "n": "0"}
    with pytest.raises(TypeError, match="Allowed value types"):
        evaluate_parameter_value(ctx, LaunchConfiguration("episode"))  # '' -> None
    assert evaluate_parameter_value(ctx, LaunchConfiguration("n")) == 0  # a string argument turned int
    assert evaluate_parameter_value(ctx, "") == ""  # a plain '' in the dict is fine
    assert evaluate_parameter_value(ctx, [TextSubstitution(text="'"), LaunchConfiguration("episode"),
                                          TextSubstitution(text="'")]) == ""


@pytest.mark.parametrize("mode", g.MODES)
def test_nodes_match_the_graph(mode, monkeypatch):
    actions = load(mode, monkeypatch)
    nodes = of(actions, "Node")
    expected = list(g.GRAPHS[mode].nodes) + ([g.EXAMPLE_ROBOT] if mode == "robot" else [])
    assert [(n.kwargs["executable"], n.kwargs["name"]) for n in nodes] == [(e.executable, e.name) for e in expected]
    assert all(n.kwargs["package"] == "worldmind_ros" for n in nodes)
    assert len(of(actions, "RegisterEventHandler")) == sum(e.ends_graph for e in expected)
    if mode == "robot":
        ctx = launch_context(actions)
        for t in g.ROBOT_TOPICS:
            assert ctx[t.launch_arg] == t.default
        assert [(s, repr(d)) for s, d in nodes[0].kwargs["remappings"]] == \
               [(t.default, f"LC({t.launch_arg})") for t in g.ROBOT_TOPICS]
        assert type(nodes[-1].kwargs["condition"]).__name__ == "IfCondition"


@pytest.mark.parametrize("mode", g.MODES)
def test_defaults_evaluate_to_the_declared_types(mode, monkeypatch):
    actions = load(mode, monkeypatch)
    check_types(actions, launch_context(actions))


@pytest.mark.parametrize("mode", g.MODES)
@pytest.mark.parametrize("hostile", ["", "0", "true", "1.5", "null", "a: b", "[1, 2]"])
def test_any_text_in_a_string_argument_stays_a_string(mode, hostile, monkeypatch):
    actions = load(mode, monkeypatch)
    strings = [a for a in ("episode", "agent", "instruction", "instruction_kind", "bag", "out")
               if a in launch_context(actions)]
    assert strings
    ctx = launch_context(actions, {a: hostile for a in strings})
    check_types(actions, ctx)
    planner = [n for n in of(actions, "Node") if n.kwargs["name"] == "planner"]
    if planner:
        assert evaluated_params(planner[0], ctx)["instruction_text"] == hostile


@pytest.mark.parametrize("mode", g.MODES)
def test_namespace_sim_time_log_level_and_dds_profile(mode, monkeypatch):
    actions = load(mode, monkeypatch)
    ctx = launch_context(actions, {"namespace": "/robot1", "use_sim_time": "true", "log_level": "debug"})
    assert launch_context(actions)["use_sim_time"] == ("false" if mode == "robot" else "true")
    for node in of(actions, "Node"):
        assert _perform(ctx, [node.kwargs["namespace"]]) == "/robot1"
        assert _perform(ctx, node.kwargs["ros_arguments"]) == "--log-leveldebug"
        assert evaluated_params(node, ctx)["use_sim_time"] is True
    env = {a.args[0]: a.args[1] for a in of(actions, "SetEnvironmentVariable")}
    profile = env["FASTRTPS_DEFAULT_PROFILES_FILE"]
    monkeypatch.delenv("FASTRTPS_DEFAULT_PROFILES_FILE", raising=False)
    assert profile.perform({}).endswith("fastdds_large_frames.xml") and os.path.exists(profile.perform({}))
    monkeypatch.setenv("FASTRTPS_DEFAULT_PROFILES_FILE", "/mine.xml")
    assert profile.perform({}) == "/mine.xml"  # a user's own profile wins


@pytest.mark.parametrize("mode", ["sim", "robot"])
def test_object_memory_spatial_leaves_the_memory_node_out_and_tells_the_planner(mode, monkeypatch):
    """One memory in the graph (issue 31): with object_memory:=spatial the planner's own memory is
    served by the planner, so the memory node's condition is false; by default it runs."""
    actions = load(mode, monkeypatch)
    nodes = {n.kwargs["name"]: n for n in of(actions, "Node")}
    memory, planner = nodes["memory"], nodes["planner"]
    default = launch_context(actions)
    assert default["object_memory"] == "tracker"
    assert condition_holds(memory.kwargs["condition"], default)
    assert evaluated_params(planner, default)["object_memory"] == "tracker"
    spatial = launch_context(actions, {"object_memory": "spatial"})
    assert not condition_holds(memory.kwargs["condition"], spatial)
    assert evaluated_params(planner, spatial)["object_memory"] == "spatial"
    check_types(actions, spatial)
    # Only the memory node (and the example robot, on its own argument) is conditional.
    assert [n for n, node in nodes.items() if "condition" in node.kwargs] == \
           ["memory"] + (["example_robot"] if mode == "robot" else [])


def test_the_replay_graph_has_no_object_memory_argument(monkeypatch):
    actions = load("replay", monkeypatch)
    assert "object_memory" not in launch_context(actions)
    assert "condition" not in next(n for n in of(actions, "Node") if n.kwargs["name"] == "memory").kwargs


def test_launch_files_are_valid_python_for_ros2_launch():
    import ast

    for mode in g.MODES:
        tree = ast.parse((REPO / "launch" / f"{mode}.launch.py").read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)


def test_cli_namespace_moves_every_node_and_bad_names_are_usage_errors():
    from worldmind import cli_ros

    parser = cli_ros.build_parser()
    plan = cli_ros.build_plan(parser.parse_args(["graph", "sim", "--namespace", "robot1"]))
    for node in plan.nodes:
        assert "__ns:=/robot1" in node.argv, node.argv
    with pytest.raises(cli_ros.UsageError, match="--namespace"):
        cli_ros.build_plan(parser.parse_args(["graph", "sim", "--namespace", "a b"]))
