import type { ServerResponse } from "node:http";
import { MAX_RESPONSE_BYTES, sendProxyResult } from "../../../infra/local/api-gateway";

// The local gateway answers as API Gateway does when a function's response is over Lambda's 6 MB
// synchronous cap: 502, so a route that could answer more is caught locally, not in AWS.

function capture() {
  const sent: { status?: number; body?: string } = {};
  const res = {
    writeHead: (status: number) => {
      sent.status = status;
      return res;
    },
    end: (body: Buffer | string) => {
      sent.body = body.toString();
    },
  } as unknown as ServerResponse;
  return { res, sent };
}

describe("the local gateway's response cap", () => {
  it("passes a response at the cap's edge and answers 502 for one past it", () => {
    const under = capture();
    const body = "x".repeat(MAX_RESPONSE_BYTES - 200);
    sendProxyResult(under.res, { statusCode: 200, body });
    expect(under.sent).toMatchObject({ status: 200 });
    expect(under.sent.body).toHaveLength(body.length);

    const over = capture();
    sendProxyResult(over.res, { statusCode: 200, body: "é".repeat(MAX_RESPONSE_BYTES / 2) });
    expect(over.sent).toEqual({ status: 502, body: JSON.stringify({ message: "Internal server error" }) });
  });
});
