// M11 on the console and the portal: the endpoint form, generated from each destination type's one description
// (src/outbound/destinations/, the same list GET /admin/v1/destination-types serves): a type selector, the fields of
// the chosen type, secret fields as password inputs that are never refilled. The POST runs the admin route's body
// schema and O15 checks, then the endpoint service (audited); refusals re-render the form with each field's error.
// A merchant registers endpoints of its own account; staff admins name the account.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { z } from 'zod';
import { scopeOf, type Principal } from '../../access/roles.js';
import { DESTINATIONS, validateDestination } from '../../outbound/destinations/index.js';
import { DESTINATION_TYPES, type DestinationType } from '../../shared/outbound.js';
import { destinationTypesJson } from '../admin/destination-types.js';
import { createBody } from '../admin/endpoint-bodies.js';
import { checkBrokerHosts, checkUrl, destinationRefusal, ownAccount } from '../admin/endpoint-checks.js';
import { ApiError } from '../errors.js';
import { requireAccess, type ConsoleContext, type ConsoleEnv } from './context.js';
import { csrfField, layout, link, notice } from './html.js';
import type { ConsoleServices } from './services.js';

const CREATE = 'POST /webhook-endpoints';
type Issue = { field: string; message: string };

const typeOf = (text: string | undefined): DestinationType =>
  (DESTINATION_TYPES as readonly string[]).includes(text ?? '') ? (text as DestinationType) : 'http';

/** A closed set of values (a zod enum, or a true/false field) is a select; anything else a text or password input. */
function choicesOf(type: DestinationType, name: string): readonly string[] | undefined {
  if (type === 'http') return undefined;
  const check = DESTINATIONS[type].fields.find((f) => f.name === name)?.check;
  return check instanceof z.ZodEnum ? (check.options as string[]) : undefined;
}

/** One field of a type's description as a form control; `editing` (M11's edit form): a secret is never required, blank keeps it. */
export function fieldInput(
  type: DestinationType,
  f: ReturnType<typeof destinationTypesJson>[number]['fields'][number],
  value = '',
  editing = false,
) {
  const id = `field-${f.name}`;
  const choices = choicesOf(type, f.name) ?? (f.default === 'true' || f.default === 'false' ? ['false', 'true'] : undefined);
  const secretHint = editing ? html`placeholder="leave blank to keep"` : f.required ? 'required' : '';
  const control = f.secret
    ? html`<input id="${id}" name="d_${f.name}" type="password" autocomplete="new-password" ${secretHint} />`
    : choices
      ? html`<select id="${id}" name="d_${f.name}">
          ${choices.map((o) => html`<option ${o === (value || f.default) ? 'selected' : ''}>${o}</option>`)}
        </select>`
      : html`<input
          id="${id}"
          name="d_${f.name}"
          value="${value}"
          placeholder="${f.example ?? f.default ?? ''}"
          ${f.required ? 'required' : ''}
        />`;
  return html`<label for="${id}">${f.label}${f.required ? ' *' : ''} ${control}</label>
    <p class="muted">
      ${f.help}${f.secret ? ` (secret: sealed, never shown again${editing ? '; leave blank to keep' : ''})` : ''}
    </p>`;
}

