#!/usr/bin/env python3
"""Writes test/text/fixtures/casefold-python.json: tricky strings and the normalization
key Python computes for them, so the TypeScript tests can check normalizeKey against
Python without needing Python at run time.

key(s) = re.sub(r"\\s+", " ", unicodedata.normalize("NFKC", s).casefold()).strip()

Only code points assigned in this Python's Unicode database are used, so the fixture
stays valid for any newer Unicode version (normalization and case folding of assigned
characters are stable). Run once; the JSON is committed.
"""
import json
import pathlib
import random
import re
import sys
import unicodedata


def key(s: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s).casefold()).strip()


def assigned(lo: int, hi: int) -> list:
    return [chr(c) for c in range(lo, hi + 1)
            if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"]


WHITESPACE = [chr(c) for c in range(0x110000)
              if not 0xD800 <= c <= 0xDFFF and chr(c).isspace()]
NOT_WHITESPACE = ["\ufeff", "\u200b", "\u200c", "\u200d", "\u2060", "\u180e"]

POOLS = {
    "greek": assigned(0x0370, 0x03FF) + assigned(0x1F00, 0x1FFF),
    "armenian": assigned(0x0531, 0x058A) + assigned(0xFB13, 0xFB17),
    "cherokee": assigned(0x13A0, 0x13FD) + assigned(0xAB70, 0xABBF),
    "latin_ext": assigned(0x00C0, 0x024F) + assigned(0x1E00, 0x1EFF) + assigned(0x2C60, 0x2C7F)
    + assigned(0xA720, 0xA7FF),
    "ligatures": assigned(0xFB00, 0xFB06) + ["\u0132", "\u0133", "\u01c4", "\u01c5", "\u01c6",
                                             "\u01f1", "\u01f2", "\u01f3", "\u0152", "\u0153"],
    "fullwidth": assigned(0xFF01, 0xFF5E) + assigned(0xFF61, 0xFFEE),
    "combining": assigned(0x0300, 0x036F),
    "cjk_hangul": assigned(0x4E00, 0x4E40) + assigned(0xAC00, 0xAC40) + assigned(0x1100, 0x1112)
    + assigned(0x1161, 0x1175) + assigned(0x3131, 0x318E),
    "compat": assigned(0x2150, 0x218B) + assigned(0x2460, 0x24FF) + assigned(0x3300, 0x3357)
    + assigned(0x1D400, 0x1D433) + ["\u212a", "\u2126", "\u212b", "\u2122", "\u00b5", "\u00aa",
                                     "\u00b2", "\u2075", "\u2082", "\u017f", "\u1e9e", "\u0130",
                                     "\u0131", "\u03c2", "\u03a3", "\u0345", "\u1fbe"],
    "other_case": assigned(0x10400, 0x1044F) + assigned(0x1E900, 0x1E943)
    + assigned(0x10A0, 0x10FF) + assigned(0x1C90, 0x1CBF) + assigned(0x0400, 0x052F)
    + assigned(0x2C00, 0x2C5F) + assigned(0x1C80, 0x1C88),
    "ascii": [chr(c) for c in range(0x21, 0x7F)],
    "whitespace": WHITESPACE + NOT_WHITESPACE,
}

FIXED = [
    "",
    " ",
    "ＵＳＥ  Python\n",
    "use python",
    "USE PYTHON",
    "straße",
    "STRASSE",
    "Straße",
    "ﬁle",
    "ﬃ ﬄ ﬀ ﬂ ﬅ ﬆ",
    "ΟΔΥΣΣΕΥΣ",
    "ὀδυσσεύς",
    "ΑΣ",
    "ας",
    "σς Σ",
    "ẞ",
    "ꭰꭱꭲ",
    "ᏸᏹᏺᏻᏼᏽ",
    "ᎠᎡᎢ",
    "µ",
    "μ",
    "Μ",
    "\u3000a\u00a0b\u2028c\u0085d\u001ce\u001df\u001eg\u001fh\u3000",
    "\ufeffhello\ufeff",
    "a\ufeff b",
    "a\u200bb",
    "\t\n\v\f\r x \t\n\v\f\r",
    "Ｈｅｌｌｏ　Ｗｏｒｌｄ",
    "ｶﾀｶﾅ ﾊﾟﾋﾟ",
    "İstanbul",
    "ıI",
    "Å Å Å",
    "K K",
    "Ω Ω",
    "ǅungla Ǆ ǆ",
    "ŉ",
    "ǰ",
    "ΐ ΰ",
    "ᾳ ᾼ ῳ ῼ ᾀ ᾈ",
    "ͅ",
    "ᾷ",
    "և ﬓ ﬔ",
    "Ⅻ ⅻ",
    "Ⓐⓑ",
    "𝐀𝐁𝐂",
    "𐐀𐐨",
    "𞤀𞤢",
    "Ⴀ ⴀ",
    "Ა",
    "Ⰰ",
    "ᲀᲁᲂ",
    "㍿ ㌀",
    "½ ⅓",
    "x² x₂",
    "e\u0301 \u00e9",
    "\u1100\u1161\u11a8",
    "hello\u00a0\u00a0world",
    "tab\there",
    "line1\r\nline2",
    "   leading and trailing   ",
    "\u2029para\u2029",
    "\u1680ogham\u1680",
    "\u202fnnbsp\u205fmmsp",
    "世界 HELLO",
    "🚀 ROCKET",
    "👨‍👩‍👧‍👦 FAMILY",
    "ǈ ǉ Ǉ",
    "ϐϑϕϖϰϱϵ",
    "ᲈ",
    "ẖẗẘẙẚẛ",
]


def main() -> None:
    rng = random.Random(20260817)
    cases = list(FIXED)
    names = sorted(POOLS)
    # Strings mostly from one script, sprinkled with whitespace and case variety.
    for name in names:
        for _ in range(25):
            n = rng.randint(1, 12)
            parts = []
            for _ in range(n):
                r = rng.random()
                if r < 0.7:
                    parts.append(rng.choice(POOLS[name]))
                elif r < 0.85:
                    parts.append(rng.choice(POOLS["whitespace"]))
                else:
                    parts.append(rng.choice(POOLS[rng.choice(names)]))
            cases.append("".join(parts))
    # Fully mixed strings.
    for _ in range(150):
        n = rng.randint(1, 20)
        cases.append("".join(rng.choice(POOLS[rng.choice(names)]) for _ in range(n)))
    # Every single character of the smaller pools, upper- and lower-cased.
    for name in ["ligatures", "compat", "whitespace"]:
        for ch in POOLS[name]:
            cases.append(ch)
            cases.append("A" + ch + "Z")

    seen = set()
    rows = []
    for s in cases:
        if s in seen:
            continue
        seen.add(s)
        rows.append({"input": s, "key": key(s)})
    out = {
        "generator": "scripts/gen-casefold-fixture.py",
        "python": sys.version.split()[0],
        "unicode": unicodedata.unidata_version,
        "cases": rows,
    }
    path = pathlib.Path(__file__).resolve().parent.parent / "test/text/fixtures/casefold-python.json"
    path.write_text(json.dumps(out, ensure_ascii=True, indent=2) + "\n")
    print(len(rows), "cases ->", path)


if __name__ == "__main__":
    main()
