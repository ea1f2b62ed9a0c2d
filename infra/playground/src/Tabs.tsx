import { type KeyboardEvent, useRef } from "react";
import type { PanelId } from "./url-state";

const TITLES: Record<PanelId, string> = {
  chat: "Chat",
  trace: "Trace",
  memories: "Memories",
  knowledge: "Knowledge",
  account: "Account",
  intercom: "Intercom",
};

export const tabId = (panel: PanelId) => `tab-${panel}`;
export const panelId = (panel: PanelId) => `panel-${panel}`;

/**
 * The panels as an ARIA tab list: Tab reaches the selected tab, the arrow keys (and Home, End) move
 * between tabs, as the WAI-ARIA authoring practices describe.
 */
export function Tabs({
  panels,
  current,
  onChange,
}: {
  panels: readonly PanelId[];
  current: PanelId;
  onChange: (panel: PanelId) => void;
}) {
  const refs = useRef<Partial<Record<PanelId, HTMLButtonElement | null>>>({});
  const onKeyDown = (event: KeyboardEvent) => {
    const i = panels.indexOf(current);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: panels.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const panel = panels[(next + panels.length) % panels.length]!;
    onChange(panel);
    refs.current[panel]?.focus();
  };
  return (
    <div className="tabs" role="tablist" aria-label="Panels" onKeyDown={onKeyDown}>
      {panels.map((panel) => (
        <button
          key={panel}
          ref={(el) => {
            refs.current[panel] = el;
          }}
          type="button"
          role="tab"
          id={tabId(panel)}
          aria-selected={panel === current}
          aria-controls={panelId(panel)}
          tabIndex={panel === current ? 0 : -1}
          onClick={() => onChange(panel)}
        >
          {TITLES[panel]}
        </button>
      ))}
    </div>
  );
}