function formPage(c: ConsoleContext, type: DestinationType, values: Record<string, string> = {}, issues: Issue[] = []) {
  const view = c.get('view');
  const description = destinationTypesJson().find((d) => d.type === type)!;
  return layout(
    view,
    'New endpoint',
    html`${
        issues.length
          ? html`<ul class="notice error" id="form-errors">
              ${issues.map((i) => html`<li><code>${i.field}</code>: ${i.message}</li>`)}
            </ul>`
          : ''
      }
      <form method="get" action="${view.base}/endpoints/new" class="search">
        <label
          >Destination type
          <select name="type" id="destination-type">
            ${destinationTypesJson().map((d) => html`<option value="${d.type}" ${d.type === type ? 'selected' : ''}>${d.label}</option>`)}
          </select></label
        ><button type="submit">Choose</button>
      </form>
      <form method="post" action="${view.base}/endpoints/new" class="panel" id="endpoint-form">
        ${csrfField(view)}<input type="hidden" name="type" value="${type}" />
        <p class="muted">${description.help}</p>
        ${
          view.surface === 'console'
            ? html`<label
                >Merchant account * <input name="merchant_account" required value="${values.merchant_account ?? ''}"
              /></label>`
            : ''
        }
        <label>Event types * <input name="event_types" required value="${values.event_types ?? '*'}" /></label>
        <p class="muted">comma-separated: payment.succeeded, payment.* or * (the Event types page lists them)</p>
        <label>Description <input name="description" value="${values.description ?? ''}" /></label>
        <label><input type="checkbox" name="livemode" ${values.livemode === 'on' ? 'checked' : ''} /> Live mode</label>
        <fieldset>
          <legend>${description.label}</legend>
          ${description.fields.map((f) => fieldInput(type, f, f.secret ? '' : values[`d_${f.name}`]))}
        </fieldset>
        <p><button type="submit">Create endpoint</button></p>
      </form>`,
  );
}

/** The admin API's create body from the form: the same schema, so the same refusals. */
function bodyOf(principal: Principal, surface: string, form: Record<string, string>, type: DestinationType) {
  const { url, ...destination } = destinationFieldsOf(form);
  return {
    merchant_account: surface === 'portal' ? (scopeOf(principal) ?? form.merchant_account ?? '') : (form.merchant_account ?? ''),
    ...(type === 'http' ? { url } : { type, destination }),
    event_types: (form.event_types ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    livemode: form.livemode === 'on',
    ...(form.description ? { description: form.description } : {}),
  };
}

/** The d_<field> inputs of a form that were filled in, by field name (a blank one is left out: kept, or the default). */
export function destinationFieldsOf(form: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(form)
      .filter(([k, v]) => k.startsWith('d_') && v !== '')
      .map(([k, v]) => [k.slice(2), v]),
  );
}

export function registerEndpointForm(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/endpoints/new', (c) => {
    requireAccess(c, s.rules, CREATE);
    return c.html(formPage(c, typeOf(c.req.query('type'))));
  });

  app.post('/endpoints/new', async (c) => {
    const principal = requireAccess(c, s.rules, CREATE);
    const form = c.get('form');
    const type = typeOf(form.type);
    const parsed = createBody.safeParse(bodyOf(principal, c.get('view').surface, form, type));
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'form', message: i.message }));
      return c.html(formPage(c, type, form, issues), 400);
    }
    const body = parsed.data;
    try {
      ownAccount(scopeOf(principal), body.merchant_account);
      if (type === 'http') await checkUrl(body.url!, s.targetPolicy);
      else {
        // Every field's own check first, so a bad port is named as such rather than as an unreadable host.
        await Promise.resolve()
          .then(() => validateDestination(type, body.destination ?? {}))
          .catch(destinationRefusal);
        await checkBrokerHosts(body.destination, s.targetPolicy);
      }
      const { endpoint, secret } = await s.endpoints
        .create(principal, {
          merchantAccount: body.merchant_account,
          ...(type === 'http' ? { url: body.url! } : { destination: { type, fields: body.destination ?? {} } }),
          eventTypes: body.event_types,
          livemode: body.livemode,
          description: body.description ?? null,
        })
        .catch(destinationRefusal);
      s.logger.info({ endpointId: endpoint.id, type, keyId: principal.keyId }, 'webhook endpoint created from the console');
      const view = c.get('view');
      return c.html(
        layout(
          view,
          'Endpoint created',
          html`${notice(`Endpoint ${endpoint.id} created.`)}
            <div class="panel">
              <p>Signing secret, shown this once (it signs every delivery; keep it where your consumer verifies):</p>
              <pre id="new-secret">${secret}</pre>
            </div>
            <p>${link(view, '/endpoints', endpoint.id, `Endpoint ${endpoint.id} →`)}</p>`,
        ),
        201,
      );
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      const issues = (error.details?.issues as Issue[] | undefined) ?? [{ field: 'form', message: error.message }];
      return c.html(formPage(c, type, form, issues), 400);
    }
  });
}
