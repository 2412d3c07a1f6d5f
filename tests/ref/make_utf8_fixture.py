#!/usr/bin/env python3
"""Reference for engine/base/utf8.c: Python's own strict UTF-8 codec (bytes.decode("utf-8"), which
follows RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF) decides each byte string.
Writes tests/fixtures/utf8_cases.txt, one case a line:

    HEX-BYTES ok CP1,CP2,...     (the string decodes to these codepoints, hex)
    HEX-BYTES bad                (Python refuses it)

The strings: every single byte; every lead byte followed by each of a set of second bytes around the
continuation range's edges; three- and four-byte sequences over the leads that take them (and their
neighbours) with continuation bytes at the edges of the ranges that decide overlong forms, surrogates
and U+10FFFF; a few multi-character strings.

    python3 tests/ref/make_utf8_fixture.py    (the standard library only)
"""
import os

EDGES2 = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
EDGES = [0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0]


def cases():
    for a in range(256):
        yield bytes([a])
    for a in range(256):
        for b in EDGES2:
            yield bytes([a, b])
    for a in [0xC2, 0xDF] + list(range(0xE0, 0xF0)) + [0xF0, 0xF4, 0xF5]:
        for b in EDGES:
            for c in [0x7F, 0x80, 0xBF, 0xC0]:
                yield bytes([a, b, c])
    for a in [0xEF] + list(range(0xF0, 0xF8)):
        for b in EDGES:
            for c in [0x80, 0xBF]:
                for d in [0x7F, 0x80, 0xBF, 0xC0]:
                    yield bytes([a, b, c, d])
    for s in ["a\u00e9\u20ac\U0001F600", "\u0416\u0436 \u4e2d\u6587", "\U0010FFFF\uFFFD\u007F"]:
        yield s.encode("utf-8")
    yield "ab".encode() + b"\xe2\x82"  # a sequence cut by the end of the text


def main():
    out = os.path.join(os.path.dirname(__file__), "..", "fixtures", "utf8_cases.txt")
    seen = set()
    lines = []
    for b in cases():
        if b in seen:
            continue
        seen.add(b)
        try:
            text = b.decode("utf-8")
            lines.append("%s ok %s" % (b.hex(), ",".join("%X" % ord(ch) for ch in text)))
        except UnicodeDecodeError:
            lines.append("%s bad" % b.hex())
    with open(out, "w") as f:
        f.write("# engine/base/utf8.c's cases, decided by Python's strict codec (tests/ref/make_utf8_fixture.py)\n")
        f.write("\n".join(lines) + "\n")
    print("%s: %d cases, %d valid" % (out, len(lines), sum(1 for l in lines if " ok " in l)))


if __name__ == "__main__":
    main()
