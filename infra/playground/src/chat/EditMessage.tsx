import { type FormEvent, useState } from "react";

/** A sent message, opened for editing in place: saving sends the new text as a branch from before it. */
export function EditMessage({
  text,
  onSave,
  onCancel,
}: {
  text: string;
  onSave: (text: string) => void;
  onCancel: () => void;
}) {
  const [value, setValue] = useState(text);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (value.trim()) onSave(value);
  };
  return (
    <form className="edit-message" onSubmit={onSubmit}>
      <label htmlFor="edit-message">Edit message</label>
      <textarea
        id="edit-message"
        // biome-ignore lint/a11y/noAutofocus: the field the Edit button just opened
        autoFocus
        rows={2}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && onCancel()}
      />
      <div className="composer-actions">
        <button type="submit" disabled={!value.trim()}>
          Save and send
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
