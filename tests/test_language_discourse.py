"""Free-form failure classes of issue 13, each tested as a class with sentences of its own (not
copied from the free-form set): room scope and back-references, corrections, purpose and
circumstance clauses, ellipsis and apposition, quantifiers, phrasal verbs."""

from __future__ import annotations

import pytest

from planner.instruction_parser import InstructionParser, goal_items


@pytest.fixture(scope="module")
def parser() -> InstructionParser:
    return InstructionParser()


def got(parser: InstructionParser, text: str) -> list[str]:
    return sorted(i.describe() for i in goal_items(parser.decompose(text)))


@pytest.mark.parametrize("text", [
    "In the bathroom, light the candle and put the soap bottle on the counter.",
    "Over in the bathroom, light the candle, then put the soap bottle on the counter.",
    "Let's do the bathroom first: light the candle and put the soap bottle on the counter.",
    "I'm cleaning up in the bathroom, so light the candle and put the soap bottle on the counter.",
])
def test_room_said_once_scopes_the_sentence(parser: InstructionParser, text: str) -> None:
    assert got(parser, text) == ["Candle (Bathroom) is on", "SoapBottle in CounterTop (Bathroom)"]


def test_room_scope_ends_with_the_sentence(parser: InstructionParser) -> None:
    assert got(parser, "In the bedroom, open the laptop. Put the pen on the desk.") == [
        "Laptop (Bedroom) is open", "Pen in Desk"]


@pytest.mark.parametrize("text", [
    "Take the laptop to the bedroom and put a pen on the desk there.",
    "Take the laptop to the bedroom, and while you're in there, put a pen on the desk.",
    "Take the laptop to the bedroom and put a pen on the desk in there.",
])
def test_there_is_the_last_room(parser: InstructionParser, text: str) -> None:
    assert got(parser, text) == ["Laptop is in the Bedroom", "Pen in Desk (Bedroom)"]


def test_there_never_becomes_a_room_named_there(parser: InstructionParser) -> None:
    out = got(parser, "Switch the TV on in there.")
    assert out == ["Television is on"]
    assert got(parser, "I'm in the den tonight, so switch the TV on in there.") == ["Television (LivingRoom) is on"]


def test_bring_to_room_then_place_keeps_the_room_on_the_destination(parser: InstructionParser) -> None:
    assert got(parser, "Carry a mug and a book to the bedroom and leave them on the bed.") == [
        "Book in Bed (Bedroom)", "Mug in Bed (Bedroom)"]


