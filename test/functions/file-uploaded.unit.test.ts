import type { S3Event } from "aws-lambda";
import { createUploadNotificationHandler } from "../../functions/file-uploaded";
import type { Backends } from "../../shared/backends";
import { fileService } from "../../shared/files/service";

vi.mock("../../shared/files/service", async (actual) => ({
  ...(await actual<typeof import("../../shared/files/service")>()),
  fileService: vi.fn(),
}));

/** A record as S3's event notification documents it, with the key URL-encoded (spaces as +). */
const created = (key: string) => ({ eventName: "ObjectCreated:Put", s3: { object: { key, size: 1 } } });

describe("the upload notification", () => {
  afterAll(() => vi.mocked(fileService).mockReset());

  it("settles every well-formed record of an event, skipping (and logging) a malformed one wherever it is", async () => {
    const landed = vi.fn(async () => "ready" as const);
    vi.mocked(fileService).mockReturnValue({ landed } as never);
    const handler = createUploadNotificationHandler(() => ({}) as Backends);
    const event = {
      Records: [
        { eventName: "ObjectCreated:Put" },
        created("users/u/sessions/s/%E0%A4%A"),
        created("users/u/sessions/s/my+file"),
        { s3: {} },
      ],
    } as unknown as S3Event;
    await expect(handler(event)).resolves.toBeUndefined();
    expect(landed.mock.calls).toEqual([["users/u/sessions/s/my file"]]);
  });

  it("is retried whole when a record could not be settled, after trying the others", async () => {
    const landed = vi.fn(async (key: string) => {
      if (key.endsWith("a")) throw new Error("table unavailable");
      return "ready" as const;
    });
    vi.mocked(fileService).mockReturnValue({ landed } as never);
    const handler = createUploadNotificationHandler(() => ({}) as Backends);
    const event = { Records: [created("users/u/sessions/s/a"), created("users/u/sessions/s/b")] } as unknown as S3Event;
    await expect(handler(event)).rejects.toThrow("table unavailable");
    expect(landed).toHaveBeenCalledTimes(2);
  });
});
