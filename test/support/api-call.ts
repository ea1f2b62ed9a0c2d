/**
 * A JSON call to a local stack's API as `user` (the local stack takes the caller from x-user-id):
 * its status and parsed body (undefined when the answer has none). `url` is read at each call, as
 * the stack starts in a beforeAll.
 */
export const apiCaller = (url: () => string) => async (method: string, path: string, user: string, body?: unknown) => {
  const res = await fetch(`${url()}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-user-id": user },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
};
