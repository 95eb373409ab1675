"""The modelled warm-up hours per TiB (issue 36 §4): prints docs/hours-per-tib.md's table, or writes it.

    .venv/bin/python benchmarks/hours_per_tib.py [--write]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cutover_prep.estimate.tib_table import markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "hours-per-tib.md"
BEGIN, END = "<!-- table: benchmarks/hours_per_tib.py -->", "<!-- end of table -->"


def page_with_table(page: str) -> str:
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{markdown()}{END}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC}")
    args = parser.parse_args()
    if args.write:
        DOC.write_text(page_with_table(DOC.read_text()))
        print(f"wrote {DOC}")
    else:
        print(markdown())


if __name__ == "__main__":
    main()
