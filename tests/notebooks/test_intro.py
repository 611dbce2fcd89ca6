"""The introduction's chapter plan names every chapter of the book, in the order of _toc.yml."""
import re
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_chapter_plan_lists_every_chapter_in_order():
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters = [Path(entry["file"]).name for entry in toc["chapters"]
                if re.fullmatch(r"ch\d+_\w+", Path(entry["file"]).name)]
    intro = (REPO_ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    plan = intro.split("## Chapter plan", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\d+\. \*\*\{doc\}`[^`<]*<(ch\d+_\w+)>`\*\*", plan, flags=re.M)
    assert listed == chapters, (listed, chapters)
