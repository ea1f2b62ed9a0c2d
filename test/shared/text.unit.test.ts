import fc from "fast-check";
import {
  isStorableText,
  storableTextProblem,
  toStorableDeep,
  toStorableText,
  truncateCodePoints,
  truncateUtf8,
} from "../../shared/text";

// Any UTF-16 string, lone surrogates and NUL included ("binary" units span every code unit).
const anyString = fc.string({ unit: "binary", maxLength: 80 });
const wellFormed = fc.string({ unit: "grapheme", maxLength: 80 }).map((s) => s.replaceAll("\u0000", ""));

describe("storable text", () => {
  it("tells lone surrogates and NUL apart from well-formed text", () => {
    expect(storableTextProblem("a\ud800")).toMatch(/lone surrogate/);
    expect(storableTextProblem("\udc00a")).toMatch(/lone surrogate/);
    expect(storableTextProblem("a\u0000")).toMatch(/NUL/);
    expect(storableTextProblem("𝄞 \ufffd ok")).toBeUndefined();
    fc.assert(fc.property(wellFormed, (s) => isStorableText(s)));
  });

  it("makes any text storable, and leaves storable text as it is", () => {
    fc.assert(fc.property(anyString, (s) => isStorableText(toStorableText(s))));
    fc.assert(fc.property(wellFormed, (s) => toStorableText(s) === s));
    expect(toStorableDeep({ "k\ud800": ["v\u0000", 1, { n: "\udfff" }] })).toEqual({
      "k\ufffd": ["v", 1, { n: "\ufffd" }],
    });
  });

  it("truncates by code point, never inside a surrogate pair", () => {
    fc.assert(
      fc.property(wellFormed, fc.nat({ max: 100 }), (s, max) => {
        const cut = truncateCodePoints(s, max);
        expect(isStorableText(cut)).toBe(true);
        if ([...s].length <= max) expect(cut).toBe(s);
        else expect([...cut]).toHaveLength(max + 1); // max code points and the ellipsis
      }),
    );
    expect(truncateCodePoints("😀😀😀", 2)).toBe("😀😀…");
    expect(truncateCodePoints("😀😀", 2)).toBe("😀😀");
  });

  it("truncates to UTF-8 bytes at a character's start, the longest start that fits", () => {
    fc.assert(
      fc.property(wellFormed, fc.nat({ max: 300 }), (s, max) => {
        const cut = truncateUtf8(s, max);
        expect(s.startsWith(cut)).toBe(true);
        expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(max);
        // the longest: the next character would not have fitted
        const next = [...s.slice(cut.length)][0];
        if (next !== undefined) expect(Buffer.byteLength(cut + next)).toBeGreaterThan(max);
      }),
    );
    expect(truncateUtf8("😀😀", 7)).toBe("😀");
    expect(truncateUtf8("é", 1)).toBe("");
  });
});
