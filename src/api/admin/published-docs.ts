// M10: the admin API's OpenAPI 3.1 document with the catalog as its `webhooks` (each event type a POST that ApiPay
// makes to the merchant), and the catalog's AsyncAPI 3.0 document. Both public, like the API description they are:
// they hold the catalog, no data (PUBLIC_ROUTES in ./access.ts).
import { CATALOG } from '../../catalog/catalog.js';
import { asyncApiDocument, openApiWebhooks } from '../../catalog/publish.js';
import type { AdminApp } from './app.js';

type DocumentConfig = Parameters<AdminApp['getOpenAPI31Document']>[0];

export function registerPublishedDocuments(admin: AdminApp, config: DocumentConfig): void {
  const asyncApi = asyncApiDocument(CATALOG);
  const { webhooks, schemas } = openApiWebhooks(CATALOG);
  admin.get('/openapi.json', (c) => {
    const document = admin.getOpenAPI31Document(config);
    return c.json({
      ...document,
      webhooks,
      components: { ...document.components, schemas: { ...document.components?.schemas, ...schemas } },
    });
  });
  admin.get('/asyncapi.json', (c) => c.json(asyncApi));
}
