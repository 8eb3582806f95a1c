import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../audit/service.ts';
import { badRequest } from '../errors.ts';
import { defineEndpoint, type Endpoint, V1 } from '../http/registry.ts';
import { OutboundRefused } from './safe-fetch.ts';
import type { Outbound } from './service.ts';

export const DEFAULT_SLACK_TEST_TEXT = 'Observatory test message';

export function outboundEndpoints(outbound: Outbound, audit: AuditLog): Endpoint[] {
  return [
    defineEndpoint({
      id: 'testSlackWebhook',
      title: 'Send a test line to a chat webhook',
      description:
        'Posts one line (`{"text": …}`, Slack\'s incoming-webhook format) to `webhookUrl`, once, and answers with the webhook\'s HTTP status. ' +
        'The URL is forwarded and never stored or logged; the audit row records only its host. ' +
        'A URL that is not http(s), uses a port outside OBSERVATORY_OUTBOUND_ALLOWED_PORTS (default 80 and 443), or points at a loopback, private, link-local or otherwise non-public address answers 400 `outbound-refused` (a name resolving to such an address is refused without naming the address). ' +
        'A webhook that cannot be reached answers 200 with `ok` false and `status` 0; redirects are not followed.',
      method: 'POST',
      path: `${V1}/integrations/slack/test`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: 'integrations',
      kind: 'write',
      uiPath: '/settings/integrations',
      body: Type.Object(
        {
          webhookUrl: Type.String({ format: 'uri', maxLength: 2048, description: 'The chat-service incoming webhook URL.' }),
          text: Type.Optional(
            Type.String({ minLength: 1, maxLength: 500, description: `The line to send; default "${DEFAULT_SLACK_TEST_TEXT}".` }),
          ),
        },
        {
          additionalProperties: false,
          examples: [{ webhookUrl: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', text: 'Observatory test message' }],
        },
      ),
      response: {
        schemaId: 'svc-observatory-slack-test.v1',
        fields: {
          ok: Type.Boolean({ description: 'True when the webhook answered 2xx.' }),
          status: Type.Integer({ description: 'The webhook\'s HTTP status; 0 when it could not be reached.' }),
        },
      },
      example: { schema: 'svc-observatory-slack-test.v1', generatedAt: '2026-11-23T08:00:00.000Z', ok: true, status: 200 },
      handler: async ({ body, principal, requestId }) => {
        let result;
        try {
          result = await outbound.sendSlackTest(body.webhookUrl, body.text ?? DEFAULT_SLACK_TEST_TEXT);
        } catch (error) {
          if (error instanceof OutboundRefused) {
            throw badRequest('outbound-refused', `The webhook URL was refused: ${error.reason}.`, { field: 'body.webhookUrl' });
          }
          throw error;
        }
        await outbound.recordSlackTest(audit, {
          result,
          actor: principal ? { userId: principal.userId, username: principal.username } : null,
          requestId,
        });
        return { ok: result.ok, status: result.status };
      },
    }),
  ];
}
