/** The knowledge admin API as the CLI calls it (functions/knowledge.ts), on the local stack or a deployment. */
export interface KbDocument {
  source: string;
  status: "processing" | "ingested" | "skipped" | "failed" | "deleted";
  reason?: string;
  bytes: number | null;
  chunks: number;
  content_type: string | null;
  updated_at: string;
  sequencer: string | null;
  etag: string | null;
}

export interface KbChunk {
  index: number;
  headings: string | null;
  preview: string;
  chars: number;
}

export interface KbMatch {
  source: string;
  content: string;
  score: number;
}

export class KbApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

export interface KbTarget {
  /** the API's base URL, e.g. http://localhost:3000 or https://<api>/v1 */
  api: string;
  /** a bearer JWT of an admin, or an API key ("ApiKey <key>" is sent as is); none on the local stack */
  token?: string;
}

export class KbClient {
  constructor(private readonly target: KbTarget) {}

  /** Every document, a page at a time. */
  async list(): Promise<KbDocument[]> {
    const all: KbDocument[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ limit: "1000", ...(cursor ? { cursor } : {}) });
      const page = await this.call<{ documents: KbDocument[]; next_cursor?: string }>(
        "GET",
        `/api/knowledge/documents?${query}`,
      );
      all.push(...page.documents);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** One document; `chunks` is then the list of its chunks' previews. */
  show(source: string): Promise<Omit<KbDocument, "chunks"> & { chunks: KbChunk[] }> {
    return this.call("GET", `/api/knowledge/documents/${encodeURIComponent(source)}`);
  }

  remove(source: string): Promise<unknown> {
    return this.call("DELETE", `/api/knowledge/documents/${encodeURIComponent(source)}`);
  }

  async search(q: string, limit = 5): Promise<KbMatch[]> {
    const query = new URLSearchParams({ q, limit: String(limit) });
    return (await this.call<{ results: KbMatch[] }>("GET", `/api/knowledge/search?${query}`)).results;
  }

  /** Uploads through a presigned PUT (the bytes never pass through the API). */
  async upload(source: string, body: Uint8Array): Promise<void> {
    const granted = await this.call<{ upload_url: string; headers: Record<string, string> }>(
      "POST",
      "/api/knowledge/uploads",
      { source, bytes: body.byteLength },
    );
    const put = await fetch(granted.upload_url, { method: "PUT", headers: granted.headers, body });
    if (!put.ok) throw new KbApiError(put.status, "upload_failed", `the storage refused the upload of ${source}`);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    const token = this.target.token;
    if (token) headers.authorization = /^(ApiKey|Bearer) /.test(token) ? token : `Bearer ${token}`;
    // The local stack has no authorizer: it takes the user and the admin role from headers.
    else Object.assign(headers, { "x-user-id": "kb-cli", "x-user-role": "admin" });
    const res = await fetch(`${this.target.api.replace(/\/+$/, "")}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!res.ok) {
      const error = (parsed.error ?? {}) as { code?: string; message?: string };
      throw new KbApiError(res.status, error.code ?? "error", error.message ?? (text || res.statusText));
    }
    return parsed as T;
  }
}
