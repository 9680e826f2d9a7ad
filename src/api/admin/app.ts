// The type the admin resource modules register their routes on (apart from index.ts, so they do not import it).
import type { OpenAPIHono } from '@hono/zod-openapi';

export type AdminApp = OpenAPIHono;
