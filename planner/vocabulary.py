"""Phrase tables for the deterministic instruction parser (``planner.instruction_parser``).

Why a separate module: the parser's grammar (how clauses are split and read) changes for other
reasons than its word lists (which phrase means which THOR type, which verb means which goal), and
the word lists are what people extend when a new household phrasing shows up.

Most object types need no entry here: ``type_phrases`` splits every asset-database type name
("RemoteControl" -> "remote control", "TVStand" -> "tv stand") and also accepts the words written
together ("countertop", "tvstand") and plurals. ``SYNONYMS`` only holds what splitting cannot
produce ("fridge", "couch", "phone"), and ``AMBIGUOUS`` the words that name several types ("lamp",
"table"): the checklist schema selects one type per selector, so the parser picks one (by the
affordance the verb needs, then by the order given here, first = most common in ProcTHOR houses)
and records the others in the goal's hints.
"""

from __future__ import annotations

import re

# Room types of ProcTHOR houses, by the phrases people use for them.
ROOM_PHRASES: dict[str, str] = {
    "kitchen": "Kitchen",
    "living room": "LivingRoom", "livingroom": "LivingRoom", "lounge": "LivingRoom", "family room": "LivingRoom",
    "sitting room": "LivingRoom", "den": "LivingRoom",
    "bedroom": "Bedroom", "bed room": "Bedroom", "master bedroom": "Bedroom", "guest room": "Bedroom",
    "bathroom": "Bathroom", "bath room": "Bathroom", "restroom": "Bathroom", "washroom": "Bathroom",
    "lavatory": "Bathroom", "loo": "Bathroom",
}

# THOR types the ProcTHOR asset database lacks (they are parts of counters and stoves there) but
# that people name all the time; kept so "put it in the drawer" parses to what was asked rather
# than to nothing. Value: the affordance flags the parser may rely on for disambiguation.
EXTRA_TYPES: dict[str, frozenset[str]] = {
    "StoveBurner": frozenset({"toggleable", "receptacle"}),
    "Cabinet": frozenset({"openable", "receptacle"}),
    "Drawer": frozenset({"openable", "receptacle"}),
    "Shelf": frozenset({"receptacle"}),
}

