import { Component, type ReactNode } from 'react';

/**
 * A page that throws while drawing shows what happened and how to get back, instead of leaving
 * the frame blank; moving to another page clears it (`resetKey`).
 */
export class PageErrorBoundary extends Component<{ resetKey: string; children: ReactNode }, { failure: string | null; key: string }> {
  override state = { failure: null as string | null, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown) {
    return { failure: error instanceof Error ? error.message : String(error) };
  }

  static getDerivedStateFromProps(props: { resetKey: string }, state: { failure: string | null; key: string }) {
    return props.resetKey === state.key ? null : { failure: null, key: props.resetKey };
  }

  override render() {
    if (this.state.failure === null) return this.props.children;
    return (
      <section className="error-note" role="alert">
        <h1>This page failed to draw</h1>
        <p>{this.state.failure}</p>
        <p>Reload the page; if it fails again, pick another page and report this message with the address.</p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </section>
    );
  }
}
