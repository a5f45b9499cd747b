# Each line below that the test names must be a type error (mypy --strict).
from isobox import Isobox


def misuse(box: Isobox) -> None:
    a: int = box.execute("python", "1")["run"]["stdout"]
    b = box.execute("python", "1", limit={"wallTimeMs": 1})
    c: str = box.memory.get("k")["value"]
    d = box.memory.put("k", 1, ttl="1")
    e: int = box.create_volume("v", "16M").info["sizeBytes"]
