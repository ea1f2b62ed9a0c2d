import { JsonTextError, jsonDepth, MAX_JSON_DEPTH, parseJsonText } from "../../shared/json-text";

describe("a request body's JSON text", () => {
  it("is measured for depth outside its strings, escaped quotes included", () => {
    expect(jsonDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonDepth('{"a":"[[[[{{{{","b":"\\"[[["}')).toBe(1);
    expect(jsonDepth("1")).toBe(0);
  });

  it("nested past the limit is refused before it is parsed; at the limit it parses", () => {
    const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH + 1))).toThrow(JsonTextError);
    expect(() => parseJsonText(nested(100_000))).toThrow(/deeper than/);
  });

  it("refuses __proto__ as a key at any depth, escaped or not, but not as a value; other keys pass", () => {
    expect(() => parseJsonText('{"__proto__":{}}')).toThrow(/__proto__/);
    expect(() => parseJsonText('{"a":[{"__proto__":1}]}')).toThrow(/__proto__/);
    expect(() => parseJsonText('{"\\u005f_proto__":1}')).toThrow(/__proto__/);
    expect(parseJsonText('{"a":"__proto__","constructor":"Mercedes"}')).toEqual({
      a: "__proto__",
      constructor: "Mercedes",
    });
  });
});