@pytest.mark.parametrize("text,expected", [
    ("Put the mug on the table, no, on the counter.", ["Mug in CounterTop"]),
    ("Put the mug on the table — sorry, I mean in the sink.", ["Mug in Sink"]),
    ("Switch the desk lamp on, sorry, I mean off.", ["DeskLamp is off"]),
    ("Put the apple in the bowl, no, put it in the fridge.", ["Apple in Fridge"]),
])
def test_corrections_take_the_last(parser: InstructionParser, text: str, expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_correction_with_nothing_to_correct_is_reported(parser: InstructionParser) -> None:
    assert got(parser, "Sorry, I mean on the counter.") == []
    assert parser.unparsed


@pytest.mark.parametrize("text", [
    "Put my phone in the drawer so I'm not tempted.",
    "Put my phone in the drawer so that nobody takes it.",
    "Put my phone in the drawer because it keeps buzzing.",
])
def test_purpose_clause_is_not_a_negation(parser: InstructionParser, text: str) -> None:
    assert got(parser, text) == ["CellPhone in Drawer"]
    assert any("purpose" in u.reason for u in parser.unparsed)


def test_circumstance_clause_is_not_a_goal(parser: InstructionParser) -> None:
    assert got(parser, "Put the egg in the fridge, and while you've got it open, put a tomato in there too.") == [
        "Egg in Fridge", "Tomato in Fridge"]


@pytest.mark.parametrize("text", [
    "Fill the kettle with water, then the pot as well.",
    "Fill the kettle with water, and do the same for the pot.",
])
def test_ellipsis_repeats_the_request(parser: InstructionParser, text: str) -> None:
    assert got(parser, text) == ["Kettle is filled with water", "Pot is filled with water"]


def test_apposition_names_the_objects_of_a_plural(parser: InstructionParser) -> None:
    assert got(parser, "Switch off both lamps in the bedroom — the desk lamp and the floor lamp.") == [
        "DeskLamp (Bedroom) is off", "FloorLamp (Bedroom) is off"]


def test_left_dislocated_topic(parser: InstructionParser) -> None:
    assert got(parser, "The pen and the pencil — put both of them in the mug.") == ["Pen in Mug", "Pencil in Mug"]


def test_scene_description_gives_a_referent_not_a_goal(parser: InstructionParser) -> None:
    assert got(parser, "There's a box in the bedroom. Put the watch in that one.") == ["Watch in Box (Bedroom)"]


@pytest.mark.parametrize("text,expected", [
    ("Bring a couple of apples to the kitchen.", ["2 x Apple is in the Kitchen"]),
    ("Put two pencils in the box.", ["2 x Pencil in Box"]),
    ("Cook one of the potatoes in the microwave.", ["Potato is cooked"]),
])
def test_counts_and_partitives(parser: InstructionParser, text: str, expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_one_of_is_recorded(parser: InstructionParser) -> None:
    goals = parser.decompose("Cook one of the potatoes in the microwave.")
    assert goals[0].hints.get("quantifier") == "one of"


@pytest.mark.parametrize("text,expected", [
    ("Get the telly on.", ["Television is on"]),
    ("Flip the laptop open.", ["Laptop is open"]),
    ("Stand the vase on the shelf.", ["Vase in ShelvingUnit"]),
    ("Put the book on the bed along with the pillow.", ["Book in Bed", "Pillow in Bed"]),
    ("Chuck the ball onto the living-room sofa.", ["BasketBall in Sofa (LivingRoom)"]),
])
def test_phrasal_verbs_and_written_forms(parser: InstructionParser, text: str, expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_negations_still_drop(parser: InstructionParser) -> None:
    assert got(parser, "Put the mug in the sink. None of it goes in the bedroom. Don't touch the laptop.") == [
        "Mug in Sink"]


# ------------------------------------------------------------------ concise, list-like wording
@pytest.mark.parametrize("text,expected", [
    ("Shelf: vase and statue; desk: laptop.", ["Laptop in Desk", "Statue in ShelvingUnit", "Vase in ShelvingUnit"]),
    ("Water in the kettle and the pot.", ["Kettle is filled with water", "Pot is filled with water"]),
    ("Kettle and pot of water.", ["Kettle is filled with water", "Pot is filled with water"]),
    ("Desk and floor lamps off.", ["DeskLamp is off", "FloorLamp is off"]),
    ("Watch boxed, remote on the sofa.", ["RemoteControl in Sofa", "Watch in Box"]),
    ("Light the candle, vase on the shelf.", ["Candle is on", "Vase in ShelvingUnit"]),
    ("Card in the drawer.", ["CreditCard in Drawer"]),
])
def test_concise_list_forms(parser: InstructionParser, text: str, expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_water_as_a_verb_still_waters(parser: InstructionParser) -> None:
    assert got(parser, "Water the plant.") == ["HousePlant is filled with water"]


def test_slices_refer_to_everything_just_sliced(parser: InstructionParser) -> None:
    assert got(parser, "Cut the tomato and the potato, then put the pieces in the bowl.") == [
        "Potato is sliced", "PotatoSliced in Bowl", "Tomato is sliced", "TomatoSliced in Bowl"]


def test_own_set_recovered_exactly(parser: InstructionParser) -> None:
    """tests/data/instructions_own.jsonl: written from dev checklists before the grammar was read
    (first measured at P 0.941 / R 0.914; its misses were then fixed as classes)."""
    import json
    from pathlib import Path

    from household.checklist import ChecklistItem

    path = Path(__file__).resolve().parent / "data/instructions_own.jsonl"
    for line in path.read_text().splitlines():
        row = json.loads(line)
        gold = sorted(ChecklistItem.from_dict(d).describe() for d in row["items"])
        assert got(parser, row["instruction"]) == gold, row["id"]


def test_trailing_negation_after_a_comma_keeps_the_request(parser: InstructionParser) -> None:
    assert got(parser, "Put the mug in the sink, not the fridge.") == ["Mug in Sink"]
    assert any("negated" in u.reason for u in parser.unparsed)


def test_partly_understood_clause_is_reported(parser: InstructionParser) -> None:
    assert got(parser, "Put the apple on the counter and the banana too.") == ["Apple in CounterTop"]
    assert any("partly understood" in u.reason and "banana" in u.reason for u in parser.unparsed)


def test_placed_and_left_in_a_state(parser: InstructionParser) -> None:
    assert got(parser, "Leave the laptop open on the desk.") == ["Laptop in Desk", "Laptop is open"]


# Classes found on the held-out part at the end (fixed as classes, with sentences of our own;
# the held-out figures in the report are the ones measured before these fixes).
@pytest.mark.parametrize("text,expected", [
    ("Put the mug on the side table in the bedroom — sorry, the bathroom one.", ["Mug in SideTable (Bathroom)"]),
    ("Put the vase in the dresser. The remote goes in there too.", ["RemoteControl in Dresser", "Vase in Dresser"]),
    ("Take the laptop off the desk and into the kitchen.", ["Laptop is in the Kitchen"]),
])
def test_room_corrections_there_after_a_placement_and_motion_into_a_room(parser: InstructionParser, text: str,
                                                                          expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_an_ellipsis_with_a_relation_after_its_noun_is_read() -> None:
    """Issue 29: "turn the desk lamp on, and the laptop by the dining table too" lost the laptop
    (a relation after the noun stopped the ellipsis); the relation says which laptop, and the
    desk lamp's own qualifiers do not carry over to it."""
    from planner.instruction_parser import InstructionParser
    p = InstructionParser()
    goals = p.decompose("Turn the desk lamp by the bed on, and the laptop by the dining table too.")
    assert [(g.items[0].object.type, g.items[0].predicate, g.items[0].value) for g in goals] == [
        ("DeskLamp", "isToggled", True), ("Laptop", "isToggled", True)]
    assert goals[0].hints.get("object_near") == "Bed" and goals[1].hints.get("object_near") == "DiningTable"
    assert "object_alternatives" not in goals[1].hints and p.unparsed == []
    # two nouns before one relation: which does it qualify? not guessed
    p.decompose("Turn the desk lamp on, and the laptop and the TV by the sofa too.")
    assert p.unparsed


@pytest.mark.parametrize("text, shown", [
    ("Put -5 mugs in the sink.", "-5"), ("Put 0 cups on the table.", "0"), ("Put 1e3 apples in the fridge.", "1e3"),
    ("put 2.5 mugs in the sink", "2.5"), ("put 1,000 mugs in the sink", "1,000"), ("Put + 5 mugs in the sink", "+ 5"),
])
def test_a_count_that_is_no_count_of_objects_is_not_understood(text: str, shown: str) -> None:
    """Issues 29 and 32: "-5 mugs" read 5, "0 cups" 1, "1e3" 3: a guessed goal. Now the clause is
    reported, naming the number, and nothing is guessed."""
    from planner.instruction_parser import InstructionParser
    p = InstructionParser()
    assert p.decompose(text) == []
    assert len(p.unparsed) == 1 and f"'{shown}' is not a number of objects" in p.unparsed[0].reason


def test_plain_counts_still_read() -> None:
    from planner.instruction_parser import InstructionParser
    goals = InstructionParser().decompose("Put 3 apples in the fridge, then 2 mugs in the sink.")
    assert [(g.items[0].object.type, g.items[0].object.count) for g in goals] == [("Apple", 3), ("Mug", 2)]


@pytest.mark.parametrize("filler", [",", "and ", "after that "])
def test_clause_splitting_work_is_linear_in_separators(filler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: 1,000 commas took 7.6 s, 3,000 took 79 s (each stripped word copied the rest of
    the sentence, from every position). Counted in rule passes, not seconds."""
    from planner.instruction_parser import InstructionParser
    import planner.language.types as T
    calls = [0]
    real = T._one_pass

    def counting(words, i):
        calls[0] += 1
        return real(words, i)

    monkeypatch.setattr(T, "_one_pass", counting)
    p = InstructionParser()
    work = []
    for n in (200, 800):  # 800 x "after that " is within the 10,000-character limit
        calls[0] = 0
        goals = p.decompose("put the mug in the sink, " + filler * n + " then turn on the lamp")
        assert [g.items[0].object.type for g in goals] == ["Mug", "DeskLamp"]
        work.append(calls[0])
    assert work[1] <= 5 * work[0] + 50  # 4x the separators: about 4x the passes, not 16x or 64x


@pytest.mark.parametrize("text, expected", [
    ("Open the microwave and put the mug inside.", ["Microwave is open", "Mug in Microwave"]),
    ("Open the microwave and put the mug in there.", ["Microwave is open", "Mug in Microwave"]),
    # the destination found, the pronoun after it is the drawer (a pen cannot be closed)
    ("Open the drawer, put the pen inside, and close it.", ["Drawer is closed", "Drawer is open", "Pen in Drawer"]),
    ("Take the box to the bedroom and put the CD inside.", ["Box is in the Bedroom", "CD in Box"]),
    # "in there" after a room is still that room
    ("Go to the kitchen and put the apple in there.", ["Apple is in the Kitchen"]),
])
def test_a_bare_inside_or_in_there_is_the_receptacle_named_before(parser: InstructionParser, text: str,
                                                                  expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_inside_with_nothing_named_before_is_reported_not_guessed(parser: InstructionParser) -> None:
    assert got(parser, "Put the pen inside.") == []
    assert "no destination given" in str(parser.unparsed)


@pytest.mark.parametrize("text, expected", [
    ("Make sure the fridge door is closed.", ["Fridge is closed"]),
    ("Close the microwave door.", ["Microwave is closed"]),
    ("Open the cabinet doors in the kitchen.", ["Cabinet (Kitchen) is open"]),
    # a door on its own is a doorway, the kitchen's included
    ("Shut the kitchen door.", ["Doorway (Kitchen) is closed"]),
])
def test_a_part_named_after_its_object_is_the_object(parser: InstructionParser, text: str,
                                                     expected: list[str]) -> None:
    assert got(parser, text) == expected


def test_the_recycling_is_a_bin(parser: InstructionParser) -> None:
    assert got(parser, "Throw the empty wine bottle in the recycling.") == ["WineBottle in GarbageCan"]
    assert got(parser, "Put the newspaper in the recycling bin.") == ["Newspaper in GarbageCan"]
