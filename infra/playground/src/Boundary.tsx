import { Component, type ReactNode } from "react";
import { ErrorNote } from "./ErrorNote";

interface Props {
  /** what the part shows, for the note: "sessions", "memories panel", … */
  name: string;
  children: ReactNode;
}

/**
 * Keeps a part of the page failing on its own. React unmounts the whole page on an error no
 * boundary catches, so one answer of a shape a panel did not expect (a proxy's, a newer API's) or
 * one odd item in a user's data would blank the page on every load. A class, because React offers
 * error boundaries only as classes.
 */
export class Boundary extends Component<Props, { error?: Error }> {
  override state: { error?: Error } = {};

  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    const message = `The ${this.props.name} could not be shown: ${error.message}`;
    return (
      <ErrorNote error={{ code: "render_error", message }}>
        {" "}
        <button type="button" className="secondary" onClick={() => this.setState({ error: undefined })}>
          Try again
        </button>
      </ErrorNote>
    );
  }
}