# Phrase -> one type, for what CamelCase splitting does not produce. Plurals are generated.
SYNONYMS: dict[str, str] = {
    "fridge": "Fridge", "refrigerator": "Fridge", "freezer": "Fridge",
    "couch": "Sofa", "settee": "Sofa",
    "phone": "CellPhone", "cellphone": "CellPhone", "mobile": "CellPhone", "mobile phone": "CellPhone",
    "smartphone": "CellPhone", "cell": "CellPhone",
    "remote": "RemoteControl", "tv remote": "RemoteControl", "clicker": "RemoteControl",
    "tv": "Television", "television set": "Television", "telly": "Television", "tv set": "Television",
    "stove": "StoveBurner", "burner": "StoveBurner", "stovetop": "StoveBurner", "stove top": "StoveBurner",
    "cooktop": "StoveBurner", "hob": "StoveBurner",
    "counter": "CounterTop", "worktop": "CounterTop", "bench top": "CounterTop",
    "basket ball": "BasketBall", "ball": "BasketBall",
    "bat": "BaseballBat", "baseball bat": "BaseballBat",
    "racket": "TennisRacket", "racquet": "TennisRacket", "tennis racquet": "TennisRacket",
    "keys": "KeyChain", "key": "KeyChain", "keyring": "KeyChain", "key ring": "KeyChain",
    "house keys": "KeyChain",
    "clock": "AlarmClock", "alarm": "AlarmClock",
    "paper": "Newspaper", "news paper": "Newspaper",
    "disc": "CD", "compact disc": "CD", "cd": "CD",
    "glass": "Cup", "drinking glass": "Cup", "tumbler": "Cup",
    "coffee mug": "Mug", "teacup": "Cup",
    "dish": "Plate", "dinner plate": "Plate",
    "saucepan": "Pot", "cooking pot": "Pot",
    "frying pan": "Pan", "skillet": "Pan", "frypan": "Pan",
    "tea kettle": "Kettle", "teakettle": "Kettle",
    "coffee maker": "CoffeeMachine", "coffeemaker": "CoffeeMachine", "espresso machine": "CoffeeMachine",
    "microwave oven": "Microwave",
    "tap": "Faucet", "kitchen tap": "Faucet",
    "bin": "GarbageCan", "trash can": "GarbageCan", "trashcan": "GarbageCan", "garbage": "GarbageCan",
    "trash": "GarbageCan", "waste basket": "GarbageCan", "wastebasket": "GarbageCan", "rubbish bin": "GarbageCan",
    "trash bin": "GarbageCan", "dustbin": "GarbageCan", "recycling": "GarbageCan", "recycling bin": "GarbageCan",
    "recycle bin": "GarbageCan", "compost bin": "GarbageCan",
    "bin bag": "GarbageBag", "trash bag": "GarbageBag",
    "plant": "HousePlant", "houseplant": "HousePlant", "potted plant": "HousePlant", "flowers": "HousePlant",
    "nightstand": "SideTable", "night stand": "SideTable", "bedside table": "SideTable", "end table": "SideTable",
    "side board": "SideTable",
    "chest of drawers": "Dresser", "bureau": "Dresser",
    "tv stand": "TVStand", "tv table": "TVStand", "tv cabinet": "TVStand", "media console": "TVStand",
    "tv unit": "TVStand", "television unit": "TVStand", "tv console": "TVStand", "tv bench": "TVStand",
    "entertainment center": "TVStand", "entertainment centre": "TVStand", "entertainment unit": "TVStand",
    "media unit": "TVStand",
    "armchair": "ArmChair", "arm chair": "ArmChair", "recliner": "ArmChair",
    "desktop computer": "Desktop", "pc": "Desktop",
    "notebook computer": "Laptop",
    "teddy": "TeddyBear", "teddybear": "TeddyBear", "stuffed animal": "TeddyBear", "stuffed bear": "TeddyBear",
    "bar of soap": "SoapBar", "soap bar": "SoapBar",
    "card": "CreditCard", "bank card": "CreditCard", "debit card": "CreditCard", "credit card": "CreditCard",
    "standing lamp": "FloorLamp", "floor light": "FloorLamp", "standard lamp": "FloorLamp",
    "reading lamp": "DeskLamp", "desk light": "DeskLamp", "television stand": "TVStand",
    "hand soap": "SoapBottle", "soap dispenser": "SoapBottle", "liquid soap": "SoapBottle",
    "sponge": "DishSponge",
    "spray": "SprayBottle", "cleaning spray": "SprayBottle",
    "tissues": "TissueBox", "box of tissues": "TissueBox", "tissue": "TissueBox", "kleenex": "TissueBox",
    "toilet roll": "ToiletPaper", "roll of toilet paper": "ToiletPaper", "loo roll": "ToiletPaper",
    "toilet tissue": "ToiletPaper",
    "paper towels": "PaperTowelRoll", "paper towel": "PaperTowelRoll", "kitchen roll": "PaperTowelRoll",
    "roll of paper towels": "PaperTowelRoll",
    "foil": "AluminumFoil", "aluminium foil": "AluminumFoil", "tin foil": "AluminumFoil",
    "salt": "SaltShaker", "salt shaker": "SaltShaker", "pepper": "PepperShaker", "pepper shaker": "PepperShaker",
    "pepper mill": "PepperShaker",
    "wine": "WineBottle", "bottle of wine": "WineBottle", "wine bottle": "WineBottle",
    "water bottle": "Bottle",
    "watering can": "WateringCan",
    "boot": "Boots", "pair of boots": "Boots",
    "hamper": "LaundryHamper", "laundry basket": "LaundryHamper", "clothes hamper": "LaundryHamper",
    "washer": "WashingMachine", "dryer": "ClothesDryer", "tumble dryer": "ClothesDryer",
    "shelf": "ShelvingUnit", "shelves": "ShelvingUnit", "bookshelf": "ShelvingUnit", "bookcase": "ShelvingUnit",
    "shelving": "ShelvingUnit",
    "footrest": "Footstool", "foot stool": "Footstool",
    "pouf": "Ottoman", "pouffe": "Ottoman",
    "dumbbells": "Dumbbell", "weight": "Dumbbell", "dumbell": "Dumbbell",
    "vacuum": "VacuumCleaner", "hoover": "VacuumCleaner",
    "lights": "LightSwitch", "light": "LightSwitch", "light switch": "LightSwitch", "ceiling light": "LightSwitch",
    "overhead light": "LightSwitch", "switch": "LightSwitch",
    "shower": "ShowerHead", "shower head": "ShowerHead",
    "curtain": "ShowerCurtain", "blind": "Blinds", "window blinds": "Blinds",
    "door": "Doorway",
    "picture": "Painting", "artwork": "Painting",
    "sculpture": "Statue", "figurine": "Statue",
    "cushion": "Pillow",
    "towel rack": "TowelHolder", "towel rail": "TowelHolder", "toilet paper holder": "ToiletPaperHanger",
    "toilet roll holder": "ToiletPaperHanger",
    "knives": "Knife", "kitchen knife": "Knife",
    "cutting board": "CounterTop",
    "egg": "Egg", "eggs": "Egg",
    "toast": "BreadSliced",
    "wrist watch": "Watch", "wristwatch": "Watch",
    "pencils": "Pencil", "pens": "Pen", "biro": "Pen",
    "dishcloth": "Cloth", "rag": "Cloth", "cleaning cloth": "Cloth", "dish cloth": "Cloth",
    "bread loaf": "Bread", "loaf": "Bread", "loaf of bread": "Bread",
    "potatoes": "Potato", "tomatoes": "Tomato",
}

