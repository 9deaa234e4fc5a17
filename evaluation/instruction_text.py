"""How generated goals are said: everyday nouns, references, counts, sentence forms, fillers.

The generator's builders (``evaluation.goal_templates``) decide *what* a goal is (objects,
checklist items, pins); this module decides *how a person would say it*. LongAct's detailed
instructions read like a person talking ("Could you put both mugs in the sink, then turn off
the lamp by the sofa? Oh, and the TV too."), and its concise split names each object or its
category and leaves the rest to be inferred. Keeping the wording here, as data plus a few
seeded choices, lets the language change without touching feasibility, and makes every wording
reproducible from the seed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

# Everyday nouns per object type (the first is the plain one). A noun shared by several types
# ("lamp", "table") is only used when the house has no other type it could mean.
NOUNS: dict[str, tuple[str, ...]] = {
    "RemoteControl": ("remote", "TV remote", "remote control"),
    "CellPhone": ("phone", "cell phone", "mobile"),
    "Television": ("TV", "television"),
    "Sofa": ("sofa", "couch"),
    "ArmChair": ("armchair",),
    "CounterTop": ("counter", "kitchen counter", "countertop"),
    "DiningTable": ("dining table", "table"),
    "CoffeeTable": ("coffee table", "table"),
    "SideTable": ("side table", "end table", "table"),
    "Desk": ("desk",),
    "TVStand": ("TV stand", "TV unit"),
    "ShelvingUnit": ("shelf", "shelving unit", "bookshelf"),
    "Dresser": ("dresser", "chest of drawers"),
    "Fridge": ("fridge", "refrigerator"),
    "GarbageCan": ("bin", "trash can"),
    "KeyChain": ("keys", "key ring"),
    "Newspaper": ("newspaper", "paper"),
    "AlarmClock": ("alarm clock", "clock"),
    "BasketBall": ("basketball", "ball"),
    "BaseballBat": ("baseball bat", "bat"),
    "TeddyBear": ("teddy bear", "teddy"),
    "Cup": ("cup", "glass"),
    "Mug": ("mug",),
    "WineBottle": ("wine bottle", "bottle of wine"),
    "DeskLamp": ("desk lamp", "lamp"),
    "FloorLamp": ("floor lamp", "standing lamp", "lamp"),
    "CoffeeMachine": ("coffee machine", "coffee maker"),
    "Faucet": ("tap", "faucet"),
    "Laptop": ("laptop", "computer"),
    "CreditCard": ("credit card", "card"),
    "SprayBottle": ("spray bottle", "spray"),
    "TissueBox": ("tissue box", "box of tissues"),
    "ToiletPaper": ("toilet paper", "toilet roll"),
    "SoapBottle": ("soap bottle", "soap"),
    "Cloth": ("cloth", "rag"),
    "Plate": ("plate",),
    "Bowl": ("bowl",),
    "Pan": ("pan", "frying pan"),
    "Pot": ("pot", "saucepan"),
    "Kettle": ("kettle",),
    "ButterKnife": ("butter knife",),
    "Knife": ("knife",),
    "SaltShaker": ("salt shaker", "salt"),
    "PepperShaker": ("pepper shaker", "pepper"),
    "Bed": ("bed",),
    "Box": ("box", "cardboard box"),
    "Toilet": ("toilet",),
    "Safe": ("safe",),
    "Book": ("book",),
    "Pen": ("pen",),
    "Pencil": ("pencil",),
    "Watch": ("watch",),
    "Statue": ("statue", "figurine"),
    "Vase": ("vase",),
    "Candle": ("candle",),
    "HousePlant": ("plant", "houseplant"),
}

# Nouns that are plural in the singular ("the keys ... put them").
PLURAL_NOUNS = frozenset({"keys"})
PLURALS = {"knife": "knives", "butter knife": "butter knives", "glass": "glasses", "box": "boxes",
           "potato": "potatoes", "tomato": "tomatoes", "watch": "watches", "keys": "sets of keys",
           "salt": "salt shakers", "pepper": "pepper shakers", "lettuce": "heads of lettuce",
           "bread": "loaves of bread", "cardboard box": "cardboard boxes", "box of tissues": "boxes of tissues",
           "bottle of wine": "bottles of wine", "toilet paper": "rolls of toilet paper",
           "chest of drawers": "chests of drawers", "spray": "spray bottles", "soap": "soap bottles",
           "couch": "couches", "TV": "TVs"}

# Category words for the concise split: it may name a category instead of each object.
CATEGORIES: dict[str, str] = {
    **{t: "dishes" for t in ("Plate", "Bowl", "Mug", "Cup", "Pan", "Pot")},
    **{t: "cutlery" for t in ("Fork", "Spoon", "ButterKnife", "Knife", "Ladle", "Spatula")},
    **{t: "fruit" for t in ("Apple", "Tomato")},
    **{t: "veg" for t in ("Potato", "Lettuce")},
    **{t: "lights" for t in ("FloorLamp", "DeskLamp", "Candle")},
    **{t: "gadgets" for t in ("CellPhone", "Laptop", "RemoteControl", "Watch", "AlarmClock", "CD")},
    **{t: "reading" for t in ("Book", "Newspaper")},
    **{t: "stationery" for t in ("Pen", "Pencil", "CreditCard", "KeyChain")},
    **{t: "toys" for t in ("TeddyBear", "BasketBall", "BaseballBat")},
    **{t: "decor" for t in ("Statue", "Vase")},
}

ROOM_WORDS = {"LivingRoom": ("living room", "lounge"), "Kitchen": ("kitchen",), "Bedroom": ("bedroom",),
              "Bathroom": ("bathroom",)}


def words(type_name: str) -> str:
    """'RemoteControl' -> 'remote control', 'TVStand' -> 'TV stand'."""
    parts = re.findall(r"[A-Z]{2,}(?=[A-Z][a-z]|$)|[A-Z]?[a-z]+|[A-Z]+", type_name)
    return " ".join(p if p.isupper() and len(p) > 1 else p.lower() for p in parts)


def plural(noun: str) -> str:
    if noun in PLURALS:
        return PLURALS[noun]
    head, _, last = noun.rpartition(" ")
    if last in PLURALS:
        return f"{head} {PLURALS[last]}".strip()
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    return noun + "s"


def article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def room_word(room_type: str, rng: random.Random | None = None) -> str:
    options = ROOM_WORDS.get(room_type, (words(room_type),))
    return rng.choice(options) if rng is not None else options[0]


def noun_options(type_name: str, house_types: set[str]) -> list[str]:
    """Nouns that name this type unambiguously in a house with these types."""
    out = []
    for noun in NOUNS.get(type_name, (words(type_name),)):
        clash = any(noun in NOUNS.get(other, ()) for other in house_types if other != type_name)
        if not clash:
            out.append(noun)
    return out or [words(type_name)]


@dataclass
class Mention:
    """How one goal names its object(s): a noun, how many, and (where the house has several of
    the type) the qualifier that says which ("on the dining table", "in the bedroom", "by the
    sofa"). ``quant`` is the count phrase for groups ("both", "two", "a couple of", "all the")."""

    type: str
    noun: str
    count: int = 1
    quant: str = ""
    qualifier: str = ""
    definite: bool = False

    def text(self) -> str:
        if self.count > 1:
            pl = plural(self.noun)
            if self.quant == "all the":
                return f"all the {pl} {self.qualifier}".strip()
            if self.quant in ("both", "all three"):
                return f"{self.quant} {pl}"
            return f"{self.quant} {pl}{' ' + self.qualifier if self.qualifier else ''}"
        if self.definite or self.qualifier:
            return f"the {self.noun}{' ' + self.qualifier if self.qualifier else ''}"
        return f"{article(self.noun)} {self.noun}"

    def short(self) -> str:
        """For the concise split: the noun (plural for groups), no qualifier."""
        return plural(self.noun) if self.count > 1 else self.noun

    @property
    def pronoun(self) -> str:
        return "them" if self.count > 1 or self.noun in PLURAL_NOUNS else "it"


@dataclass
class Phrase:
    """A goal's words. ``clauses`` are alternative detailed clauses (no final period).
    ``merge_key`` lets consecutive goals share one clause by ellipsis ("turn off the TV and the
    lamp"), with ``merge_head``/``merge_tail`` around the joined ``mention``s. The concise split
    says ``concise_obj`` (or ``category``) followed by ``concise_tail`` ("on the desk", "off",
    "washed"); goals with the same tail share it."""

    clauses: list[str]
    concise_obj: str
    concise_tail: str
    merge_key: tuple | None = None
    merge_head: str = ""
    merge_tail: str = ""
    mention: str = ""
    category: str = ""
    last: bool = False  # say it at the end (holding something)


OPENERS = ("", "", "", "Please ", "Could you ", "Hey, could you ", "When you get a chance, ", "I need you to ",
           "Can you ")
MID_OPENERS = ("Please ", "Could you ", "Can you ", "When you get a chance, ")
# (link, whether the next sentence continues in lower case after it)
LINKS = (("Then ", True), ("After that, ", True), ("Also, ", True), ("Oh, and ", True), ("Next, ", True),
         ("", False), ("", False), ("And ", True))
JOINS = (", then ", " and ", ", and then ", "; also ")
CLOSERS = ("", "", "", " Thanks!", " Thank you.", " That's all.")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _lower_first(text: str) -> str:
    return text if text[:2].isupper() else text[:1].lower() + text[1:]


def _politely(opener: str, clause: str) -> str:
    """Join an opener to a clause: questions end in "?", and "Please"/"Could you" take the verb."""
    if opener.strip().lower() in ("could you", "hey, could you", "can you"):
        return f"{opener}{_lower_first(clause)}?"
    if opener:
        return f"{opener}{_lower_first(clause)}."
    return f"{_cap(clause)}."


def compose_detailed(phrases: list[Phrase], rng: random.Random) -> str:
    """The detailed instruction: goals in order (anything marked ``last`` at the end), two goals
    per sentence now and then, ellipsis where consecutive goals share a verb and target."""
    ordered = [p for p in phrases if not p.last] + [p for p in phrases if p.last]
    units: list[str] = []
    closing = [rng.choice(p.clauses) for p in ordered if p.last]  # own sentence, no link: "Finally, ..."
    ordered = [p for p in ordered if not p.last]
    i = 0
    while i < len(ordered):
        p = ordered[i]
        group = [p]
        while (p.merge_key is not None and i + len(group) < len(ordered) and len(group) < 3
               and ordered[i + len(group)].merge_key == p.merge_key and rng.random() < 0.75):
            group.append(ordered[i + len(group)])
        if len(group) == 2 and rng.random() < 0.4:  # ellipsis after a full clause
            units.append(f"{rng.choice(p.clauses)}, and {group[1].mention} too")
        elif len(group) > 1:
            mentions = [g.mention for g in group]
            units.append(f"{p.merge_head}{', '.join(mentions[:-1])} and {mentions[-1]}{p.merge_tail}")
        else:
            units.append(rng.choice(p.clauses))
        i += len(group)
    sentences: list[str] = []
    j = 0
    while j < len(units):
        if j + 1 < len(units) and rng.random() < 0.4:
            clause = units[j] + rng.choice(JOINS) + units[j + 1]
            j += 2
        else:
            clause = units[j]
            j += 1
        opener = (rng.choice(OPENERS) if not sentences else rng.choice(MID_OPENERS) if rng.random() < 0.25 else "")
        sentences.append(_politely(opener, clause))
    text = sentences[0] if sentences else ""
    for sentence in sentences[1:]:
        link, lower = rng.choice(LINKS)
        text += " " + link + (_lower_first(sentence) if lower else sentence)
    for clause in closing:
        text += " " + _politely("", clause)
    return (text + rng.choice(CLOSERS)).strip()


CONCISE_MAX_WORDS = 35
STATE_TAILS = ("on", "off", "open", "washed", "sliced", "toasted", "cooked", "in hand", "of water", "of coffee",
               "of wine", "watered")


def _concise_text(title: str, phrases: list[Phrase], by_category: bool, put_away: bool = False) -> str:
    groups: dict[str, list[str]] = {}
    for p in phrases:
        name = p.category if by_category and p.category else p.concise_obj
        tail = p.concise_tail if not put_away or p.concise_tail in STATE_TAILS else "put away"
        names = groups.setdefault(tail, [])
        if name not in names:
            names.append(name)
    frags = []
    for tail, names in groups.items():
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        frags.append(f"{joined} {tail}".strip())
    return f"{title}: " + "; ".join(frags) + "."


def compose_concise(title: str, phrases: list[Phrase]) -> str:
    """LongAct's concise split: at most 35 words naming each object or its category, details
    (which one, where exactly, how) left to be inferred. Goals sharing an effect share it ("TV
    and lamp off"); when that is still too long, objects are named by category ("dishes")."""
    text = _concise_text(title, phrases, by_category=False)
    if len(text.split()) > CONCISE_MAX_WORDS:
        text = _concise_text(title, phrases, by_category=True)
    if len(text.split()) > CONCISE_MAX_WORDS:
        # Categories with their state change only ("dishes washed; books and toys put away"):
        # where things go is left to be inferred.
        text = _concise_text(title, phrases, by_category=True, put_away=True)
    words_ = text.split()
    return text if len(words_) <= CONCISE_MAX_WORDS else " ".join(words_[:CONCISE_MAX_WORDS]).rstrip(",;") + "."
