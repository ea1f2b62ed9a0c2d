import { useCallback, useEffect, useState } from "react";
import { api, describeError, path } from "../api";
import { ErrorNote } from "../ErrorNote";

interface SessionFile {
  file_id: string;
  name: string;
  kind: "data" | "image";
  status: "pending" | "ready" | "rejected";
  reason?: string;
  table?: string;
  columns?: Array<{ name: string; type: string }>;
  row_count?: number;
}

interface Props {
  user: string;
  threadId: string | null;
  /** the session to attach to: the current one, or a new one created for the file */
  ensureThread: () => Promise<string>;
}

const TYPES: Record<string, string> = {
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  jsonl: "application/jsonl",
  ndjson: "application/x-ndjson",
  parquet: "application/vnd.apache.parquet",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/**
 * A session's files (the attachments API, functions/files.ts): data files the agent queries with
 * SQL and images. Uploads take the presigned route the API gives (create, PUT, complete), as any
 * client must, since the API itself takes no file bodies.
 */
export function Attachments({ user, threadId, ensureThread }: Props) {
  const [files, setFiles] = useState<SessionFile[]>([]);
  const [previews, setPreviews] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<{ code: string; message: string }>();

  const load = useCallback(
    async (session: string | null) => {
      if (!session) return setFiles([]);
      try {
        setFiles((await api<{ files?: SessionFile[] }>(user, path`/api/sessions/${session}/files`)).files ?? []);
      } catch (err) {
        setProblem(describeError(err));
      }
    },
    [user],
  );
  useEffect(() => {
    void load(threadId);
  }, [load, threadId]);

  const attach = async (list: FileList | null) => {
    let session: string | null = threadId;
    for (const file of Array.from(list ?? [])) {
      try {
        session = await ensureThread();
        const mediaType =
          file.type || TYPES[file.name.split(".").pop()?.toLowerCase() ?? ""] || "application/octet-stream";
        const base = path`/api/sessions/${session}/files`;
        const created = await api<{ file_id: string; upload_url: string; headers: Record<string, string> }>(
          user,
          base,
          { method: "POST", body: JSON.stringify({ name: file.name, media_type: mediaType, bytes: file.size }) },
        );
        // The headers are signed into the URL (its type, and If-None-Match: the file is written once).
        const put = await fetch(created.upload_url, { method: "PUT", headers: created.headers, body: file });
        if (!put.ok) throw new Error(`the upload was refused (${put.status})`);
        const done = await api<SessionFile>(user, path`/api/sessions/${session}/files/${created.file_id}/complete`, {
          method: "POST",
        });
        if (done.kind === "image") setPreviews((p) => ({ ...p, [done.file_id]: URL.createObjectURL(file) }));
        setFiles((prev) => [...prev.filter((f) => f.file_id !== done.file_id), done]);
        setProblem(undefined);
      } catch (err) {
        setProblem(describeError(err));
      }
    }
    // The server's list last: a load the new session started may have answered before these files were done.
    // (by the session itself: this closure may predate the prop that names a session it created)
    await load(session);
  };

  return (
    <div className="attachments">
      <label htmlFor="attach">Attach a data file (CSV, TSV) or an image</label>
      <input
        id="attach"
        type="file"
        multiple
        accept=".csv,.tsv,.jsonl,.ndjson,.parquet,image/png,image/jpeg,image/gif,image/webp"
        onChange={(e) => {
          void attach(e.target.files);
          e.target.value = "";
        }}
      />
      {problem && <ErrorNote error={problem} />}
      {files.length > 0 && (
        <ul className="files" aria-label="Files of this session">
          {files.map((f) => (
            <li key={f.file_id} className="file" data-testid="attachment">
              {previews[f.file_id] && <img src={previews[f.file_id]} alt={`Preview of ${f.name}`} />}
              <span className="file-name">{f.name}</span>{" "}
              <span
                className={`badge status-${f.status === "ready" ? "ingested" : f.status === "rejected" ? "failed" : "none"}`}
              >
                {f.status}
              </span>
              {f.kind === "data" && f.status === "ready" && (
                <span className="meta">
                  {" "}
                  table <code>{f.table}</code>, {f.row_count} rows:{" "}
                  {f.columns?.map((c) => `${c.name} ${c.type}`).join(", ")}
                </span>
              )}
              {f.reason && <span className="meta"> {f.reason}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
