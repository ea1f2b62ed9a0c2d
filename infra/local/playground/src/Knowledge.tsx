import { type DragEvent, type FormEvent, useState } from "react";
import { api, describeError, type KnowledgeDocument, type KnowledgeHit } from "./api";
import { ErrorNote } from "./ErrorNote";
import { usePolling } from "./usePolling";

type Problem = { code: string; message: string };

/**
 * The knowledge base as an admin sees it, through the local stack's admin routes
 * (infra/local/knowledge-admin.ts): documents with their status, chunks and skip or failure reason;
 * upload (a file put in the drop folder is ingested as an S3 upload is) and delete; and a search
 * that runs search_knowledge_base itself, so the chunks and scores are the agent's.
 */
export function Knowledge({ user }: { user: string }) {
  const [problem, setProblem] = useState<Problem>();
  const [dragging, setDragging] = useState(false);
  const docs = usePolling(
    () => api<{ documents: KnowledgeDocument[] }>(user, "/_local/knowledge/documents").then((r) => r.documents),
    2000,
    "documents",
  );

  const upload = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      try {
        await api(user, `/_local/knowledge/documents/${encodeURIComponent(file.name)}`, {
          method: "PUT",
          headers: { "content-type": "application/octet-stream" },
          body: file,
        });
        setProblem(undefined);
      } catch (err) {
        setProblem(describeError(err));
      }
    }
    await docs.refresh();
  };

  const remove = async (source: string) => {
    try {
      await api(user, `/_local/knowledge/documents/${encodeURIComponent(source)}`, { method: "DELETE" });
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
        <caption>Documents</caption>
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
          {docs.data?.map((d) => (
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
      const result = await api<{ results: KnowledgeHit[] }>(user, "/_local/knowledge/search", {
        method: "POST",
        body: JSON.stringify({ query, limit: 5 }),
      });
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
