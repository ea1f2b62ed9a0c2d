import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";

const cosine = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);

describe("hashing embedder (offline stand-in for Titan v2)", () => {
  const embedder = new HashingEmbeddings(1024);

  it("has Titan v2's dimension and unit length", async () => {
    const [v] = await embedder.embedDocuments(["The refund policy allows returns within 30 days."]);
    expect(v).toHaveLength(1024);
    expect(Math.sqrt(cosine(v!, v!))).toBeCloseTo(1, 10);
  });

  it("is deterministic", async () => {
    expect(await embedder.embedQuery("hello world")).toEqual(await embedder.embedQuery("hello world"));
  });

  it("ranks lexically related text above unrelated text, tolerating inflections", async () => {
    const query = await embedder.embedQuery("how do refunds work?");
    const related = await embedder.embedQuery("Our refund policy: refunds are issued within 30 days.");
    const unrelated = await embedder.embedQuery("The office is closed on public holidays.");
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.1);
  });

  it("embeds empty text as the zero vector instead of NaN", async () => {
    expect((await embedder.embedQuery("")).every((x) => x === 0)).toBe(true);
  });
});
