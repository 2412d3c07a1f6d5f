#!/usr/bin/env python3
"""Reference for cls_import_normalize (engine/data/import_normalize.c): docs/import.md's rules computed
with Python's unicodedata (NFKC, NFKD, general categories) and str.lower, independent of utf8proc.
Writes tests/fixtures/import_normalize.txt, one case a line, every field hex-encoded UTF-8:

    FLAGS INPUT EXPECTED        FLAGS: four 0/1 digits, keep_case keep_punctuation keep_digits normalize

The inputs use characters whose lower case is one character (str.lower's full mapping is then the
simple mapping utf8proc applies) and that Unicode 14 (Python 3.11) and 15 (utf8proc 2.8) agree on.

    python3 tests/ref/make_import_normalize_fixture.py
"""
import os
import unicodedata

CASES = [
    "She had your dark suit, in greasy wash-water all year!",
    "  Don\u2019t   stop\u2014ever\u2026 ",
    "\ufeffZero\u200bwidth and soft\u00adhyphen",
    "\"Quoted\" (parens) [brackets] {braces} \u00abguillemets\u00bb",
    "Tabs\tand\nnew\r\nlines\u00a0and\u3000spaces",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m",
    "Ma\u00f1ana se\u00f1or, \u00fcber Stra\u00dfe",
    "\ufb01ne \uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \u2460 \u00bd",
    "Emoji \U0001F600 and $5 + 3 = 8 \u20ac",
    "snake_case under_score",
    "\u0416\u0443\u0440\u043d\u0430\u043b \u0401\u043b\u043a\u0430",
    "\u0391\u03b8\u03ae\u03bd\u03b1 \u0386\u03bd\u03bd\u03b1",
    "e\u0301 combining acute, o\u0308 umlaut",
    "\u00d8resund \u0141\u00f3d\u017a Istanbul",
    "ABC d\u00e9f",
    "",
    "   ",
    "!!!",
    "It's the 1990s' hit",
    "\u0660\u0661 arabic-indic digits",
]


def normalise(text, keep_case, keep_punct, strip_marks):
    if strip_marks:
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.category(c).startswith("M"))
        text = unicodedata.normalize("NFC", text)
    else:
        text = unicodedata.normalize("NFKC", text)
    out, pending = [], False
    for c in text:
        cat = unicodedata.category(c)
        space = cat in ("Zs", "Zl", "Zp", "Cc")
        if cat == "Cf":
            continue
        if not space and not keep_punct:
            if c in "\u2019\u02bc":
                c = "'"
            if cat in ("Pd", "Pc"):
                space = True
            elif c != "'" and cat[0] in "PS":
                continue
        if space:
            pending = len(out) > 0
            continue
        if not keep_case:
            lower = c.lower()
            c = lower if len(lower) == 1 else c
        if pending:
            out.append(" ")
        pending = False
        out.append(c)
    return "".join(out)


def main():
    lines = ["# cls_import_normalize's cases (tests/ref/make_import_normalize_fixture.py): flags input expected, hex"]
    for flags in ("0000", "0001", "1000", "0100", "1101"):
        keep_case, keep_punct, _keep_digits, strip = (f == "1" for f in flags)
        for case in CASES:
            expected = normalise(case, keep_case, keep_punct, strip)
            lines.append("%s %s %s" % (flags, case.encode().hex() or "-", expected.encode().hex() or "-"))
    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "import_normalize.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d cases" % (path, len(lines) - 1))


if __name__ == "__main__":
    main()
