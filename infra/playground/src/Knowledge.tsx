import { type DragEvent, type FormEvent, useState } from "react";
import { api, describeError, errorFrom, type KnowledgeDocument, type KnowledgeHit, path } from "./api";
import { ErrorNote } from "./ErrorNote";
import { usePolling } from "./usePolling";

type Problem = { code: string; message: string };

/** The local stack takes the admin role from this header; in AWS the authorizer gives it (shared/identity.ts). */
const ADMIN = { headers: { "x-user-role": "admin" } };

/**
 * The knowledge base as an admin sees it, through the knowledge admin API (functions/knowledge.ts):
 * documents with their status, chunks and skip or failure reason; upload through a presigned PUT
 * (locally into the drop folder, ingested as an S3 upload is) and delete; and a search that runs
 * search_knowledge_base itself, so the chunks and scores are the agent's.
 */
export function Knowledge({ user }: { user: string }) {
  const [problem, setProblem] = useState<Problem>();
  const [dragging, setDragging] = useState(false);
  // The first page only, polled: a large knowledge base is listed whole by `npm run kb -- ls`.
  const docs = usePolling(
    () => api<{ documents: KnowledgeDocument[]; next_cursor?: string }>(user, "/api/knowledge/documents", ADMIN),
    2000,
    "documents",
  );

  const upload = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      try {
        // The admin API presigns a PUT into the documents bucket (locally: the drop folder).
        const granted = await api<{ upload_url: string; headers: Record<string, string> }>(
          user,
          "/api/knowledge/uploads",
          { ...ADMIN, method: "POST", body: JSON.stringify({ source: file.name, bytes: file.size }) },
        );
        const put = await fetch(granted.upload_url, { method: "PUT", headers: granted.headers, body: file });
        if (!put.ok) throw errorFrom(put.status, await put.text());
        setProblem(undefined);
      } catch (err) {
        setProblem(describeError(err));
      }
    }
    await docs.refresh();
  };

  const remove = async (source: string) => {
    try {
      await api(user, path`/api/knowledge/documents/${source}`, { ...ADMIN, method: "DELETE" });
      await docs.refresh();
    } catch (err) {
      setProblem(describeError(err));
    }
  };

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    void upload(event.dataTransfer.files);
  };

  return (
    <section aria-labelledby="knowledge-heading">
      <h2 id="knowledge-heading">Knowledge base</h2>
      <fieldset
        className={`dropzone${dragging ? " dragging" : ""}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <legend>Upload</legend>
        <label htmlFor="knowledge-upload">
          Choose documents (.md, .txt, .html, .json, .pdf, .docx), or drop them here
        </label>
        <input id="knowledge-upload" type="file" multiple onChange={(e) => void upload(e.target.files)} />
      </fieldset>
      {problem && <ErrorNote error={problem} />}
      {docs.error && <ErrorNote error={docs.error} />}
      <table className="documents">
        <caption>
          Documents
          {docs.data?.next_cursor && ` (the first ${docs.data.documents.length}; npm run kb -- ls lists them all)`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Document</th>
            <th scope="col">Status</th>
            <th scope="col">Chunks</th>
            <th scope="col">Reason</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {docs.data?.documents.map((d) => (
            <tr key={d.source} data-testid="document">
              <th scope="row">{d.source}</th>
              <td>
                <span className={`badge status-${d.status ?? "none"}`}>{d.status ?? "queued"}</span>
              </td>
              <td>{d.chunks}</td>
              <td>{d.reason ?? ""}</td>
              <td>
                <button
                  type="button"
                  className="small danger"
                  aria-label={`Delete ${d.source}`}
                  onClick={() => void remove(d.source)}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Search user={user} />
    </section>
  );
}

function Search({ user }: { user: string }) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<KnowledgeHit[]>();
  const [problem, setProblem] = useState<Problem>();

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      const result = await api<{ results: KnowledgeHit[] }>(
        user,
        `/api/knowledge/search?${new URLSearchParams({ q: query, limit: "5" })}`,
        ADMIN,
      );
      setHits(result.results);
      setProblem(undefined);
    } catch (err) {
      setProblem(describeError(err));
    }
  };

  return (
    <div className="search">
      <h3>Search as the agent does</h3>
      <search>
        <form onSubmit={(e) => void onSubmit(e)} className="inline-form">
          <label htmlFor="knowledge-query">Query</label>
          <input id="knowledge-query" value={query} onChange={(e) => setQuery(e.target.value)} />
          <button type="submit" disabled={!query.trim()}>
            Search
          </button>
        </form>
      </search>
      {problem && <ErrorNote error={problem} />}
      {hits?.length === 0 && <p className="hint">No matching chunks.</p>}
      <ol className="cards" aria-label="Search results">
        {hits?.map((h, i) => (
          <li key={`${h.source}-${i}`} className="card" data-testid="search-hit">
            <p className="meta">
              <strong>{h.source}</strong> · score {h.score}
            </p>
            <p className="chunk">{h.content}</p>
          </li>
        ))}
      </ol>
    </div>
  );
}
