import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionProvider, useSession } from '../../../auth/session';
import type { Experiment } from './api';
import { ExperimentActions } from './ExperimentActions';

/** Who is signed in: the session asks `{v1}/account` once; the scopes are this test's. */
const signedIn = { scopes: ['read:empire', 'write:alerts'] };
vi.hoisted(() => {
  globalThis.fetch = async () =>
    new Response(JSON.stringify({ schema: 'svc-account.v1', userId: 'u1', username: 'ops', via: 'bearer', scopes: signedIn.scopes }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
});

const experiment = (status: Experiment['status']): Experiment => ({
  id: 'e1',
  slug: 'latency-search',
  kind: 'synthetic-latency',
  target: 'searchTopics',
  description: '',
  blastRadius: 'http',
  recoverySloSec: 30,
  cooldownMinutes: 60,
  severity: 'minor',
  status,
  ownerUserId: null,
  createdAt: '2026-11-24T08:00:00.000Z',
  updatedAt: '2026-11-24T08:00:00.000Z',
});

/** The signed-in operator's name, once the session knows it: the point after which the buttons are settled. */
function Who() {
  const { account } = useSession();
  return <span>{account ? `signed in as ${account.username}` : ''}</span>;
}

function show(status: Experiment['status'], props: { busy?: boolean; working?: boolean } = {}) {
  const onMove = vi.fn();
  const onRun = vi.fn();
  render(
    <SessionProvider>
      <Who />
      <ExperimentActions experiment={experiment(status)} busy={props.busy ?? false} working={props.working ?? false} onMove={onMove} onRun={onRun} />
    </SessionProvider>,
  );
  return { onMove, onRun };
}

afterEach(() => {
  cleanup();
  signedIn.scopes = ['read:empire', 'write:alerts'];
});

describe('an experiment\'s buttons', () => {
  it('offer run now, pause and retire while it is active; retire only once asked twice', async () => {
    const { onMove, onRun } = show('active');
    fireEvent.click(await screen.findByRole('button', { name: 'Run latency-search now' }));
    expect(onRun).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByRole('button', { name: 'Pause latency-search' }));
    expect(onMove).toHaveBeenLastCalledWith(expect.objectContaining({ id: 'e1' }), 'pause');
    expect(screen.queryByRole('button', { name: 'Resume latency-search' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Retire latency-search' }));
    expect(onMove).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByRole('button', { name: 'Retire' }));
    expect(onMove).toHaveBeenLastCalledWith(expect.objectContaining({ id: 'e1' }), 'retire');
  });

  it('offer resume and retire, and no run, while it is paused', async () => {
    const { onMove } = show('paused');
    fireEvent.click(await screen.findByRole('button', { name: 'Resume latency-search' }));
    expect(onMove).toHaveBeenLastCalledWith(expect.objectContaining({ id: 'e1' }), 'resume');
    expect(screen.queryByRole('button', { name: 'Run latency-search now' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Pause latency-search' })).toBeNull();
  });

  it('offer nothing once it is retired', async () => {
    show('retired');
    await screen.findByText('signed in as ops');
    expect(screen.queryAllByRole('button')).toEqual([]);
    expect(screen.getByText('retired')).toBeTruthy();
  });

  it('wait while another action runs, and show progress on the experiment being worked on', async () => {
    show('active', { busy: true });
    expect((await screen.findByRole('button', { name: 'Run latency-search now' })).hasAttribute('disabled')).toBe(true);
    cleanup();
    show('active', { busy: true, working: true });
    expect(screen.getByRole('status').textContent).toContain('Working on latency-search');
  });

  it('are not offered to an operator who may only read', async () => {
    signedIn.scopes = ['read:empire'];
    show('active');
    await screen.findByText('signed in as ops');
    expect(screen.queryAllByRole('button')).toEqual([]);
  });
});
