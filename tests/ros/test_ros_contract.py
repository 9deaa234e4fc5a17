"""Contract tests of the ROS layer that need no DDS: the graph description, its parameters and
config, the launcher's command lines and usage errors, the package files, and the launch files
(CONTRACT TESTS: launch/launch_ros are not installable here, so the launch files are executed
against recording stand-ins of those modules and checked against the same graph the CLI starts),
and the rule that the libraries never import rclpy."""

from __future__ import annotations

import ast
import json
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

from conftest import REPO, ROS_PKG
from worldmind import cli_ros
from worldmind_ros import graph as g

NODE_MODULES = sorted(g.NODE_PARAMS)


def test_every_node_module_exists_and_declares_its_params_from_the_graph():
    for module in NODE_MODULES:
        src = (ROS_PKG / "worldmind_ros" / f"{module}.py").read_text()
        assert f'module = "{module}"' in src, module
        assert "main = main_for(" in src and 'if __name__ == "__main__":' in src, module


def test_config_yaml_names_only_declared_parameters_of_graph_nodes():
    config = yaml.safe_load(g.CONFIG_FILE.read_text())
    nodes = {n.name: n for graph in g.GRAPHS.values() for n in graph.nodes} | {g.EXAMPLE_ROBOT.name: g.EXAMPLE_ROBOT}
    assert set(config) <= set(nodes), set(config) - set(nodes)
    for name, body in config.items():
        declared = g.param_defaults(nodes[name].module)
        params = body["ros__parameters"]
        assert set(params) <= set(declared), (name, set(params) - set(declared))
        for key, value in params.items():  # ROS parameters are typed: same type as the declared default
            assert type(value) is type(declared[key]), (name, key, value, declared[key])


def test_every_parameter_has_a_description():
    for module, specs in g.NODE_PARAMS.items():
        assert len({s.name for s in specs}) == len(specs), module
        for s in specs:
            assert s.description and len(s.description) > 10, (module, s.name)


def test_graphs_share_the_mind_and_differ_in_the_bridge():
    names = {m: [n.name for n in gr.nodes] for m, gr in g.GRAPHS.items()}
    for m in g.MODES:
        assert {"perception", "memory", "belief"} <= set(names[m])
    assert names["sim"][0] == "sim_bridge" and names["robot"][0] == "robot_bridge" and names["replay"][0] == "bag_player"
    assert [n.name for n in g.GRAPHS["sim"].nodes if n.ends_graph] == ["sim_bridge"]
    assert [n.name for n in g.GRAPHS["replay"].nodes if n.ends_graph] == ["bag_player"]


def test_graph_options_become_parameters_and_typos_are_refused():
    gr = g.graph("sim", episode="/e.json", agent="scripted:/a.json", out="/o")
    assert gr.node("sim_bridge").params == {"episode": "/e.json", "out": "/o"}
    assert gr.node("planner").params == {"episode": "/e.json", "agent": "scripted:/a.json"}
    with pytest.raises(ValueError, match="unknown parameter"):
        g.graph("sim", extra={"memory": {"voxle_size": 0.1}})
    with pytest.raises(KeyError, match="no node"):
        g.graph("sim", extra={"nosuch": {}})


def test_a_planner_grounding_through_the_spatial_memory_serves_it_and_no_memory_node_starts():
    """One object memory in the graph (issue 31, item 3): ``object_memory`` 'spatial' (an option or
    the planner's parameter) leaves the memory node out; 'tracker' keeps it; bad values are named."""
    for mode in ("sim", "robot"):
        assert [n.name for n in g.graph(mode).nodes] == [n.name for n in g.GRAPHS[mode].nodes]
        spatial = g.graph(mode, object_memory="spatial")
        assert "memory" not in [n.name for n in spatial.nodes]
        assert spatial.node("planner").params["object_memory"] == "spatial"
        assert "memory" in [n.name for n in g.graph(mode, object_memory="tracker").nodes]
        via_param = g.graph(mode, extra={"planner": {"object_memory": "spatial"}})
        assert "memory" not in [n.name for n in via_param.nodes]
    assert not g.memory_node_runs("spatial") and g.memory_node_runs("tracker")
    # The node that serves the memory declares what serving needs.
    for module in ("memory_node", "planner_node"):
        assert {"marker_period_s", "default_k", "map_frame"} <= set(g.param_defaults(module))
    with pytest.raises(ValueError, match="unknown object memory 'voxels'.*tracker, spatial"):
        g.graph("sim", object_memory="voxels")
    with pytest.raises(ValueError, match="graph 'replay' has no planner"):
        g.graph("replay", object_memory="spatial")
    with pytest.raises(ValueError, match="node memory: not started with object_memory 'spatial'"):
        g.graph("sim", object_memory="spatial", extra={"memory": {"voxel_size": 0.1}})


