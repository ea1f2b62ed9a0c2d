import { invokeAsync } from "../../../infra/local/async-invoke";

// The bucket's notification invokes the upload function asynchronously: Lambda retries a failed
// invocation twice, then drops the event. Locally it was run once, its failure only logged, so an
// upload whose check found the data engine busy stayed pending until the client called complete.

it("retries a failed invocation twice, as Lambda's asynchronous invocation does, then reports it", async () => {
  const attempts: number[] = [];
  const failures: unknown[] = [];
  await invokeAsync(
    async () => {
      attempts.push(attempts.length);
      throw new Error("busy");
    },
    { delaysMs: [1, 1], onFailure: (err) => failures.push(err) },
  );
  expect(attempts).toHaveLength(3);
  expect(failures).toHaveLength(1);
});

it("stops at the first invocation that succeeds", async () => {
  let calls = 0;
  const failures: unknown[] = [];
  await invokeAsync(
    async () => {
      if (++calls === 1) throw new Error("busy");
    },
    { delaysMs: [1, 1], onFailure: (err) => failures.push(err) },
  );
  expect(calls).toBe(2);
  expect(failures).toEqual([]);
});
