/**
 * Completion webhooks (the Agent Server API's `webhook` on a run): where they may go, and the
 * message that carries one to the webhook sender (functions/webhook-sender.ts).
 *
 * Only to hosts the deployment allows (WEBHOOK_HOSTS, set at deploy): a run's creator must not make
 * this account's functions call anywhere they like (an internal address, another tenant's endpoint).
 * HTTPS, except for a loopback host (a developer's own machine).
 */
export const WEBHOOK_MAX_ATTEMPTS = 5;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The allow-list as configured: comma-separated host names, each with an optional port. */
export function parseWebhookHosts(setting: string | undefined): string[] {
  return (setting ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h.length > 0);
}

/** Why a webhook URL may not be called, or undefined when it may. */
export function webhookProblem(url: string, allowed: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "webhook must be an absolute URL";
  }
  if (parsed.username || parsed.password) return "webhook must not carry credentials";
  const loopback = LOOPBACK.has(parsed.hostname);
  if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && loopback))
    return "webhook must be https (http only for localhost)";
  if (allowed.length === 0) return "this deployment allows no webhooks (WEBHOOK_HOSTS)";
  const host = parsed.host.toLowerCase();
  if (!allowed.includes(host) && !allowed.includes(parsed.hostname.toLowerCase()))
    return `webhook host ${host.slice(0, 255)} is not one this deployment allows (WEBHOOK_HOSTS)`;
  return undefined;
}

/** What the sender's queue carries: the URL, the finished run as LangGraph's servers post it, the attempt. */
export interface WebhookMessage {
  url: string;
  payload: Record<string, unknown>;
  attempt: number;
}

/** The wait before the next attempt after `attempt` failed: 5 s, 20 s, 80 s, 320 s, then SQS's 900 s cap. */
export const webhookBackoffSeconds = (attempt: number) => Math.min(900, 5 * 4 ** (attempt - 1));