# Phrase -> several types, most likely first. The parser narrows by the affordance the verb
# needs (toggleable for "turn on", receptacle for a destination, ...) and takes the first left.
AMBIGUOUS: dict[str, tuple[str, ...]] = {
    "lamp": ("DeskLamp", "FloorLamp"),
    # the dev houses hold 182 laptops and no desktop computer (houses_dev.jsonl.gz asset ids)
    "computer": ("Laptop", "Desktop"),
    "computers": ("Laptop", "Desktop"),
    "table": ("DiningTable", "CoffeeTable", "SideTable", "Desk"),
    "chair": ("Chair", "ArmChair"),
    "seat": ("Chair", "ArmChair", "Sofa"),
    "bottle": ("Bottle", "WineBottle", "SprayBottle", "SoapBottle"),
    "knife": ("Knife", "ButterKnife"),
    "cup": ("Cup", "Mug"),
    "oven": ("Microwave", "StoveBurner"),
    "cupboard": ("Cabinet",),
    "lamps": ("DeskLamp", "FloorLamp"),
    # placement-annotations.json instances: SoapBottle 30, SoapBar 1
    "soap": ("SoapBottle", "SoapBar"),
}

# Collective nouns: everyday words for a group of object types ("wash the dishes", "put away the
# toys", "slice the veg"). Written from common English usage and the asset database's types, not
# from any instruction set. A category reads as every object of each member type that the clause's
# action applies to ("open the gadgets": the laptops), each member a plural noun joined by "and".
CATEGORIES: dict[str, tuple[str, ...]] = {
    "dishes": ("Plate", "Bowl", "Mug", "Cup", "Pan", "Pot"),
    "crockery": ("Plate", "Bowl", "Mug", "Cup"),
    "cookware": ("Pan", "Pot", "Kettle"),
    "pots and pans": ("Pot", "Pan"),
    "cutlery": ("Fork", "Knife", "ButterKnife", "Spoon"),
    "silverware": ("Fork", "Knife", "ButterKnife", "Spoon"),
    "utensils": ("Fork", "Knife", "ButterKnife", "Spoon", "Spatula", "Ladle"),
    "fruit": ("Apple",),
    "fruits": ("Apple",),
    "veg": ("Potato", "Lettuce", "Tomato"),
    "veggies": ("Potato", "Lettuce", "Tomato"),
    "vegetables": ("Potato", "Lettuce", "Tomato"),
    "produce": ("Apple", "Potato", "Lettuce", "Tomato"),
    "groceries": ("Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato"),
    "toys": ("TeddyBear", "BasketBall"),
    "sports gear": ("BasketBall", "BaseballBat", "TennisRacket", "Dumbbell"),
    "sports equipment": ("BasketBall", "BaseballBat", "TennisRacket", "Dumbbell"),
    "gadgets": ("CellPhone", "Laptop", "RemoteControl", "Watch", "AlarmClock"),
    "electronics": ("CellPhone", "Laptop", "RemoteControl", "AlarmClock", "Television"),
    "devices": ("CellPhone", "Laptop", "RemoteControl"),
    "stationery": ("Pen", "Pencil"),
    "writing things": ("Pen", "Pencil"),
    "reading": ("Book", "Newspaper"),
    "reading material": ("Book", "Newspaper"),
    "decor": ("Vase", "Statue", "RoomDecor", "TableTopDecor"),
    "decorations": ("Vase", "Statue", "RoomDecor", "TableTopDecor"),
    "ornaments": ("Vase", "Statue", "TableTopDecor"),
    "toiletries": ("SoapBar", "SoapBottle", "ToiletPaper"),
    "cleaning supplies": ("SprayBottle", "DishSponge", "Cloth", "ScrubBrush"),
}
# Not a category: "the lights" stays the room's light switch (SYNONYMS); lamps are named as lamps.

