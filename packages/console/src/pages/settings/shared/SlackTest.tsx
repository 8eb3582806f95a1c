import { useCallback, useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import type { Answer } from './api-types';

type SlackAnswer = Answer<'testSlackWebhook'>;

function outcome(answer: SlackAnswer): string {
  if (answer.ok) return `The webhook accepted the line (HTTP ${answer.status}).`;
  if (answer.status === 0) return 'The webhook could not be reached: check the URL and that the service can reach the internet.';
  return `The webhook answered HTTP ${answer.status}: check that the URL is a current incoming webhook.`;
}

/** Sends one line to a chat webhook (Slack's incoming-webhook format) and says how it answered. */
export function SlackTest() {
  const [webhookUrl, setWebhookUrl] = useState('');
  const [text, setText] = useState('');
  const [answer, setAnswer] = useState<SlackAnswer | null>(null);
  const send = useAction(
    useCallback(
      (url: string, line: string) => unwrap(api.POST('/api/observatory/v1/integrations/slack/test', { body: { webhookUrl: url, ...(line ? { text: line } : {}) } })),
      [],
    ),
  );
  const submit = async () => {
    setAnswer(null);
    setAnswer(await send.execute(webhookUrl.trim(), text.trim()));
  };
  return (
    <>
      <Form label="Test a chat webhook" submitLabel="Send a test line" busy={send.busy} busyLabel="Sending to the webhook…" error={send.error} onSubmit={() => void submit()}>
        <Field label="Webhook URL" hint="A Slack (or compatible) incoming webhook. It is sent once and never stored; the audit log records only its host.">
          <input name="webhookUrl" type="url" value={webhookUrl} onChange={(e) => setWebhookUrl(e.target.value)} required spellCheck={false} autoComplete="off" />
        </Field>
        <Field label="Text (optional)" hint="Default: “Observatory test message”.">
          <input name="text" value={text} onChange={(e) => setText(e.target.value)} maxLength={500} />
        </Field>
      </Form>
      {answer && (
        <p role="status" className={answer.ok ? 'badge ok' : 'badge bad'}>
          {outcome(answer)}
        </p>
      )}
    </>
  );
}
