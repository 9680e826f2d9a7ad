// M11 on the console and the portal: editing an endpoint's destination settings (an http endpoint's URL, a broker
// endpoint's fields), its event types and description, from the same type description as the new-endpoint form
// (./endpoint-form.ts): non-secret fields prefilled, secret fields write-only (blank keeps the sealed value). The POST
// runs the admin PATCH route's body schema, its O15 checks and the endpoint service's update (the same merge and
// validation as PATCH /admin/v1/webhook-endpoints/{id}, audited as endpoint.update); refusals re-render the form with
// each field's error. Its access is that route's: an admin, or a merchant for its own endpoints (404 for another's).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { Endpoint } from '../../outbound/endpoints.js';
import { destinationTypesJson } from '../admin/destination-types.js';
import { updateBody } from '../admin/endpoint-bodies.js';
import { checkBrokerHosts, checkUrl, destinationRefusal } from '../admin/endpoint-checks.js';
import { ApiError } from '../errors.js';
import { PageError, requireAccess, type ConsoleContext, type ConsoleEnv } from './context.js';
import { destinationFieldsOf, fieldInput } from './endpoint-form.js';
import { csrfField, layout, link, notice } from './html.js';
import type { ConsoleServices } from './services.js';

export const UPDATE = 'PATCH /webhook-endpoints/:id';
type Issue = { field: string; message: string };

async function endpointFor(c: ConsoleContext, s: ConsoleServices): Promise<Endpoint> {
  const principal = requireAccess(c, s.rules, UPDATE);
  const id = c.req.param('id') ?? '';
  if (!/^we_[0-9a-z]+$/.test(id)) throw new PageError(404, `webhook endpoint ${id} does not exist`);
  return s.endpoints.get(principal, id).catch(s.conflict);
}

/** What the form shows: the form as sent after a refusal, else the endpoint's settings (never a secret). */
function valuesOf(e: Endpoint): Record<string, string> {
  const config = e.destinationType === 'http' ? { url: e.url } : (e.destinationConfig ?? {});
  return {
    ...Object.fromEntries(Object.entries(config).map(([k, v]) => [`d_${k}`, v])),
    event_types: e.eventTypes.join(', '),
    description: e.description ?? '',
  };
}

function editPage(c: ConsoleContext, e: Endpoint, values: Record<string, string>, issues: Issue[] = [], message?: string) {
  const view = c.get('view');
  const description = destinationTypesJson().find((d) => d.type === e.destinationType)!;
  return layout(
    view,
    `Edit endpoint ${e.id}`,
    html`${notice(message)}
      ${
        issues.length
          ? html`<ul class="notice error" id="form-errors">
              ${issues.map((i) => html`<li><code>${i.field}</code>: ${i.message}</li>`)}
            </ul>`
          : ''
      }
      <form method="post" action="${view.base}/endpoints/${e.id}/edit" class="panel" id="endpoint-edit-form">
        ${csrfField(view)}
        <label>Event types * <input name="event_types" required value="${values.event_types ?? ''}" /></label>
        <p class="muted">comma-separated: payment.succeeded, payment.* or * (the Event types page lists them)</p>
        <label>Description <input name="description" value="${values.description ?? ''}" /></label>
        <fieldset>
          <legend>${description.label}</legend>
          ${description.fields.map((f) => fieldInput(e.destinationType, f, f.secret ? '' : values[`d_${f.name}`], true))}
        </fieldset>
        <p><button type="submit">Save</button></p>
      </form>
      <p>${link(view, '/endpoints', e.id, `← Endpoint ${e.id}`)}</p>`,
  );
}

/** The admin PATCH body from the form: the same schema, so the same refusals. */
function bodyOf(e: Endpoint, form: Record<string, string>) {
  const { url, ...destination } = destinationFieldsOf(form);
  return {
    ...(e.destinationType === 'http' ? (url !== undefined ? { url } : {}) : { destination }),
    event_types: (form.event_types ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    description: form.description ? form.description : null,
  };
}

export function registerEndpointEdit(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/endpoints/:id/edit', async (c) => {
    const endpoint = await endpointFor(c, s);
    return c.html(editPage(c, endpoint, valuesOf(endpoint)));
  });

  app.post('/endpoints/:id/edit', async (c) => {
    const endpoint = await endpointFor(c, s);
    const principal = c.get('view').principal!;
    const form = c.get('form');
    const parsed = updateBody.safeParse(bodyOf(endpoint, form));
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'form', message: i.message }));
      return c.html(editPage(c, endpoint, form, issues), 400);
    }
    const body = parsed.data;
    try {
      if (body.url !== undefined) await checkUrl(body.url, s.targetPolicy);
      if (body.destination !== undefined) await checkBrokerHosts(body.destination, s.targetPolicy);
      const updated = await s.endpoints
        .update(principal, endpoint.id, {
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.destination !== undefined ? { destinationFields: body.destination } : {}),
          ...(body.event_types !== undefined ? { eventTypes: body.event_types } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
        })
        .catch(s.conflict)
        .catch(destinationRefusal);
      s.logger.info(
        { endpointId: endpoint.id, fields: Object.keys(body.destination ?? {}), keyId: principal.keyId },
        'webhook endpoint settings changed from the console',
      );
      return c.html(editPage(c, updated, valuesOf(updated), [], 'Saved.'));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      const issues = (error.details?.issues as Issue[] | undefined) ?? [{ field: 'form', message: error.message }];
      return c.html(editPage(c, endpoint, form, issues), 400);
    }
  });
}
