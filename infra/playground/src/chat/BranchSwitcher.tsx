/**
 * The versions of a message a thread has (an edit or a regenerate branches the thread from the
 * checkpoint before it), and which one is shown: useStream's branch metadata and setBranch.
 */
export function BranchSwitcher({
  branch,
  options,
  onSelect,
  disabled,
}: {
  branch: string | undefined;
  options: string[] | undefined;
  onSelect: (branch: string) => void;
  disabled: boolean;
}) {
  if (!options || options.length < 2 || branch === undefined) return null;
  const index = options.indexOf(branch);
  return (
    <fieldset className="branch-switcher">
      <legend className="visually-hidden">Versions of this message</legend>
      <button
        type="button"
        className="small"
        aria-label="Previous version"
        disabled={disabled || index <= 0}
        onClick={() => onSelect(options[index - 1]!)}
      >
        ‹
      </button>
      <span data-testid="branch-position">
        {index + 1} / {options.length}
      </span>
      <button
        type="button"
        className="small"
        aria-label="Next version"
        disabled={disabled || index >= options.length - 1}
        onClick={() => onSelect(options[index + 1]!)}
      >
        ›
      </button>
    </fieldset>
  );
}