def test_worldmind_ros_graph_with_the_spatial_memory(capsys):
    assert cli_ros.main_ros(["graph", "sim", "--object-memory", "spatial"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert [n["name"] for n in plan["nodes"]] == ["sim_bridge", "perception", "belief", "planner", "critic"]
    planner = next(n for n in plan["nodes"] if n["name"] == "planner")["argv"]
    assert "object_memory:='spatial'" in planner
    assert cli_ros.main_ros(["up", "replay", "--bag", str(REPO / "README.md"), "--object-memory", "spatial"]) == 2
    assert "has no planner" in capsys.readouterr().err


def test_ros_args_quote_strings_and_type_literals():
    spec = g.NodeSpec("memory", "memory_node", {"voxel_size": 0.1, "save_path": "1.0", "map_frame": "it's"})
    args = g.ros_args(spec, "/p.yaml", [("/a", "/b")])
    assert args[:3] == ["--ros-args", "-r", "__node:=memory"] and args[3:5] == ["--params-file", "/p.yaml"]
    assert "map_frame:='it''s'" in args and "save_path:='1.0'" in args and "voxel_size:=0.1" in args
    assert args[-2:] == ["-r", "/a:=/b"]


def test_worldmind_ros_graph_prints_the_processes(capsys):
    assert cli_ros.main_ros(["graph", "robot", "--example-robot", "--remap", "color_topic:=/cam/rgb",
                             "--param", "memory.voxel_size:=0.1", "--without", "critic"]) == 0
    plan = json.loads(capsys.readouterr().out)
    names = [n["name"] for n in plan["nodes"]]
    assert names == ["robot_bridge", "perception", "memory", "belief", "planner", "example_robot"]
    mem = next(n for n in plan["nodes"] if n["name"] == "memory")["argv"]
    assert mem[1:4] == ["-u", "-m", "worldmind_ros.memory_node"] and "voxel_size:=0.1" in mem
    assert "/robot/camera/color/image_raw:=/cam/rgb" in mem  # launch-argument shortcut -> robot topic
    import os

    assert plan["env"]["ROS_AUTOMATIC_DISCOVERY_RANGE"] == os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    assert plan["env"]["FASTRTPS_DEFAULT_PROFILES_FILE"]


@pytest.mark.parametrize("argv,msg", [
    (["up", "replay"], "replay needs --bag"),
    (["up", "moon"], "unknown graph 'moon'"),
    (["up", "sim", "--episode", "/no/such.json"], "no such file"),
    (["up", "sim", "--remap", "nonsense"], "expected FROM:=TO"),
    (["up", "sim", "--param", "memory.voxle:=1"], "unknown parameter"),
    (["up", "sim", "--without", "navigator"], "no node(s) navigator"),
])
def test_usage_errors_exit_2_with_one_line(argv, msg, capsys):
    assert cli_ros.main_ros(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and err.startswith("worldmind: error:") and "Traceback" not in err


def test_cli_delegates_ros_to_cli_ros():
    from worldmind import cli

    assert cli.DELEGATED[("ros",)] == ("worldmind.cli_ros", "main_ros")


def test_package_xml_and_setup_py():
    root = ET.parse(ROS_PKG / "package.xml").getroot()
    assert root.get("format") == "3" and root.findtext("name") == "worldmind_ros"
    deps = {e.text for e in root.findall("exec_depend")}
    assert {"rclpy", "std_msgs", "sensor_msgs", "geometry_msgs", "nav_msgs", "visualization_msgs"} <= deps
    assert root.find("export/build_type").text == "ament_python"
    assert (ROS_PKG / "resource" / "worldmind_ros").is_file()
    setup = ast.parse((ROS_PKG / "setup.py").read_text())
    nodes = next(n.value for n in ast.walk(setup) if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", "") == "NODES")
    assert sorted(ast.literal_eval(nodes)) == NODE_MODULES  # one console script per node
    assert "script_dir=$base/lib/worldmind_ros" in (ROS_PKG / "setup.cfg").read_text()


# The launch files' contract tests (launch_ros's parameter rules applied): test_ros_launch.py.


# ---- the libraries never import rclpy ----------------------------------------------------------

LIBRARIES = ("planner", "memory", "perception", "sim_bridge", "evaluation", "worldmind")


def test_libraries_never_import_rclpy_or_ros_messages():
    ros_modules = {"rclpy", "std_msgs", "sensor_msgs", "geometry_msgs", "nav_msgs", "visualization_msgs",
                   "rcl_interfaces", "launch", "launch_ros"}
    offenders = []
    for lib in LIBRARIES:
        for path in (REPO / lib).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                offenders += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in ros_modules]
    # sim_bridge.ros.convert may import message packages lazily by name (importlib), never statically.
    assert not offenders, offenders


def test_cli_ros_imports_no_rclpy():
    code = ("import sys; from worldmind import cli_ros; cli_ros.import_graph(); "
            "print('rclpy' in sys.modules)")
    import subprocess

    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr
