"""Write the JSON Schema of every ``--json`` result kind into indexcheck/output/schemas/.

Run after changing a result dataclass: ``python scripts/write_schemas.py``; review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

from indexcheck.commands.schemas import all_schemas

OUT = Path(__file__).resolve().parents[1] / "indexcheck" / "output" / "schemas"


def render(schema: dict[str, object]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    for kind, schema in all_schemas().items():
        (OUT / f"{kind}.schema.json").write_text(render(schema), encoding="utf-8")
        print(f"wrote {kind}.schema.json")


if __name__ == "__main__":
    main()
