import { type FormEvent, useEffect, useRef, useState } from "react";
import { api, describeError } from "./api";
import { ErrorNote } from "./ErrorNote";
import { usePolling } from "./usePolling";

/** One count of GET /api/me/usage: the deployment's, or a project's with quotas of its own (functions/me.ts). */
interface UsageCounts {
  turns: number;
  tokens: number;
  turns_this_minute: number;
  limits: { turns_per_minute: number | null; tokens_per_day: number | null };
}

interface Usage extends UsageCounts {
  day: string;
  projects: Record<string, UsageCounts>;
  /** false when no quota is set: turns are then not counted at all */
  counted: boolean;
}

/** What DELETE /api/me answers: the sessions and assistants, and each Supabase table's rows when there is one. */
type ErasureReport = { erased: true } & Record<string, number | boolean>;

/**
 * The user's own data (docs/user-data.md): today's usage against the deployment's quotas, the
 * export of everything held about them, and the erasure of all of it. Erasing asks for the user id
 * to be typed, not a click on "OK": it cannot be undone, and a dialog's default button is easily hit.
 */
export function Account({ user, onErased }: { user: string; onErased: () => void }) {
  // Polled like the other panels: a turn answered in the chat meanwhile shows up without a reload.
  const usage = usePolling(() => api<Usage>(user, "/api/me/usage"), 5000, user);
  const [error, setError] = useState<{ code: string; message: string }>();
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);

  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    setError(undefined);
    setStatus("");
    try {
      setStatus(await what());
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const download = () =>
    act(async () => {
      const exported = await api<unknown>(user, "/api/me/export");
      saveJson(exported, `export-${user}.json`);
      return `Export of ${user} downloaded.`;
    });

  const erase = () =>
    act(async () => {
      const report = await api<ErasureReport>(user, "/api/me", { method: "DELETE" });
      setConfirming(false);
      onErased();
      await usage.refresh();
      return `Erased everything of ${user}: ${describeErasure(report)}.`;
    });

  return (
    <section aria-labelledby="account-heading" className="account">
      <h2 id="account-heading">Account of {user}</h2>

      <h3 id="usage-heading">Usage today</h3>
      {usage.error && <ErrorNote error={usage.error} />}
      {usage.data && <UsageTable usage={usage.data} />}

      <h3 id="export-heading">Export</h3>
      <p className="hint">Everything held about you, as one JSON file: sessions, messages, traces, files, memories.</p>
      <button type="button" className="secondary" disabled={busy} onClick={() => void download()}>
        Download export
      </button>

      <h3 id="erase-heading">Erase</h3>
      <p className="hint">
        Erases every session, message, trace, file and memory of yours, in every store. It cannot be undone. Today's
        usage counts stay until they expire, so erasing does not reset your limits.
      </p>
      {confirming ? (
        <EraseConfirmation
          user={user}
          busy={busy}
          onConfirm={() => void erase()}
          onCancel={() => setConfirming(false)}
        />
      ) : (
        <button type="button" className="danger secondary" disabled={busy} onClick={() => setConfirming(true)}>
          Erase all my data
        </button>
      )}

      {error && <ErrorNote error={error} />}
      {/* Always in the page, so a screen reader announces what is put in it. */}
      <p role="status">{status}</p>
    </section>
  );
}

function UsageTable({ usage }: { usage: Usage }) {
  const rows: Array<[string, UsageCounts]> = [
    ["All sessions", usage],
    ...Object.entries(usage.projects).map(([project, counts]): [string, UsageCounts] => [`Project ${project}`, counts]),
  ];
  return (
    <>
      {!usage.counted && (
        <p className="hint">No quota is set in this deployment, so turns and tokens are not counted.</p>
      )}
      <table className="documents" data-testid="usage">
        <caption>UTC day {usage.day}</caption>
        <thead>
          <tr>
            <th scope="col">Scope</th>
            <th scope="col">Turns today</th>
            <th scope="col">Turns this minute</th>
            <th scope="col">Tokens today</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, counts]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>{counts.turns}</td>
              <td>{againstLimit(counts.turns_this_minute, counts.limits.turns_per_minute, "a minute")}</td>
              <td>{againstLimit(counts.tokens, counts.limits.tokens_per_day, "a day")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

const againstLimit = (used: number, limit: number | null, per: string) =>
  limit === null ? `${used} (no limit)` : `${used} of ${limit} ${per}`;

/** The erasure's counts, as one line ("sessions: 2, transcripts: 4, ..."). */
function describeErasure(report: ErasureReport): string {
  return Object.entries(report)
    .filter((entry): entry is [string, number] => typeof entry[1] === "number")
    .map(([what, n]) => `${what.replaceAll("_", " ")}: ${n}`)
    .join(", ");
}

/** The erasure goes ahead only once the user id is typed; Escape or Cancel leaves everything as it was. */
function EraseConfirmation({
  user,
  busy,
  onConfirm,
  onCancel,
}: {
  user: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const [typed, setTyped] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (typed === user) onConfirm();
  };
  return (
    <form className="inline-form" aria-labelledby="erase-heading" onSubmit={onSubmit}>
      <label htmlFor="erase-confirm">
        Type <strong>{user}</strong> to confirm
      </label>
      <input
        id="erase-confirm"
        ref={input}
        value={typed}
        autoComplete="off"
        onChange={(e) => setTyped(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") onCancel();
        }}
      />
      <button type="submit" className="danger secondary" disabled={busy || typed !== user}>
        Erase everything
      </button>
      <button type="button" className="secondary" disabled={busy} onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

/** A JSON document saved as a file: a Blob's object URL on an `<a download>`, which the CSP allows (no navigation). */
function saveJson(value: unknown, filename: string): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.click();
  // Revoked after the click has handed the URL to the download, not before.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