# Landmark furniture: the large, fixed pieces of a home that people point things out by ("the lamp
# by the sofa", "the plant near the chest of drawers"), because a listener finds them at a glance
# and a room holds few of each. "The X by the Y" means the X whose nearest such piece (what the X
# stands on left out) is a Y: a speaker does not say "by the dresser" of a plant standing closer
# to the bed, and passes over side tables, chairs, counters, drawers and cabinets, which are too
# many and too alike to tell one X from another by. Read by the grounder's relation test
# (``planner.deterministic.fits_relation``); the named furniture always counts, listed or not.
LANDMARK_FURNITURE: frozenset[str] = frozenset({
    "Sofa", "Bed", "ArmChair", "TVStand", "Desk", "DiningTable", "Dresser", "Fridge", "Television",
    "CoffeeTable", "ShelvingUnit", "Toilet", "Sink", "Bathtub", "Window",
})

# Liquids THOR fills with, by phrase.
LIQUID_PHRASES: dict[str, str] = {"water": "water", "coffee": "coffee", "wine": "wine", "espresso": "coffee",
                                  "red wine": "wine", "white wine": "wine"}
# What "make a coffee" is served in when no vessel is named.
DEFAULT_VESSEL: dict[str, str] = {"coffee": "Mug", "water": "Cup", "wine": "Cup"}

# Verb classes: what a clause's leading verb asks for. Multi-word verbs (up to three words) are matched first.
VERBS: dict[str, str] = {}
for _cls, _words in {
    # put X on/in Y
    "place": "put place set leave stick drop toss throw lay stash store stow hang return pop slide position "
             "rest stack insert tuck shove dump load transfer arrange keep move relocate serve sit stand chuck "
             "prop lean perch park plonk plop bung pack deposit pile heap sling fling lob hurl squeeze nestle wedge "
             "shelve hide tidy",
    # bring/take X to ROOM (or to Y); without a destination: pick X up
    "bring": "bring take carry deliver transport fetch get grab collect gather retrieve give hand pass",
    "pick": "pick pickup",
    "hold": "hold",
    "slice": "slice cut chop dice crack halve quarter",
    "cook": "cook heat fry microwave toast bake boil roast grill warm saute poach scramble",
    "fill": "fill refill",
    "pour": "pour",
    "make": "make brew prepare fix",
    "water": "water",
    "empty": "empty",
    "clean": "clean wash rinse scrub wipe cleanse launder",
    "turn": "turn switch power flip click",
    "on": "light ignite start activate run boot",
    "off": "extinguish deactivate unplug stop kill",
    "open": "open unlock",
    "close": "close shut lock",
    "go": "go walk head navigate enter proceed come",
    "find": "find locate search look",
    "break": "break smash shatter",
    # into a bin where no place is named (the parser's ``_read_verb``)
    "discard": "discard bin trash",
}.items():
    for _w in _words.split():
        VERBS[_w] = _cls
