import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RegisterForm } from './RegisterForm';

/** The service, as far as this form reaches it: the requests made, answered from `answers`. */
const calls: { url: string; body: unknown }[] = [];
const answers: Response[] = [];
vi.hoisted(() => {
  // openapi-fetch takes the global fetch when the client is made, at import.
  globalThis.fetch = async (input: RequestInfo | URL) => {
    const request = input as Request;
    calls.push({ url: request.url, body: await request.json() });
    return answers.shift()!;
  };
});
const json = (status: number, body: object) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

afterEach(() => {
  cleanup();
  calls.length = 0;
});

const fill = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label, { exact: false }), { target: { value } });

describe('the register form', () => {
  it('shows the 400 refusal in the service\'s words and keeps what was typed', async () => {
    answers.push(
      json(400, { schema: 'svc-chaos-experiment.v1', generatedAt: '2026-11-24T08:00:00.000Z', ok: false, reason: 'slug-taken', human: 'An experiment named latency-search exists already.' }),
    );
    const onRegistered = vi.fn();
    render(<RegisterForm onRegistered={onRegistered} />);
    fill('Slug', 'latency-search');
    fill('Target', 'searchTopics');
    fireEvent.submit(screen.getByRole('form', { name: 'Register a chaos experiment' }));

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('An experiment named latency-search exists already.');
    expect(alert.textContent).toContain('400 slug-taken');
    expect(onRegistered).not.toHaveBeenCalled();
    expect((screen.getByLabelText('Slug', { exact: false }) as HTMLInputElement).value).toBe('latency-search');
    expect(calls).toEqual([{ url: expect.stringMatching(/\/api\/observatory\/v1\/chaos\/experiments$/), body: { slug: 'latency-search', kind: 'synthetic-latency', target: 'searchTopics' } }]);
  });

  it('sends the chosen kind and numbers, hands the registered experiment on and clears the fields', async () => {
    const experiment = { id: 'e1', slug: 'skip-backup', kind: 'cron-skip-one', target: 'backup-nightly', recoverySloSec: 600 };
    answers.push(json(200, { schema: 'svc-chaos-experiment.v1', generatedAt: '2026-11-24T08:00:00.000Z', ok: true, experiment }));
    const onRegistered = vi.fn();
    render(<RegisterForm onRegistered={onRegistered} />);
    fill('Slug', 'skip-backup');
    fireEvent.change(screen.getByLabelText('Kind'), { target: { value: 'cron-skip-one' } });
    expect(screen.getByText('The name of a scheduled job, as Ops → Jobs lists it.')).toBeTruthy();
    fill('Target', 'backup-nightly');
    fill('Recovery SLO (seconds)', '600');
    fireEvent.change(screen.getByLabelText('Severity'), { target: { value: 'minor' } });
    fireEvent.submit(screen.getByRole('form', { name: 'Register a chaos experiment' }));

    await waitFor(() => expect(onRegistered).toHaveBeenCalledWith(experiment));
    expect(calls[0]!.body).toEqual({ slug: 'skip-backup', kind: 'cron-skip-one', target: 'backup-nightly', recoverySloSec: 600, severity: 'minor' });
    expect((screen.getByLabelText('Slug', { exact: false }) as HTMLInputElement).value).toBe('');
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
