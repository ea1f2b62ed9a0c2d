import { parseWebhookHosts, webhookBackoffSeconds, webhookProblem } from "../../shared/webhooks";

describe("webhook hosts", () => {
  const allowed = parseWebhookHosts(" hooks.example.com, api.partner.io:8443 ,localhost");

  it("allows https to a listed host (any port unless the entry names one), and http only to loopback", () => {
    expect(allowed).toEqual(["hooks.example.com", "api.partner.io:8443", "localhost"]);
    expect(webhookProblem("https://hooks.example.com/run-done?x=1", allowed)).toBeUndefined();
    expect(webhookProblem("https://HOOKS.example.com:444/x", allowed)).toBeUndefined();
    expect(webhookProblem("https://api.partner.io:8443/x", allowed)).toBeUndefined();
    expect(webhookProblem("http://localhost:3000/hook", allowed)).toBeUndefined();
  });

  it.each([
    ["not a URL", "hooks.example.com/x", /absolute URL/],
    ["plain http to a public host", "http://hooks.example.com/x", /https/],
    ["another scheme", "file:///etc/passwd", /https/],
    ["ftp", "ftp://hooks.example.com/x", /https/],
    ["credentials", "https://user:pw@hooks.example.com/x", /credentials/],
    ["an unlisted host", "https://evil.example.net/x", /not one this deployment allows/],
    ["a look-alike suffix", "https://hooks.example.com.evil.net/x", /not one/],
    ["a listed host's other port", "https://api.partner.io:9000/x", /not one/],
    ["the metadata service", "http://169.254.169.254/latest/meta-data", /https/],
    ["an internal address over https", "https://10.0.0.1/x", /not one/],
    ["loopback by IPv6, unlisted", "http://[::1]:80/x", /not one/],
  ])("refuses %s", (_, url, reason) => {
    expect(webhookProblem(url, allowed)).toMatch(reason);
  });

  it("refuses every webhook when the deployment lists no host", () => {
    expect(webhookProblem("https://hooks.example.com/x", parseWebhookHosts(undefined))).toMatch(/allows no webhooks/);
    expect(webhookProblem("https://hooks.example.com/x", parseWebhookHosts(" , "))).toMatch(/allows no webhooks/);
  });

  it("backs off 5 s, 20 s, 80 s, 320 s, then at SQS's 900 s cap", () => {
    expect([1, 2, 3, 4, 5, 6].map(webhookBackoffSeconds)).toEqual([5, 20, 80, 320, 900, 900]);
  });
});
