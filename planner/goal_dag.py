"""The goal DAG: which goals must precede which, and which ready goal to do next.

Edges (networkx DiGraph, each with a ``kind``):
- causal: a state change of a type (slice, cook, fill, clean) before moving that type around,
  since "put the apple slice on the plate" needs the slicing done and a filled mug is carried
  full; opening a receptacle before putting into it, closing it after;
- object: a goal that puts something into/onto a receptacle of type T before the goal that moves
  T itself (objects in a bowl travel with the bowl);
- station: a goal whose recipe uses a station and takes the object out again (a sink: filling
  with water, washing; ``planner.stations``) before one that leaves something there for good: a
  remote left in the sink can leave no room for the pot that must be filled there. (Coffee and
  cooking recipes leave the object in the machine, so ordering them would only move the blockage.)
- tool: a goal that uses a tool of a type (a knife to slice, a wine bottle to pour from) before
  the goal that moves that type: the bottle left on the side table first was then "used" and
  never picked up to pour, or pouring took it away again;
- hold: every other goal before one that ends with something in hand (the hand is needed);
- temporal: explicit ordering words are rare in household instructions and the decomposer already
  emits goals in text order, which the DAG keeps as the tie-breaker.
Among ready goals the agent picks the cheapest next one from where it stands (``order_key``), so
spatially close goals are done together and goals whose objects are still unseen wait while the
agent works (and explores) elsewhere.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable

import networkx as nx

from household.checklist import predicates_where, sliced_base_type
from planner.deterministic import tool_types
from planner.roles import CountOf, Goal
from planner.stations import emptied_station

_STATE_CHANGES = predicates_where(before_moves=True)  # household.checklist's categories
_MOVES = predicates_where(moves=True)


def single_item_goals(goals: Iterable[Goal]) -> list[Goal]:
    """One goal per item, and per object of a counted item, because the agent grounds and executes
    one item at a time: "put the pen and the pencil in the mug" is two goals, "two pencils in the
    box" is two goals for distinct pencils. Copies of a counted item share the hint
    ``distinct_group`` (the agent then never binds one object twice within it) and say which of
    the n they are (``count_of``: "2/3"); "one of the" needs nothing more than one object. An
    item "all" is about ("all the eggs from the fridge") starts as one goal of its own group
    (``count_of`` "1/all"); the agent adds a copy for each further one it knows of
    (``copy_for_next_of_all``)."""
    out: list[Goal] = []
    for goal in goals:
        parts: list[tuple] = []
        all_of = set(goal.typed_hints.all_of)
        for k, item in enumerate(goal.items):
            n = item.object.count or 1
            if n <= 1 and item.object.type in all_of and not item.object.id and item.predicate != "isHeld":
                # (one hand: "come back holding the books" holds one)
                parts.append((item, (f"{goal.id}:{k}", str(CountOf(1, None)))))
                continue
            if n <= 1:
                parts.append((item, None))
                continue
            one = replace(item, object=replace(item.object, count=None))
            for j in range(n):
                parts.append((one, (f"{goal.id}:{k}", str(CountOf(j + 1, n)))))
        if len(parts) == 1 and parts[0][1] is None:
            out.append(goal)
            continue
        for j, (item, group) in enumerate(parts):
            hints = dict(goal.hints)
            if group is not None:
                hints["distinct_group"], hints["count_of"] = group
            out.append(Goal(f"{goal.id}.{j + 1}", (item,), goal.text, hints))
    return out


def copy_for_next_of_all(dag: nx.DiGraph, goal: Goal) -> Goal:
    """Add to ``dag`` the next copy of an "all" goal: same item and hints, the next ``count_of``
    ("2/all"), ordered right after it and before everything that waited for it (the "hold" edge
    of "come back holding X" then still puts holding last)."""
    k = (goal.count_of or CountOf(1, None)).index + 1
    root = goal.id.split("+")[0]
    copy = Goal(f"{root}+{k}", goal.items, goal.text, {**goal.hints, "count_of": str(CountOf(k, None))})
    dag.add_node(copy.id, goal=copy, order=dag.nodes[goal.id]["order"])
    for pred, _, data in list(dag.in_edges(goal.id, data=True)):
        dag.add_edge(pred, copy.id, **data)
    for _, succ, data in list(dag.out_edges(goal.id, data=True)):
        dag.add_edge(copy.id, succ, **data)
    return copy


def note_other_goal_types(goals: list[Goal]) -> list[Goal]:
    """``goals``, each goal that borrows a vessel (watering a plant) made anew with the types the
    other goals are about as the hint ``other_goal_types``: the grounder then prefers a vessel no
    other goal needs (watering with the mug a later goal fills with wine spoils that goal)."""
    out = []
    for goal in goals:
        others = {t for o in goals if o.id != goal.id for i in o.items
                  for t in (i.object.type, i.target.type if i.target else None) if t}
        if others and any(i.predicate == "isFilledWithLiquid" for i in goal.items):
            goal = replace(goal, hints={**goal.hints, "other_goal_types": ",".join(sorted(others))})
        out.append(goal)
    return out


def build_goal_dag(goals: list[Goal]) -> nx.DiGraph:
    dag = nx.DiGraph()
    for order, goal in enumerate(goals):
        dag.add_node(goal.id, goal=goal, order=order)
    for a in goals:
        for b in goals:
            if a.id == b.id:
                continue
            kind = _edge(a, b)
            if kind and not dag.has_edge(b.id, a.id):
                dag.add_edge(a.id, b.id, kind=kind)
    while not nx.is_directed_acyclic_graph(dag):  # defensive: drop one edge of each cycle
        u, v = nx.find_cycle(dag)[-1][:2]
        dag.remove_edge(u, v)
    return dag


def _holds(item: Any) -> bool:
    return item.predicate == "isHeld" and item.expected is True


def _edge(a: Goal, b: Goal) -> str | None:
    for ia in a.items:
        for ib in b.items:
            # "come back holding the phone": the one hand is needed for every other goal, so
            # holding is last whatever the instruction's order (and however it says so)
            if _holds(ib) and not _holds(ia):
                return "hold"
            # "slice the lettuce" then "put a slice on the plate": LettuceSliced comes from Lettuce
            same_object = ia.object.type in (ib.object.type, sliced_base_type(ib.object.type))
            if same_object and ia.predicate in _STATE_CHANGES and ib.predicate in _MOVES:
                return "causal"
            if ia.predicate == "isOpen" and ia.expected is True and ib.target is not None \
                    and ib.target.type == ia.object.type:
                return "causal"
            if ib.predicate == "isOpen" and ib.expected is False and ia.target is not None \
                    and ia.target.type == ib.object.type:
                return "causal"
            if ia.predicate == "inReceptacle" and ia.target is not None and ib.predicate in _MOVES \
                    and ib.object.type == ia.target.type:
                return "object"
            if ib.predicate in _MOVES and ib.object.type in tool_types(ia) and ia.object.type != ib.object.type:
                return "tool"
            if ib.predicate == "inReceptacle" and ib.target is not None \
                    and ib.target.type == emptied_station(ia.predicate, ia.expected):
                return "station"
    return None


def ready_goals(dag: nx.DiGraph, finished: Iterable[str]) -> list[Goal]:
    done = set(finished)
    out = []
    for node in dag.nodes:
        if node in done:
            continue
        if all(p in done for p in dag.predecessors(node)):
            out.append(dag.nodes[node]["goal"])
    return out


def next_goal(dag: nx.DiGraph, finished: Iterable[str], cost: Callable[[Goal], float] | None = None,
              spatial: bool = True) -> Goal | None:
    """The ready goal to do next: cheapest by ``cost`` (travel from the agent, unseen objects
    last), instruction order on ties; instruction order only when ``spatial`` is off."""
    ready = ready_goals(dag, finished)
    if not ready:
        return None
    if not spatial or cost is None:
        return min(ready, key=lambda g: dag.nodes[g.id]["order"])
    return min(ready, key=lambda g: (cost(g), dag.nodes[g.id]["order"]))


def dag_to_dict(dag: nx.DiGraph) -> dict:
    """JSON-ready form for reports and the ROS plan topic."""
    return {"nodes": [dag.nodes[n]["goal"].to_dict() for n in dag.nodes],
            "edges": [{"from": u, "to": v, "kind": d.get("kind", "")} for u, v, d in dag.edges(data=True)]}


def goal_dag_payload(agent: Any) -> dict[str, Any] | None:
    """The agent's goal DAG as a ``worldmind/goal_dag`` payload, if it exposes one (duck-typed:
    ``agent.dag`` / ``agent.goal_dag`` as a networkx DiGraph of ``planner.roles.Goal`` nodes)."""
    for attr in ("goal_dag", "dag"):
        dag = getattr(agent, attr, None)
        if callable(dag):
            dag = dag()
        if dag is not None and hasattr(dag, "nodes") and hasattr(dag, "edges"):
            d = dag_to_dict(dag)
            return {"goals": d["nodes"], "edges": [[e["from"], e["to"]] for e in d["edges"]]}
    return None
