import type { ReactNode } from "react";

/** A failed call as the API named it: the code to search for, then the message to read. */
export function ErrorNote({ error, children }: { error: { code: string; message: string }; children?: ReactNode }) {
  return (
    <div className="error" role="alert">
      <code>{error.code}</code> <span>{error.message}</span>
      {children}
    </div>
  );
}