MULTI_VERBS: dict[str, str] = {
    "pick up": "pick", "blow out": "off", "put out": "off", "snuff out": "off", "shut off": "off",
    "shut down": "off", "power down": "off", "power off": "off", "power on": "on", "power up": "on",
    "boot up": "on", "fire up": "on", "start up": "on", "heat up": "cook", "warm up": "cook",
    "look for": "find", "search for": "find", "hand over": "bring", "pass me": "bring", "hand me": "bring",
    "put away": "place", "put back": "place", "put down": "place", "set down": "place", "tidy away": "place",
    "wipe down": "clean", "clean up": "clean", "wash up": "clean", "open up": "open",
    "throw away": "discard", "throw out": "discard", "chuck away": "discard", "chuck out": "discard",
    "toss away": "discard", "toss out": "discard", "get rid of": "discard", "dispose of": "discard",
    "keep hold of": "hold", "hang on to": "hold", "hang onto": "hold",
}

# Politeness and filler that carry nothing, dropped before parsing (matched as whole words).
POLITE_PHRASES: frozenset[str] = frozenset({
    "please", "kindly", "could you", "can you", "would you", "will you", "could you please", "can you please",
    "would you please", "would you mind", "would you kindly", "i need you to", "i want you to",
    "i would like you to", "i'd like you to", "go ahead and", "make sure", "make sure that", "make sure to",
    "be sure to", "don't forget to", "do not forget to", "remember to", "try to", "for me", "thanks",
    "thank you", "if you can", "if possible", "i need", "i want", "i'd like", "i would like", "hey", "robot",
    "quickly", "carefully", "just", "also", "now", "right away", "as well", "too", "you should",
    "you need to", "let's", "we need to", "help me", "ok", "okay", "so", "gently", "please do", "real quick",
    "oh", "um", "uh", "that is all", "that is it", "that is everything",  # ("that's" is split before)
})
# Words that open a clause and carry order only.
SEQUENCERS = frozenset({"then", "next", "finally", "first", "firstly", "lastly", "afterwards", "afterward",
                        "and", "secondly", "thirdly", "last", "also", "or", "plus"})
SEQUENCER_PHRASES: tuple[tuple[str, ...], ...] = (
    ("after", "that"), ("after", "this"), ("once", "done"), ("when", "done"), ("once", "that", "is", "done"),
    ("when", "you", "are", "done"), ("when", "you're", "done"), ("and", "then"), ("after", "which"),
    ("as", "well", "as"), ("and", "also"), ("at", "the", "end"), ("last", "of", "all"), ("first", "of", "all"),
    ("to", "finish"), ("before", "anything", "else"),
)

NUMBERS: dict[str, int] = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                           "eight": 8, "nine": 9, "ten": 10, "couple": 2, "pair": 2, "both": 2, "dozen": 12}
DETERMINERS = frozenset({"a", "an", "the", "some", "my", "your", "our", "his", "her", "their", "any", "this",
                         "that", "these", "those", "another", "other", "its", "of", "all", "every", "each", "few",
                         "several"})
# Plural in form, one object in the house: "the keys" is a key chain, not every key chain.
ONE_OBJECT_PLURALS = frozenset({"keys", "scissors", "tongs", "pliers", "tweezers", "headphones", "earphones",
                                "binoculars", "pants", "trousers", "jeans", "shorts", "pyjamas", "pajamas"})
