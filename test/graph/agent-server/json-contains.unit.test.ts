import { jsonContains } from "../../../graph/agent-server/json-contains";

describe("metadata filters contain as jsonb's @> does", () => {
  it("in any key order, nested and partial", () => {
    expect(jsonContains({ o: { a: 1, b: 2 } }, { o: { b: 2, a: 1 } })).toBe(true);
    expect(jsonContains({ o: { a: 1, b: 2 } }, { o: { a: 1 } })).toBe(true);
    expect(jsonContains({ o: { a: 1 } }, { o: { a: 1, b: 2 } })).toBe(false);
    expect(jsonContains({ tags: ["x", "y", "z"] }, { tags: ["z", "x"] })).toBe(true);
    expect(jsonContains({ tags: ["x"] }, { tags: ["q"] })).toBe(false);
    expect(jsonContains({ n: 1 }, { n: "1" })).toBe(false);
    expect(jsonContains({ n: null }, { n: null })).toBe(true);
    expect(jsonContains({}, { n: null })).toBe(false);
    expect(jsonContains({ a: 1 }, {})).toBe(true);
  });

  it("never reads a prototype's members as the value's", () => {
    expect(jsonContains({}, { toString: {} })).toBe(false);
    expect(jsonContains({ o: {} }, { o: { constructor: {} } })).toBe(false);
  });
});
