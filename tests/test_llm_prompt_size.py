"""Prompts sized for small models: each role lists only what it needs (the goal's candidate
objects, not the whole memory), so a large house state does not grow the prompt, and the
recorded real-model prompts shrink when rebuilt today. Sizes are characters / 4, an estimate of
tokens (labelled so; Qwen2.5 counted about 2.5 characters per token on the recorded prompts, so
real token counts are higher than this estimate, and the bounds are set with that in mind)."""

from __future__ import annotations

import dataclasses
import statistics

import pytest

from household.checklist import ChecklistItem
from planner.llm.client import LLMClient, LLMConfig
from planner.llm.roles import LLMCritic, LLMDecomposer, LLMGrounder, LLMRefiner, LLMTranslator, goal_types
from planner.roles import CriticEvent, Goal, Grounding, KnownObject, PlannerContext, Subgoal
from benchmarks.llm_prompt_sizes import FORMAT_NOTE_CHARS, rebuilt
from tests.llm_transcript import conversations

TYPES = ["Mug", "Sink", "Apple", "Knife", "Fridge", "Book", "Sofa", "Chair", "Pillow", "Vase", "Pen", "Cup",
         "Bowl", "Plate", "Pot", "Pan", "Toaster", "Laptop", "Watch", "Dresser", "Bed", "Desk", "Lettuce", "Tomato"]


def est_tokens(messages: list[dict[str, str]]) -> float:
    return sum(len(m["content"]) for m in messages) / 4


def house(n_objects: int) -> PlannerContext:
    objects = [KnownObject(f"obj|{i}|{i % 7}", TYPES[i % len(TYPES)], ["Kitchen", "LivingRoom", "Bedroom"][i % 3],
                           (float(i % 20), float(i // 20), 0.0), state={"isOpen": False} if i % 5 == 0 else {},
                           last_seen_step=i) for i in range(n_objects)]
    return PlannerContext(step=900, held_object_id="obj|3|3", held_object_type=TYPES[3], known_objects=objects,
                          rooms_seen=["Kitchen", "LivingRoom", "Bedroom", "Bathroom"],
                          history=[f"navigate_to {{'object_id': 'obj|{i}|0'}}" for i in range(40)],
                          experience=["Fridge: open it before placing"] * 3, object_types=sorted(set(TYPES)) * 1,
                          agent_position=(0.0, 0.0, 0.0))


GOAL = Goal(id="g1", text="put a sliced apple in the fridge", items=(
    ChecklistItem.from_dict({"object": {"type": "AppleSliced"}, "predicate": "inReceptacle",
                             "target": {"type": "Fridge"}}),
    ChecklistItem.from_dict({"object": {"type": "Apple"}, "predicate": "isSliced"})))


def prompts(context: PlannerContext) -> dict[str, list[dict[str, str]]]:
    client = LLMClient(LLMConfig(model="openai/local", api_base="http://127.0.0.1:8080/v1"))
    grounding = Grounding(goal_id="g1", bindings={"object": "obj|2|2", "target": "obj|4|4", "tool": "obj|3|3"})
    event = CriticEvent(kind="action", subgoal=Subgoal("pick", {"object_id": "obj|2|2"}, "g1"), action="PickupObject",
                        success=False, error="hand is full", context_note="held: obj|3|3")
    return {"decompose": LLMDecomposer(client).messages("Slice an apple and put it in the fridge.", context),
            "refine": LLMRefiner(client).messages(GOAL, context),
            "ground": LLMGrounder(client).messages(GOAL, context),
            "translate": LLMTranslator(client).messages(GOAL, grounding, context),
            "critique": LLMCritic(client).messages(event, context)}


# Bounds in estimated tokens (chars / 4) for a 600-object house; the decomposer keeps the whole
# type vocabulary (an instruction may name any type) but no object listing.
BOUNDS = {"decompose": 900, "refine": 900, "ground": 700, "translate": 900, "critique": 900}


def test_prompt_size_is_bounded_for_a_large_house() -> None:
    large, huge = prompts(house(600)), prompts(house(3000))
    for role, messages in large.items():
        assert est_tokens(messages) <= BOUNDS[role], (role, est_tokens(messages))
        # Once each wanted type has its 8 listed, five times the objects changes only counts and ids.
        assert abs(est_tokens(huge[role]) - est_tokens(messages)) <= 40, (role, est_tokens(huge[role]))


def test_roles_list_the_goals_candidates_and_the_held_object() -> None:
    context = house(600)
    wanted = goal_types(GOAL)
    assert {"Apple", "AppleSliced", "Fridge", "Knife"} <= wanted
    user = prompts(context)["ground"][1]["content"]
    listed = [line for line in user.splitlines() if line.startswith("- obj|")]
    assert listed and all(line.split(" | ")[1] in wanted for line in listed)
    assert "- obj|3|3 | Knife" in user  # held
    # At most max_objects_per_type (8) of each wanted type, the nearest, plus the held one.
    per_type = {t: sum(1 for line in listed if line.split(" | ")[1] == t) for t in wanted}
    assert all(n <= 8 for t, n in per_type.items() if t != "Knife") and per_type["Knife"] <= 9
    assert per_type["Apple"] == 8 and per_type["Fridge"] == 8
    assert f"of {len(context.known_objects)};" in user and "farther ones of these types not listed" in user
    translate = prompts(context)["translate"][1]["content"]
    assert "- obj|2|2 |" in translate and "- obj|4|4 |" in translate  # the bound ones
    critique = prompts(context)["critique"][1]["content"]
    assert "- obj|2|2 |" in critique and "- obj|3|3 |" in critique
    assert "- obj|" not in prompts(context)["decompose"][1]["content"]  # no listing: types only


def test_recorded_prompts_shrink_when_rebuilt_today() -> None:
    client = LLMClient(LLMConfig(model="openai/local", api_base="http://127.0.0.1:8080/v1"))
    ratios: dict[str, list[float]] = {}
    for conv in conversations():
        if len(conv.first.messages) != 2:
            continue
        before = sum(len(m["content"]) for m in conv.first.messages)
        after = sum(len(m["content"]) for m in rebuilt(conv.role, conv.first.messages, client)) + FORMAT_NOTE_CHARS
        ratios.setdefault(conv.role, []).append(after / before)
        # The goal and every binding still reach the model.
        now = "\n".join(m["content"] for m in rebuilt(conv.role, conv.first.messages, client))
        assert conv.first.messages[1]["content"].split("\nGoal: ")[1].split("\n")[0] in now
    assert set(ratios) == {"ground", "refine", "translate"}
    for role, r in ratios.items():
        assert statistics.median(r) < 0.6, (role, statistics.median(r))


@pytest.mark.parametrize("role", ["refine", "ground", "translate"])
def test_listing_is_capped_per_type(role: str) -> None:
    context = house(600)
    # Every object a candidate: still 8 listed (the nearest), the rest counted.
    context.known_objects[:] = [dataclasses.replace(o, object_type="Apple") for o in context.known_objects]
    user = prompts(context)[role][1]["content"]
    listed = [line for line in user.splitlines() if line.startswith("- obj|")]
    assert len(listed) <= 8 + 3  # 8 apples plus the held and bound ids
    must = ("- obj|2|2 |", "- obj|3|3 |", "- obj|4|4 |")  # bound or held: listed wherever they are
    distances = [float(line.rsplit(" | ", 1)[1].rstrip("m")) for line in listed if not line.startswith(must)]
    farthest_listed = max(distances)
    assert farthest_listed <= 3.0  # the nearest of 600, around the agent at the origin
    assert "farther ones of these types not listed" in user
