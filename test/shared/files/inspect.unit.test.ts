import { describe, expect, it } from "vitest";
import { inspectFile } from "../../../shared/files/data-inspect";
import { textOf } from "../../../shared/files/inspect";
import { pngBytes } from "../../support/images";

const png = pngBytes;

describe("inspectFile", () => {
  it("reads an image's real type and dimensions from its bytes, whatever it claims", async () => {
    expect(await inspectFile(png(3, 2), { name: "a.jpg", media_type: "image/jpeg" }, 10)).toEqual({
      ok: true,
      kind: "image",
      media_type: "image/png",
      width: 3,
      height: 2,
    });
  });

  it("rejects bytes that are no accepted image", async () => {
    const out = await inspectFile(Buffer.from("GIF87 but not really"), { name: "a.gif", media_type: "image/gif" }, 10);
    expect(out).toMatchObject({ ok: false, reason: expect.stringMatching(/checked by its bytes/) });
  });

  it("loads a TSV with typed columns", async () => {
    const out = await inspectFile(
      Buffer.from("a\tb\n1\tx\n2\ty\n"),
      { name: "t.tsv", media_type: "text/tab-separated-values" },
      10,
    );
    expect(out).toMatchObject({
      ok: true,
      kind: "data",
      format: "tsv",
      table: "t",
      row_count: 2,
      columns: [
        { name: "a", type: "BIGINT" },
        { name: "b", type: "VARCHAR" },
      ],
    });
  });

  it("reads a CSV that is not UTF-8 as Windows-1252, leaving its bytes as they are", async () => {
    const latin = Buffer.from("city,n\nZürich,1\n", "latin1");
    const out = await inspectFile(latin, { name: "c.csv", media_type: "text/csv" }, 10);
    expect(out).toMatchObject({ ok: true, encoding: "windows-1252", row_count: 1 });
    expect(Buffer.from(textOf(latin, "windows-1252")).toString("utf8")).toBe("city,n\nZürich,1\n");
    expect(textOf(latin, undefined)).toBe(latin);
  });

  it("rejects a data file over the row limit, and binary data", async () => {
    const rows = `n\n${Array.from({ length: 11 }, (_, i) => i).join("\n")}\n`;
    expect(await inspectFile(Buffer.from(rows), { name: "n.csv", media_type: "text/csv" }, 10)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/more than 10 rows/),
    });
    expect(await inspectFile(png(1, 1), { name: "x.csv", media_type: "text/csv" }, 10)).toMatchObject({ ok: false });
  });
});
