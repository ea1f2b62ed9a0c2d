import fc from "fast-check";
import { newestWithin, resultBytes } from "../../shared/response-bytes";

// What Lambda counts against its 6 MB cap is the result as JSON: the body a JSON string in it, with
// its quotes, and each quote, backslash and newline inside escaped. A page measured without the
// body's own two quotes came out 1-2 bytes over its budget.
describe("a page of a history, as Lambda counts it", () => {
  it("counts the body as a JSON string, its quotes and escapes too", () => {
    expect(resultBytes("[]")).toBe(4);
    expect(resultBytes('["a\\"b"]')).toBe(Buffer.byteLength(JSON.stringify('["a\\"b"]')));
  });

  it("is the newest items that fit, and one more would not", () => {
    const item = fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.string({ maxLength: 60 }) });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 30 }), fc.integer({ min: 4, max: 600 }), (items, maxBytes) => {
        const { start, page } = newestWithin(items, maxBytes);
        expect(page).toEqual(items.slice(start));
        if (items.length === 0) return;
        expect(page.length).toBeGreaterThan(0);
        if (page.length > 1) expect(resultBytes(JSON.stringify(page))).toBeLessThanOrEqual(maxBytes);
        if (start > 0) expect(resultBytes(JSON.stringify(items.slice(start - 1)))).toBeGreaterThan(maxBytes);
      }),
      { numRuns: 500 },
    );
  });
});
