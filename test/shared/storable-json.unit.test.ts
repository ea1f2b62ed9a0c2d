import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import fc from "fast-check";
import * as z from "zod";
import { Metadata, storableJson, storableJsonProblem } from "../../shared/storable-json";

// Storable JSON: what it accepts, DynamoDB's document client writes and reads back unchanged;
// what it refuses names where the value is wrong.

const hostileNumber = fc.oneof(
  fc.double({ noDefaultInfinity: false }),
  fc.constantFrom(1e300, -1e300, 5e-324, 1e-131, 2 ** 53, 2 ** 53 - 1, -(2 ** 53 - 1), 1e-130, 0),
);
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.string({ unit: "binary", maxLength: 12 }),
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(fc.string({ unit: "binary", maxLength: 6 }), tie("v"), { maxKeys: 3 }),
  ),
})).v;

describe("storable JSON", () => {
  it("accepts only what DynamoDB's document client stores and reads back as it was", () => {
    fc.assert(
      fc.property(value, (v) => {
        if (storableJsonProblem(v) !== undefined) return;
        // -0 is stored as 0: the same number to JSON.
        expect(JSON.stringify(unmarshall(marshall({ v })).v)).toBe(JSON.stringify(v));
      }),
      { numRuns: 2000 },
    );
  });

  it("names the place of what it refuses", () => {
    expect(storableJsonProblem({ a: [1, { b: 1e300 }] })).toMatch(/^a\[1\]\.b: numbers must be/);
    expect(storableJsonProblem({ a: 5e-324 })).toMatch(/^a: numbers/);
    expect(storableJsonProblem({ "k\ud800": 1 })).toMatch(/a key must be well-formed/);
    expect(storableJsonProblem({ a: "x\u0000" })).toMatch(/^a: must not contain NUL/);
    let deep: unknown = 1;
    for (let i = 0; i < 33; i++) deep = [deep];
    expect(storableJsonProblem(deep)).toMatch(/deeper than 32/);
    expect(storableJsonProblem({ n: 2 ** 53 - 1, m: 1e-130, s: "é", z: [null, true] })).toBeUndefined();
  });

  it("bounds the size as a too_big issue (answered <field>_too_large), and metadata at 64 KB", () => {
    const small = storableJson(z.unknown(), { maxBytes: 10 });
    expect(small.safeParse("12345678").success).toBe(true);
    expect(small.safeParse("123456789").error?.issues[0]?.code).toBe("too_big");
    expect(Metadata.safeParse({ a: "x".repeat(64 * 1024) }).success).toBe(false);
    expect(Metadata.safeParse({ a: "x".repeat(60 * 1024) }).success).toBe(true);
  });
});