PRONOUNS = frozenset({"it", "them", "they", "those", "these", "that", "this", "one", "ones", "everything"})
# State words a clause may end with ("leave the TV on", "a laptop open") -> (predicate, value).
STATE_WORDS: dict[str, tuple[str, bool | str]] = {
    "on": ("isToggled", True), "off": ("isToggled", False), "lit": ("isToggled", True),
    "open": ("isOpen", True), "opened": ("isOpen", True), "closed": ("isOpen", False), "shut": ("isOpen", False),
    "sliced": ("isSliced", True), "cut": ("isSliced", True), "chopped": ("isSliced", True),
    "diced": ("isSliced", True), "cooked": ("isCooked", True), "toasted": ("isCooked", True),
    "fried": ("isCooked", True), "heated": ("isCooked", True), "clean": ("isDirty", False),
    "cleaned": ("isDirty", False), "washed": ("isDirty", False), "dirty": ("isDirty", True),
    "held": ("isHeld", True), "empty": ("isFilledWithLiquid", False), "emptied": ("isFilledWithLiquid", False),
    "filled": ("isFilledWithLiquid", True), "full": ("isFilledWithLiquid", True),
    "watered": ("isFilledWithLiquid", "water"),
    "running": ("isToggled", True), "going": ("isToggled", True),
    "broken": ("isBroken", True), "smashed": ("isBroken", True), "shattered": ("isBroken", True),
}
# Verb classes that ask for one state change made where the object stands -> (predicate, value).
# A predicate that one interaction makes true (household.interactions) is parsed from this row,
# its verbs in VERBS and its state words in STATE_WORDS: no parser code per predicate.
VERB_STATES: dict[str, tuple[str, bool]] = {"break": ("isBroken", True)}
# Multi-word prepositions first; each maps to its role.
PREPOSITIONS: dict[str, str] = {
    "on top of": "on", "onto": "on", "on to": "on", "on": "on", "upon": "on", "atop": "on",
    "inside of": "in", "inside": "in", "into": "in", "in": "in", "within": "in",
    "over to": "to", "to": "to", "towards": "to", "toward": "to", "back to": "to", "up to": "to",
    "from": "from", "off of": "from", "off": "from", "out of": "from", "from inside": "from",
    "with": "with", "using": "with", "at": "at", "by": "near", "next to": "near", "beside": "near",
    "besides": "near", "near": "near", "in front of": "near", "behind": "near", "under": "near",
    "underneath": "near", "below": "near", "beneath": "near", "above": "near", "over": "near",
    "across": "near", "around": "near", "between": "near", "of": "of",
}
COPULAS = frozenset({"is", "are", "be", "stays", "stay", "remains", "remain", "should", "must", "needs", "need",
                     "gets", "get", "got", "been", "being", "was", "were", "will", "to", "has", "have", "ends",
                     "up", "left", "kept", "switched"})


def camel_words(type_name: str) -> list[str]:
    """'RemoteControl' -> ['remote', 'control'], 'TVStand' -> ['tv', 'stand'], 'CD' -> ['cd']."""
    parts = re.findall(r"[A-Z]{2,}(?=[A-Z][a-z]|$)|[A-Z]?[a-z]+|[A-Z]+", type_name)
    return [p.lower() for p in parts]


def plural(word: str, informal: bool = False) -> str:
    """English plural of a single word, good enough for household nouns. ``informal``: the
    plural people often write for a consonant + y noun ("teddys", "candys"); the same word
    otherwise."""
    if informal and word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word + "s"
    irregular = {"knife": "knives", "shelf": "shelves", "loaf": "loaves", "potato": "potatoes",
                 "tomato": "tomatoes", "mouse": "mice", "leaf": "leaves"}
    if word in irregular:
        return irregular[word]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def type_phrases(type_name: str) -> list[str]:
    """Every phrase derived from a type name: split words, written together, and their plurals."""
    parts = camel_words(type_name)
    out = {" ".join(parts), "".join(parts)}
    for p in list(out):
        head = p.split(" ")
        out.add(" ".join(head[:-1] + [plural(head[-1])]))
    return sorted(out)
