import { useState } from "react";
import { api, describeError, type Memory, path } from "./api";
import { ErrorNote } from "./ErrorNote";
import { usePolling } from "./usePolling";

/**
 * What the agent remembers about the user (`GET /api/memories`), newest first. Extraction runs on a
 * queue after each reply, so the list is polled every two seconds: a new memory appears without a
 * reload. Filters go to the API (category, tag); the category choices are those seen so far.
 */
export function Memories({ user }: { user: string }) {
  const [category, setCategory] = useState("");
  const [tag, setTag] = useState("");
  const [showSuperseded, setShowSuperseded] = useState(false);
  const [seen, setSeen] = useState<string[]>([]);
  const [deleteError, setDeleteError] = useState<{ code: string; message: string }>();
  const query = new URLSearchParams({
    limit: "200",
    ...(category ? { category } : {}),
    ...(tag ? { tag } : {}),
    ...(showSuperseded ? { superseded: "1" } : {}),
  });
  const polled = usePolling(
    async () => {
      const { memories } = await api<{ memories: Memory[] }>(user, `/api/memories?${query}`);
      const categories = memories.map((m) => m.category).filter((c): c is string => !!c);
      setSeen((prev) => [...new Set([...prev, ...categories])].sort());
      return memories;
    },
    2000,
    `${user}?${query}`,
  );

  const remove = async (memory: Memory) => {
    try {
      await api(user, path`/api/memories/${memory.id}`, { method: "DELETE" });
      setDeleteError(undefined);
      await polled.refresh();
    } catch (err) {
      setDeleteError(describeError(err));
    }
  };

  return (
    <section aria-labelledby="memories-heading">
      <h2 id="memories-heading">Memories of {user}</h2>
      <div className="filters">
        <label htmlFor="memory-category">Category</label>
        <select id="memory-category" value={category} onChange={(e) => setCategory(e.target.value)}>
          <option value="">all</option>
          {seen.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
        <label htmlFor="memory-tag">Tag</label>
        <input id="memory-tag" value={tag} onChange={(e) => setTag(e.target.value.trim())} placeholder="any" />
        <label>
          <input type="checkbox" checked={showSuperseded} onChange={(e) => setShowSuperseded(e.target.checked)} />
          Show superseded
        </label>
      </div>
      {polled.error && <ErrorNote error={polled.error} />}
      {deleteError && <ErrorNote error={deleteError} />}
      {polled.data?.length === 0 && (
        <p className="hint">
          Nothing remembered yet. Tell the agent “I prefer aisle seats”; it appears here within seconds.
        </p>
      )}
      <ul className="cards" aria-label="Memories">
        {polled.data?.map((m) => (
          <li key={m.id} className={m.superseded_by ? "card superseded" : "card"} data-testid="memory">
            <p>{m.content}</p>
            {m.superseded_by && <p className="meta">superseded by a newer memory</p>}
            <p className="meta">
              {m.category && <span className="badge">{m.category}</span>}
              {m.tags.map((t) => (
                <span key={t} className="badge tag">
                  #{t}
                </span>
              ))}{" "}
              {new Date(m.created_at).toLocaleString()}
            </p>
            <button
              type="button"
              className="small danger"
              aria-label={`Delete memory: ${m.content}`}
              onClick={() => void remove(m)}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
